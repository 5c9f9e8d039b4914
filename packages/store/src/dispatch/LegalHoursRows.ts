/**
 * The rows a batch's legal-hours report is explained from (decisions 0623, 0628: `get-batch-call` and the admin's
 * `batch-preview` report how many pending tasks each rule holds back and the next opening per zone set).
 *
 * This module reads them; the explanation (each group evaluated under the org's effective policy, the binding rule,
 * the next opening) is the domain's `compliance/LegalHoursReport.legalHoursOf`, which the store's callers run: the
 * store applies decided values and returns rows (dependency rule 3, docs/architecture.md).
 */
import type { CanonicalCallTimeWindow } from "@svc/domain/CallWindow.ts"
import type { LegalHoursRows } from "@svc/domain/compliance/LegalHoursReport.ts"
import type { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The legal-hours rows of a batch's pending tasks at `at`: pending tasks per legal group, those waiting on their own
 * instant after `at`, the batch's groups and the org's stored policy override; `window` is passed on with them.
 *
 * @category constructors
 */
export const legalHoursRowsOf = (
  orgId: OrgId,
  batchCallId: BatchCallId,
  window: CanonicalCallTimeWindow | undefined,
  at: number
): Effect.Effect<LegalHoursRows, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pending = yield* sql<{ legal_group: number | null; n: number }>`
      SELECT legal_group, count(*)::int4 AS n FROM batch_call_tasks
      WHERE batch_call_id = ${batchCallId} AND state = 'pending'
      GROUP BY legal_group`
    // Pending tasks that wait for their own instant (not_before): at their number's attempt cap (decision 0624,
    // reason `attempt_cap: ...`) or a retry's spacing (decision 0625). Read through the index of such tasks
    // (batch_call_tasks_deferred), so a batch with none reads nothing more.
    const waiting = yield* sql<{ legal_group: number | null; kind: "attempt_cap" | "retry_spacing"; n: number }>`
      SELECT legal_group,
        CASE WHEN state_reason LIKE 'attempt_cap:%' THEN 'attempt_cap' ELSE 'retry_spacing' END AS kind,
        count(*)::int4 AS n
      FROM batch_call_tasks
      WHERE batch_call_id = ${batchCallId} AND state = 'pending' AND not_before IS NOT NULL AND not_before > ${at}
      GROUP BY 1, 2`
    const groups = yield* sql<{ legal_group: number; zones: Array<string>; rule_ids: Array<string> }>`
      SELECT legal_group, zones, rule_ids FROM batch_call_legal_groups
      WHERE batch_call_id = ${batchCallId} ORDER BY legal_group`
    const [policy] = yield* sql<{ override: unknown; version: number }>`
      SELECT override, version::float8 AS version FROM org_calling_policies WHERE org_id = ${orgId}`
    return { at, window, pending, waiting, groups, policy } satisfies LegalHoursRows
  }).pipe(Effect.orDie, Effect.withSpan("LegalHoursRows.legalHoursRowsOf"))
