-- orgs_truncate_contacts: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0003_contacts (its live text).
CREATE OR REPLACE FUNCTION orgs_truncate_contacts()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      TRUNCATE contacts;
      RETURN NULL;
    END $function$
