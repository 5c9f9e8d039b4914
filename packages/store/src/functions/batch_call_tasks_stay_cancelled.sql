-- batch_call_tasks_stay_cancelled: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migrations: defined in 0014, live text from 0015_calls_hot_finish.
CREATE OR REPLACE FUNCTION batch_call_tasks_stay_cancelled()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF EXISTS (SELECT 1 FROM batch_calls b WHERE b.batch_call_id = NEW.batch_call_id AND b.status = 'cancelled') THEN
        NEW.state := 'cancelled';
        NEW.state_reason := 'batch_cancelled';
        NEW.lease_owner := NULL;
        NEW.lease_expires_at := NULL;
        UPDATE calls c SET call_status = 'not_connected', disconnection_reason = 'manual_stopped'
        WHERE c.org_id = NEW.org_id AND c.call_id = NEW.call_id AND c.call_status = 'registered';
      END IF;
      RETURN NEW;
    END $function$
