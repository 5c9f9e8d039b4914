/**
 * list-calls by `batch_call_id` counts from the index (issue 13, performance; docs/decisions/0511-calls-list-indexes.md).
 *
 * `calls_batch` of migration 0012 held `(batch_call_id, sort_timestamp, call_id)`: the page walked it, but the
 * `include_total` count also checks `org_id = $1` (every statement is org-scoped), which that index does not hold.
 * So the count had to visit the heap row of every call of the batch, and on 260,000 calls PostgreSQL preferred a
 * parallel sequential scan of the whole table to count a batch of 40,000 (CallsPlans.integration.test.ts). With
 * `org_id` in the key the count is an index-only scan of the batch's entries.
 *
 * The dispatch path's cost does not change: the index is replaced, not added (still one entry per batch call,
 * written by the claim's insert and by the finish's non-HOT update), a few bytes wider.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX IF EXISTS calls_batch`
  yield* sql`
    CREATE INDEX calls_batch ON calls (org_id, batch_call_id, sort_timestamp, call_id)
    WHERE batch_call_id IS NOT NULL`
})
