/**
 * Pre-dial webhooks (decision 0553): schema only (dependency rule 4).
 *
 * - `org_predial_webhooks`: at most one per org (`admin set-predial-webhook`), absent = no check. The URL obeys the
 *   call webhooks' rules (http or https, no credentials; the address rule at connect time, decision 0523); the
 *   timeout bounds one check, 100-10,000 ms, well inside a claim's lease (30 s by default), since the check runs
 *   while the task is `dialling` under that lease. No secret of its own: requests are signed with the org's webhook
 *   secret (`webhook_secrets`, decision 0521), so a receiver verifies them as it verifies the call webhooks.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE org_predial_webhooks (
      org_id text PRIMARY KEY REFERENCES orgs ON DELETE CASCADE,
      url text NOT NULL,
      timeout_ms integer NOT NULL CHECK (timeout_ms BETWEEN 100 AND 10000),
      updated_timestamp bigint NOT NULL
    )`
})
