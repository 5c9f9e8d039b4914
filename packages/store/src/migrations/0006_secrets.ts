/**
 * Secrets every replica must share, generated once by whichever process starts first: the HMAC
 * key of pagination keys (a key minted by one replica must verify on another).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE svc_secrets (name text PRIMARY KEY, value bytea NOT NULL, created_timestamp bigint NOT NULL)`
})
