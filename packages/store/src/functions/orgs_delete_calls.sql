-- orgs_delete_calls: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0007_scheduler (its live text).
CREATE OR REPLACE FUNCTION orgs_delete_calls()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      DELETE FROM calls WHERE org_id IN (SELECT org_id FROM gone);
      RETURN NULL;
    END $function$
