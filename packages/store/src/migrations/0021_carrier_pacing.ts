/**
 * Carrier pacing (issue 14, "Carrier pacing"; decision 0610): one row per carrier account, shared by every worker, so
 * call creations on the account keep to its calls-per-second limit however many workers dial.
 *
 * `next_at` is the start of the account's next free slot and `paused_until` the end of a backoff (429 or 5xx from
 * the carrier), both epoch MICROseconds from the workers' clocks: at a rate like 3/s the interval (333,334 us, rounded up) is not
 * a whole number of milliseconds, and whole numbers keep the slots exactly one interval apart (a float sum could put
 * a fourth slot a hair inside one second). A worker takes a slot with one `INSERT ... ON CONFLICT DO UPDATE ...
 * RETURNING`, which the row lock serialises across workers.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE carrier_pacing (
      account text PRIMARY KEY,
      next_at bigint NOT NULL,
      paused_until bigint NOT NULL DEFAULT 0
    )`
})
