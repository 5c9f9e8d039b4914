-- contact_search_update: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0027_contact_search (its live text).
CREATE OR REPLACE FUNCTION contact_search_update()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      UPDATE contact_search SET contact_id = NEW.contact_id, search_text = NEW.search_text
        WHERE org_id = OLD.org_id AND contact_id = OLD.contact_id;
      RETURN NULL;
    END $function$
