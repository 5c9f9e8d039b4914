-- contact_counts_truncate: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0003_contacts (its live text).
CREATE OR REPLACE FUNCTION contact_counts_truncate()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      DELETE FROM contact_counts;
      RETURN NULL;
    END $function$
