-- contacts_keep_org: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0003_contacts (its live text).
CREATE OR REPLACE FUNCTION contacts_keep_org()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      RAISE EXCEPTION 'a contact cannot move to another org' USING ERRCODE = 'check_violation';
    END $function$
