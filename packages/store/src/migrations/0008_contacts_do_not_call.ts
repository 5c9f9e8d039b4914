/**
 * The scheduler's do-not-call check (issue 5; DispatchRepo.claim) as an index of its own: the numbers of an org's
 * `do_not_call` contacts. The claim asks "which of these numbers belong to a do-not-call contact of this org"; with
 * only the org's other indexes PostgreSQL answered it by reading every contact of the org once per claim (a hashed
 * subplan over `contacts_org_order`), or, for an org the statistics had not seen yet, once per task. With this
 * index the cost is that of the org's do-not-call contacts, usually none. It holds only flagged rows, so it costs
 * nothing to keep up for the others.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX contacts_do_not_call ON contacts (org_id, phone_number) WHERE do_not_call`
})
