/**
 * A narrow copy of each contact's `search_text`, for the exact total of a search (issue 17, item 4; decision 0643).
 *
 * The total of a broad search ("son": 145,000 of 1,000,000 contacts) is a bitmap scan of the trigram index plus a
 * recheck of every matching row in the heap: 45,300 blocks of `contacts` (385 bytes a row: names, tags, custom
 * fields, the search text itself). `contact_search` holds the three columns the count needs (171 bytes a row), so
 * the same count reads 20,900 blocks and measured 0.38x the count over `contacts` (tools/bench/broadSearchSql.bench.ts).
 * Pages still read `contacts` and its own trigram index: a page walks the order index and stops after `limit + 1`
 * matches, and a selective search sorts its few matches; only the total of a search without other filters reads
 * the copy (`ContactsQuery.countStatement`).
 *
 * Invariant, kept by the database whoever writes (repository, seed, import, scheduler, backfill): `contact_search`
 * holds exactly one row per contact with the contact's current `org_id`, `contact_id` and `search_text`, in every
 * snapshot (the triggers write in the writer's transaction):
 * - inserts copy their rows set-wise (a statement trigger over the transition table: a bulk load pays once per
 *   statement, as `contact_counts` does);
 * - an update copies the new text only when it changed (a row trigger whose WHEN compares the two texts, so the
 *   call feed's update of `conversation_count` queues no trigger and writes nothing to the copy);
 * - deletes (an org's deletion included) and TRUNCATE remove the copies.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Writers of contacts wait from here until the migrations commit (reads go on): a contact written by another
  // replica between the copy below and the triggers' creation would otherwise never be copied. The lock waits for
  // writers in flight to commit, and the copy's statement, planned after it, sees their rows (READ COMMITTED).
  yield* sql`LOCK TABLE contacts IN SHARE ROW EXCLUSIVE MODE`
  yield* sql`
    CREATE TABLE contact_search (
      org_id text NOT NULL,
      contact_id text COLLATE "C" NOT NULL,
      search_text text NOT NULL,
      CONSTRAINT contact_search_pkey PRIMARY KEY (org_id, contact_id)
    )`
  yield* sql`INSERT INTO contact_search (org_id, contact_id, search_text) SELECT org_id, contact_id, search_text FROM contacts`
  yield* sql`CREATE INDEX contact_search_trgm ON contact_search USING gin (search_text gin_trgm_ops)`

  yield* sql`
    CREATE FUNCTION contact_search_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO contact_search (org_id, contact_id, search_text)
        SELECT org_id, contact_id, search_text FROM inserted;
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER contact_search_insert AFTER INSERT ON contacts
      REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION contact_search_insert()`

  // A contact's id never changes in practice, but the copy follows it if it does: the key is the old row's.
  yield* sql`
    CREATE FUNCTION contact_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE contact_search SET contact_id = NEW.contact_id, search_text = NEW.search_text
        WHERE org_id = OLD.org_id AND contact_id = OLD.contact_id;
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER contact_search_update AFTER UPDATE ON contacts
      FOR EACH ROW WHEN (OLD.search_text IS DISTINCT FROM NEW.search_text OR OLD.contact_id IS DISTINCT FROM NEW.contact_id)
      EXECUTE FUNCTION contact_search_update()`

  yield* sql`
    CREATE FUNCTION contact_search_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM contact_search s USING deleted d WHERE s.org_id = d.org_id AND s.contact_id = d.contact_id;
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER contact_search_delete AFTER DELETE ON contacts
      REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION contact_search_delete()`

  yield* sql`
    CREATE FUNCTION contact_search_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      TRUNCATE contact_search;
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER contact_search_truncate AFTER TRUNCATE ON contacts
      FOR EACH STATEMENT EXECUTE FUNCTION contact_search_truncate()`
  // Planner statistics for the copy at once, so the first search after an upgrade is costed on its real size.
  yield* sql`ANALYZE contact_search`
})
