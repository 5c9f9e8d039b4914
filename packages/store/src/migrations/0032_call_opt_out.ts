/**
 * A call's opt-out (decision 0552; svc extension `opt_out` of `PATCH /v2/update-call/{call_id}`): the callee asked
 * during this call not to be called again. Schema only (dependency rule 4).
 *
 * `calls.opt_out` is `false` until update-call sets it; the suppression row that makes later claims skip the number
 * is written in the same transaction (`suppressions`, source `opt_out`), so this column records what was said on
 * this call and the list is what the claim reads. A constant default adds the column without rewriting `calls`
 * (PostgreSQL >= 11 stores it in the catalog), and no index covers it, so the finish of a call stays a HOT update
 * (decision 0540).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE calls ADD COLUMN opt_out boolean NOT NULL DEFAULT false`
})
