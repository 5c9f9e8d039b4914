-- contact_counts_delete: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0003_contacts (its live text).
CREATE OR REPLACE FUNCTION contact_counts_delete()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      UPDATE contact_counts c SET contacts = c.contacts - d.n
        FROM (SELECT org_id, count(*) AS n FROM deleted GROUP BY org_id ORDER BY org_id) d
        WHERE c.org_id = d.org_id;
      RETURN NULL;
    END $function$
