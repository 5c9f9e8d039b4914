-- contact_search_truncate: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0027_contact_search (its live text).
CREATE OR REPLACE FUNCTION contact_search_truncate()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      TRUNCATE contact_search;
      RETURN NULL;
    END $function$
