-- contacts_search_text: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0003_contacts (its live text).
CREATE OR REPLACE FUNCTION contacts_search_text()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      NEW.search_text := lower(concat_ws(chr(31), NEW.phone_number, NEW.first_name, NEW.last_name,
        NEW.external_id, (SELECT string_agg(value, chr(31)) FROM jsonb_each_text(NEW.custom_fields))));
      RETURN NEW;
    END $function$
