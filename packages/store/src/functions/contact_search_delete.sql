-- contact_search_delete: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0027_contact_search (its live text).
CREATE OR REPLACE FUNCTION contact_search_delete()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      DELETE FROM contact_search s USING deleted d WHERE s.org_id = d.org_id AND s.contact_id = d.contact_id;
      RETURN NULL;
    END $function$
