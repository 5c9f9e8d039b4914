/**
 * The indexes of list-batch-calls and list-batch-call-tasks (decision 0548).
 * Schema only (dependency rule 4).
 *
 * - `batch_calls_org_page (org_id, created_timestamp, batch_call_id)` replaces `batch_calls_org (org_id,
 *   created_timestamp)`: a page of an org's batches is the keyset `(created_timestamp, batch_call_id)` walked straight
 *   off the index, with no sort of the ties on the creation time; every query the old index served is a prefix of it.
 * - `batch_call_tasks_by_state (batch_call_id, state, task_index)`: a page of a batch's tasks in one state is a range
 *   of this index in task order, however few of the batch's tasks are in that state (a walk of the batch's tasks by
 *   `task_index` filtering the state would read all 100,000 to find the last failed one). An unfiltered page walks
 *   the existing `UNIQUE (batch_call_id, task_index)`. The state is already in partial indexes' predicates, so state
 *   changes were not HOT updates before: the new index adds one entry per task insert and per state change.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX batch_calls_org_page ON batch_calls (org_id, created_timestamp, batch_call_id)`
  yield* sql`DROP INDEX batch_calls_org`
  yield* sql`CREATE INDEX batch_call_tasks_by_state ON batch_call_tasks (batch_call_id, state, task_index)`
})
