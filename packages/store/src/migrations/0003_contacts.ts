/**
 * Contacts (spec, Contact; list-contacts) and the per-org contact count that makes the unfiltered
 * `total` of list-contacts O(1) and exact (postgres-floor.md: a live `count(*)` of a 1M-contact org
 * costs 60-250 ms).
 *
 * Invariants kept by the database itself, whoever writes (repository, seed, import, scheduler):
 * - one contact per phone number per org (`contacts_org_phone_key`);
 * - `contact_counts.contacts` equals the org's number of contact rows, in every snapshot: statement
 *   triggers with transition tables adjust it in the writing transaction, so bulk loads pay once per
 *   statement, not once per row;
 * - a contact belongs to an existing org: inserting one for an unknown org fails on the foreign key
 *   of `contact_counts` (checked once per statement and org, not per row), and deleting (or
 *   truncating) orgs deletes their contacts;
 * - a contact never moves to another org (the count would no longer match);
 * - `search_text` is the lower-cased phone number, first name, last name, external id and custom
 *   field values joined by U+001F. Queries have control characters stripped, so a substring match
 *   never spans two fields (design: search_query). A row trigger computes it for single-row writes;
 *   bulk loaders may supply it computed set-wise by the same expression (`ContactsQuery.ts`), which
 *   is 5x cheaper than the per-row function call (docs/decisions/0301-contacts-storage.md).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE contacts (
      -- No foreign key here: its per-row check is 15 µs, a third of a bulk load. The org is checked
      -- once per statement through contact_counts (whose count trigger every insert fires), and
      -- deleting an org deletes its contacts (orgs_delete_contacts).
      org_id text NOT NULL,
      -- byte order, the order of the pagination keys (docs/decisions/0102-cursor-keys.md)
      contact_id text COLLATE "C" NOT NULL,
      phone_number text NOT NULL,
      first_name text,
      last_name text,
      external_id text,
      do_not_call boolean NOT NULL DEFAULT false,
      contact_tags text[] NOT NULL DEFAULT '{}',
      custom_fields jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(custom_fields) = 'object'),
      conversation_count integer NOT NULL DEFAULT 0 CHECK (conversation_count >= 0),
      -- NULL = never contacted; sorts and compares as 0 (design: never-contacted contacts)
      last_conversation_timestamp bigint,
      created_timestamp bigint NOT NULL,
      user_modified_timestamp bigint NOT NULL,
      search_text text NOT NULL,
      CONSTRAINT contacts_pkey PRIMARY KEY (org_id, contact_id),
      CONSTRAINT contacts_org_phone_key UNIQUE (org_id, phone_number)
    )`
  // The list order and its keyset seek: one index condition for any page depth, both directions.
  yield* sql`
    CREATE INDEX contacts_org_order
      ON contacts (org_id, (coalesce(last_conversation_timestamp, 0)) DESC, contact_id DESC)`
  yield* sql`CREATE INDEX contacts_search_trgm ON contacts USING gin (search_text gin_trgm_ops)`
  yield* sql`CREATE INDEX contacts_custom_fields ON contacts USING gin (custom_fields jsonb_path_ops)`

  yield* sql`
    CREATE FUNCTION contacts_search_text() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.search_text := lower(concat_ws(chr(31), NEW.phone_number, NEW.first_name, NEW.last_name,
        NEW.external_id, (SELECT string_agg(value, chr(31)) FROM jsonb_each_text(NEW.custom_fields))));
      RETURN NEW;
    END $$`
  yield* sql`
    CREATE TRIGGER contacts_search_text_insert BEFORE INSERT ON contacts
      FOR EACH ROW WHEN (NEW.search_text IS NULL) EXECUTE FUNCTION contacts_search_text()`
  // Listing search_text among the columns recomputes it even when a writer sets it directly.
  yield* sql`
    CREATE TRIGGER contacts_search_text_update
      BEFORE UPDATE OF phone_number, first_name, last_name, external_id, custom_fields, search_text ON contacts
      FOR EACH ROW EXECUTE FUNCTION contacts_search_text()`

  yield* sql`
    CREATE TABLE contact_counts (
      org_id text PRIMARY KEY REFERENCES orgs ON DELETE CASCADE,
      contacts bigint NOT NULL CHECK (contacts >= 0)
    )`
  // ORDER BY org_id: concurrent multi-org writers lock the counter rows in one order, never deadlock.
  yield* sql`
    CREATE FUNCTION contact_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO contact_counts (org_id, contacts)
        SELECT org_id, count(*) FROM inserted GROUP BY org_id ORDER BY org_id
        ON CONFLICT (org_id) DO UPDATE SET contacts = contact_counts.contacts + excluded.contacts;
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE FUNCTION contact_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE contact_counts c SET contacts = c.contacts - d.n
        FROM (SELECT org_id, count(*) AS n FROM deleted GROUP BY org_id ORDER BY org_id) d
        WHERE c.org_id = d.org_id;
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE FUNCTION contact_counts_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM contact_counts;
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE FUNCTION contacts_keep_org() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'a contact cannot move to another org' USING ERRCODE = 'check_violation';
    END $$`
  yield* sql`
    CREATE TRIGGER contact_counts_insert AFTER INSERT ON contacts
      REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION contact_counts_insert()`
  yield* sql`
    CREATE TRIGGER contact_counts_delete AFTER DELETE ON contacts
      REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION contact_counts_delete()`
  yield* sql`
    CREATE TRIGGER contact_counts_truncate AFTER TRUNCATE ON contacts
      FOR EACH STATEMENT EXECUTE FUNCTION contact_counts_truncate()`
  yield* sql`
    CREATE FUNCTION orgs_delete_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM contacts WHERE org_id IN (SELECT org_id FROM gone);
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER orgs_delete_contacts AFTER DELETE ON orgs
      REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION orgs_delete_contacts()`
  // TRUNCATE orgs CASCADE reaches contact_counts through its foreign key, but not contacts, which has none.
  yield* sql`
    CREATE FUNCTION orgs_truncate_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      TRUNCATE contacts;
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER orgs_truncate_contacts AFTER TRUNCATE ON orgs
      FOR EACH STATEMENT EXECUTE FUNCTION orgs_truncate_contacts()`
  yield* sql`
    CREATE TRIGGER contacts_keep_org BEFORE UPDATE OF org_id ON contacts
      FOR EACH ROW WHEN (OLD.org_id IS DISTINCT FROM NEW.org_id) EXECUTE FUNCTION contacts_keep_org()`
})
