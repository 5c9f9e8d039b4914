-- batch_call_tasks_cascade: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0004_batch_calls (its live text).
CREATE OR REPLACE FUNCTION batch_call_tasks_cascade()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      DELETE FROM batch_call_tasks WHERE batch_call_id = OLD.batch_call_id;
      RETURN OLD;
    END
    $function$
