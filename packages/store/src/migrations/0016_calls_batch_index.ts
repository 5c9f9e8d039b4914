/**
 * list-calls by `batch_call_id` counts from the index (issue 13, performance; docs/decisions/0511-calls-list-indexes.md).
 *
 * `calls_batch` of migration 0012 held `(batch_call_id, sort_timestamp, call_id)`: the page walked it, but the
 * `include_total` count also checks `org_id = $1` (every statement is org-scoped), which that index does not hold.
 * So the count had to visit the heap row of every call of the batch, and on 260,000 calls PostgreSQL preferred a
 * parallel sequential scan of the whole table to count a batch of 40,000 (CallsPlans.integration.test.ts). With
 * `org_id` carried in the index (INCLUDE) the count is an index-only scan of the batch's entries.
 *
 * INCLUDE, not a leading key column: with `org_id` leading, the index became a candidate for every statement that
 * looks calls up by org, including the finish's `UPDATE calls ... FROM done WHERE c.org_id = d.org_id AND
 * c.call_id = d.call_id`; the scheduler outage test (tools/test/schedulerOutage.integration.test.ts) then failed
 * in 4 of 5 runs, once with a deadlock in CallsRepo.recordFinished, against 0 of 2 without it. Keyed by batch
 * first, the index serves batch lookups only, as before.
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
    CREATE INDEX calls_batch ON calls (batch_call_id, sort_timestamp, call_id) INCLUDE (org_id)
    WHERE batch_call_id IS NOT NULL`
})
