-- webhook_orgs_from_task: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0013_webhooks (its live text).
CREATE OR REPLACE FUNCTION webhook_orgs_from_task()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM webhook_orgs WHERE org_id = NEW.org_id) THEN
        INSERT INTO webhook_orgs (org_id) VALUES (NEW.org_id) ON CONFLICT DO NOTHING;
      END IF;
      RETURN NULL;
    END $function$
