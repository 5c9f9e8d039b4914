/**
 * Webhook housekeeping (issue 13 follow-up; decision 0524): finished outbox rows are pruned after a retention
 * period, so `webhook_events` stays the size of its recent traffic instead of growing by three rows per call
 * forever.
 *
 * The prune finds old rows by `enqueued_at` through a BRIN index: rows are appended in enqueue order, so a block
 * range summary (a few bytes per 128 pages, kept current by `autosummarize`) lets the prune read only the old
 * ranges; a B-tree on the finish time would cost every delivery one more index entry. A row is deleted once it is
 * finished (`state <> 'pending'`) and both its enqueue and its finish are older than the retention.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE INDEX webhook_events_enqueued ON webhook_events USING brin (enqueued_at) WITH (autosummarize = on)`
})
