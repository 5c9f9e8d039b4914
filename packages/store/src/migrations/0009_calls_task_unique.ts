/**
 * `calls.task_id` loses its unique constraint (issue 5, dispatch cost). A call is recorded once per task by the
 * statement that records it (CallsRepo.recordFinished): the call row is inserted only for a task whose update from
 * `dialling`/`unknown` to a final state that same statement made, and a second recorder of the same task (the
 * worker and a reconciler) waits for the first's row lock and then finds the task final (READ COMMITTED re-checks
 * the row), so it inserts nothing; one statement's results are deduplicated by task id before they are sent.
 * The constraint was a second guard of the same rule, and the most expensive part of the insert: its index entry
 * plus `ON CONFLICT`'s speculative insertion cost 2.4 of the ~21 µs a finished task costs PostgreSQL (measured
 * against the same statement without them, docs/benchmarks.md). Nothing reads calls by task id.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE calls DROP CONSTRAINT calls_task_id_key`
})
