-- contact_search_insert: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0027_contact_search (its live text).
CREATE OR REPLACE FUNCTION contact_search_insert()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      INSERT INTO contact_search (org_id, contact_id, search_text)
        SELECT org_id, contact_id, search_text FROM inserted;
      RETURN NULL;
    END $function$
