-- batch_calls_finished: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0014_batch_progress (its live text).
CREATE OR REPLACE FUNCTION batch_calls_finished()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      NEW.finished_timestamp := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
      RETURN NEW;
    END $function$
