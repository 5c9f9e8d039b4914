-- batch_calls_delete_legal_groups: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0022_legal_groups (its live text).
CREATE OR REPLACE FUNCTION batch_calls_delete_legal_groups()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      DELETE FROM batch_call_legal_groups g WHERE g.batch_call_id = OLD.batch_call_id;
      RETURN OLD;
    END $function$
