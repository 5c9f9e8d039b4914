-- contact_counts_insert: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0003_contacts (its live text).
CREATE OR REPLACE FUNCTION contact_counts_insert()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      INSERT INTO contact_counts (org_id, contacts)
        SELECT org_id, count(*) FROM inserted GROUP BY org_id ORDER BY org_id
        ON CONFLICT (org_id) DO UPDATE SET contacts = contact_counts.contacts + excluded.contacts;
      RETURN NULL;
    END $function$
