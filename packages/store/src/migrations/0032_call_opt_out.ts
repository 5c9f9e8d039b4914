/**
 * A call's opt-out (decision 0552; svc extension `opt_out` of `PATCH /v2/update-call/{call_id}`): the callee asked
 * during this call not to be called again. Schema only (dependency rule 4).
 *
 * `calls.opt_out` is NULL (not said) until update-call sets it; the suppression row that makes later claims skip the
 * number is written in the same transaction (`suppressions`, source `opt_out`), so this column records what was said
 * on this call and the list is what the claim reads. Nullable, without a default: a NULL costs a row nothing (the
 * null bitmap `calls` already has), where `NOT NULL DEFAULT false` stored a byte in every new row, and enough rows
 * then no longer fit their page when finished: 3 of 40 finishes were not HOT updates in
 * CallsLifecycle.integration.test.ts (decision 0540). No index covers it either.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE calls ADD COLUMN opt_out boolean`
})
