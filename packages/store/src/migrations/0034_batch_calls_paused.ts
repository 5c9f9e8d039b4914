/**
 * The paused batches (decision 0549), indexed apart: `batch_calls_due` covers the running ones (`scheduled`,
 * `in_progress`), and the scheduler's gauge of batches by status (svc_batch_calls) counts the paused ones every
 * sample without reading the table's history of finished batches. Schema only (dependency rule 4).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX batch_calls_paused ON batch_calls (org_id) WHERE status = 'paused'`
})
