-- orgs_delete_contacts: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0003_contacts (its live text).
CREATE OR REPLACE FUNCTION orgs_delete_contacts()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      DELETE FROM contacts WHERE org_id IN (SELECT org_id FROM gone);
      RETURN NULL;
    END $function$
