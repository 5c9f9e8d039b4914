/**
 * What the dispatcher reads and writes to decide which legal groups of a batch may be dialled now
 * (decision 0623): the groups stored with the batch, the orgs' calling policies, and the `state_reason` that tells
 * why a group's tasks wait. The claim applies the decided groups and caps (`BatchLegality`).
 */
import type { BatchCallId } from "@svc/domain/models/Ids.ts"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { storedPolicies } from "../policies/index.ts"

/**
 * A batch's legal groups at the claim's instant (decision 0623): those whose tasks may be dialled now,
 * and the others with the instant each opens next (legal hours and the batch's window).
 *
 * @category models
 */
export interface BatchLegality {
  /**
   * `legal` and `blocked` together are every legal group of the batch (the claim reads "no group blocked" as "every
   * pending task may be dialled").
   */
  readonly legal: ReadonlyArray<number>
  readonly blocked: ReadonlyArray<{ readonly group: number; readonly opensAt: number }>
  /**
   * The attempt cap of each group that has one (decision 0624): at most `limit` attempts per
   * rolling 24 h to one number across the org's batches; `label` names it in `state_reason` ("FL 3 per 24h").
   */
  readonly caps?: ReadonlyArray<GroupCap> | undefined
}

/**
 * A legal group's attempt cap, as the claim enforces it (migration 0023).
 *
 * @category models
 */
export interface GroupCap {
  readonly group: number
  readonly limit: number
  readonly label: string
}

/**
 * One legal group of a batch as stored at its creation (migration 0022).
 *
 * @category models
 */
export interface StoredLegalGroup {
  readonly batchCallId: BatchCallId
  readonly group: number
  readonly zones: ReadonlyArray<string>
  readonly ruleIds: ReadonlyArray<string>
}

/** The statements over legal groups and calling policies, on `sql`. */
export const make = (sql: SqlClient.SqlClient) => {
  const legalGroups = (batchCallIds: ReadonlyArray<BatchCallId>) =>
    batchCallIds.length === 0 ? Effect.succeed([]) : sql<
      { batch_call_id: BatchCallId; legal_group: number; zones: Array<string>; rule_ids: Array<string> }
    >`
      SELECT batch_call_id, legal_group, zones, rule_ids FROM batch_call_legal_groups
      WHERE batch_call_id = ANY(${batchCallIds}::text[])
      ORDER BY batch_call_id, legal_group`.pipe(
      Effect.map((rows) =>
        rows.map((r): StoredLegalGroup => ({
          batchCallId: r.batch_call_id,
          group: r.legal_group,
          zones: r.zones,
          ruleIds: r.rule_ids
        }))
      ),
      Effect.orDie,
      Effect.withSpan("DispatchRepo.legalGroups")
    )

  // Through batch_call_tasks_pending_by_group: the group's pending tasks only. Written when a group's state
  // changes (blocked with a new reason, or open again), not every pass (the Dispatcher remembers what it wrote).
  // `state_reason` is in no index and `state` does not change, so the updates can be HOT. A task waiting on its
  // attempt cap (not_before, decision 0624) keeps its `attempt_cap:` reason: the cap binds until then, and its
  // legal hours are looked at again when it may be claimed.
  const setLegalReason = (batchCallId: BatchCallId, group: number, reason: string | null) =>
    (reason === null
      ? sql`
        UPDATE batch_call_tasks SET state_reason = NULL
        WHERE batch_call_id = ${batchCallId} AND legal_group = ${group} AND state = 'pending' AND not_before IS NULL
          AND state_reason LIKE 'legal_hours:%'
        RETURNING 1`
      : sql`
        UPDATE batch_call_tasks SET state_reason = ${reason}
        WHERE batch_call_id = ${batchCallId} AND legal_group = ${group} AND state = 'pending' AND not_before IS NULL
          AND state_reason IS DISTINCT FROM ${reason}
        RETURNING 1`).pipe(
        Effect.map((rows) => rows.length),
        Effect.orDie,
        Effect.withSpan("DispatchRepo.setLegalReason")
      )

  const orgPolicies = (orgIds: ReadonlyArray<string>) => storedPolicies(sql, orgIds, "DispatchRepo.orgPolicies")

  return { legalGroups, setLegalReason, orgPolicies }
}
