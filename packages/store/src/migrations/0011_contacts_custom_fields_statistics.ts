/**
 * Finer statistics for `contacts.custom_fields` (issue 4's custom-field filter; its plan test failed once in
 * issue 5's runs).
 *
 * PostgreSQL estimates `custom_fields @> '{"company": "..."}'` by testing the column's histogram of whole documents
 * (`matchingsel`). With the default 100 entries, drawn from a random sample of 30,000 rows, a value held by a few
 * dozen of 140,000 contacts is estimated at 1 in 10,000 (the floor) or at 1 in 100, depending on whether one of
 * its documents happened to land in the histogram (about a 2% chance). At 1 in 100 the planner walks the org's
 * order index expecting 100 matches within ~10,000 rows, and reads the whole org instead of the GIN index's few
 * dozen entries (ContactsPlans.integration.test.ts caught it). 1,000 entries from a 300,000-row sample make such
 * an estimate ten times finer, and the statistics of a table of up to 300,000 rows exact (all of it is sampled),
 * at the price of a longer ANALYZE of the contacts table.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE contacts ALTER COLUMN custom_fields SET STATISTICS 1000`
})
