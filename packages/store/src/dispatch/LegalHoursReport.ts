/**
 * A batch's pending tasks seen through legal hours (decisions 0623, 0628: `batch-preview` (and `get-batch-call`)
 * reports how many tasks each rule holds back and the next opening per zone set).
 *
 * Pending tasks are counted per legal group (one statement through `batch_call_tasks_pending_by_group`), and each
 * group is evaluated once at the instant asked, under the org's effective calling policy (CallingPolicyRepo), with
 * the batch's call window: the binding rule (`FL 08:00-20:00`, or `call_window`), the `state_reason` its tasks
 * carry while blocked, and the group's next opening. The same answer the dispatcher acts on.
 */
import type { CanonicalCallTimeWindow } from "@svc/domain/CallWindow.ts"
import { effectiveOfStored } from "@svc/domain/compliance/EffectivePolicy.ts"
import { rulesOfIds } from "@svc/domain/compliance/LegalGroups.ts"
import { explain, ruleLabel, stateReason } from "@svc/domain/compliance/LegalHours.ts"
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"

/**
 * One zone set (legal group) with pending tasks.
 *
 * @category models
 */
export interface LegalZoneSet {
  readonly zones: ReadonlyArray<string>
  /** The jurisdictions whose rules apply under the org's policy ("US" first). */
  readonly rules: ReadonlyArray<string>
  readonly tasks: number
  /** The binding rule now (`FL 08:00-20:00`, `call_window`), or null when dialable. */
  readonly blockedBy: string | null
  /** The `state_reason` its tasks carry while legal hours block them, or null. */
  readonly stateReason: string | null
  /** Its next opening (now when dialable); null when none within the horizon (14 days). */
  readonly nextOpening: number | null
}

/**
 * @category models
 */
export interface LegalHoursSummary {
  /** The version of the org's policy override the answer was computed under (0: the default policy). */
  readonly policyVersion: number
  /** Pending tasks with no legal-hours constraint (not NANP, or created before legal groups existed). */
  readonly unconstrained: number
  /**
   * Pending constrained tasks that may be dialled now (legal in every zone, inside the window, and not waiting on an
   * attempt cap or a retry's spacing).
   */
  readonly dialableNow: number
  /**
   * Pending tasks held back per binding rule label, largest first: a legal-hours rule (`FL 08:00-20:00`),
   * `call_window` (the batch's window), `attempt_cap` (the number's cap of attempts per 24 h), `retry_spacing` (a
   * retry not yet due). Unconstrained tasks appear only under the last two.
   */
  readonly heldBack: ReadonlyArray<{ readonly rule: string; readonly tasks: number }>
  /** Pending tasks whose group has no opening within the horizon. */
  readonly neverWithinHorizon: number
  readonly zoneSets: ReadonlyArray<LegalZoneSet>
}

/**
 * The legal-hours summary of a batch's pending tasks at `at`.
 *
 * @category constructors
 */
export const legalHoursOf = (
  orgId: string,
  batchCallId: string,
  window: CanonicalCallTimeWindow | undefined,
  at: number
): Effect.Effect<LegalHoursSummary, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const counts = yield* sql<{ legal_group: number | null; n: number }>`
      SELECT legal_group, count(*)::int4 AS n FROM batch_call_tasks
      WHERE batch_call_id = ${batchCallId} AND state = 'pending'
      GROUP BY legal_group`
    // Pending tasks that wait for their own instant (not_before): at their number's attempt cap (decision 0624,
    // reason `attempt_cap: ...`) or a retry's spacing (decision 0625). Read through the index of such tasks
    // (batch_call_tasks_deferred), so a batch with none reads nothing more.
    const waiting = yield* sql<{ legal_group: number | null; kind: string; n: number }>`
      SELECT legal_group,
        CASE WHEN state_reason LIKE 'attempt_cap:%' THEN 'attempt_cap' ELSE 'retry_spacing' END AS kind,
        count(*)::int4 AS n
      FROM batch_call_tasks
      WHERE batch_call_id = ${batchCallId} AND state = 'pending' AND not_before IS NOT NULL AND not_before > ${at}
      GROUP BY 1, 2`
    const groups = yield* sql<{ legal_group: number; zones: Array<string>; rule_ids: Array<string> }>`
      SELECT legal_group, zones, rule_ids FROM batch_call_legal_groups
      WHERE batch_call_id = ${batchCallId} ORDER BY legal_group`
    const [stored] = yield* sql<{ override: unknown; version: number }>`
      SELECT override, version::float8 AS version FROM org_calling_policies WHERE org_id = ${orgId}`
    const effective = effectiveOfStored(stored)
    const pendingOf = new Map(counts.map((c) => [c.legal_group, c.n]))
    const heldBack = new Map<string, number>()
    const hold = (rule: string, tasks: number) => heldBack.set(rule, (heldBack.get(rule) ?? 0) + tasks)
    /** Of a group whose legal hours allow it now, the tasks waiting on their own instant; returns how many. */
    const holdWaiting = (group: number | null) => {
      let n = 0
      for (const w of waiting) {
        if (w.legal_group !== group) continue
        hold(w.kind, w.n)
        n += w.n
      }
      return n
    }
    const zoneSets: Array<LegalZoneSet> = []
    let dialable = 0
    let never = 0
    for (const g of groups) {
      const tasks = pendingOf.get(g.legal_group) ?? 0
      if (tasks === 0) continue
      const rules = rulesOfIds(effective.policy, g.rule_ids)
      const blocked = explain(at, g.zones, rules, window)
      const blockedBy = Option.isNone(blocked)
        ? null
        : blocked.value._tag === "LegalHours"
        ? ruleLabel(blocked.value.rule)
        : "call_window"
      const next = Option.isNone(blocked) ? Option.some(at) : blocked.value.until
      // a task of a blocked group counts under the group's rule (the cap or spacing may end sooner or later; the
      // task's own state_reason says which binds); of an open group, under its cap or spacing if it waits on one
      if (blockedBy === null) dialable += tasks - holdWaiting(g.legal_group)
      else hold(blockedBy, tasks)
      if (Option.isNone(next)) never += tasks
      zoneSets.push({
        zones: g.zones,
        rules: rules.map((r) => r.jurisdiction),
        tasks,
        blockedBy,
        stateReason: Option.isSome(blocked) && blocked.value._tag === "LegalHours" ? stateReason(blocked.value) : null,
        nextOpening: Option.getOrNull(next)
      })
    }
    // unconstrained tasks (no legal hours) still wait on caps and retry spacing
    holdWaiting(null)
    return {
      policyVersion: effective.version,
      unconstrained: pendingOf.get(null) ?? 0,
      dialableNow: dialable,
      heldBack: [...heldBack].map(([rule, tasks]) => ({ rule, tasks })).sort((a, b) =>
        b.tasks - a.tasks || (a.rule < b.rule ? -1 : 1)
      ),
      neverWithinHorizon: never,
      zoneSets
    } satisfies LegalHoursSummary
  }).pipe(Effect.orDie, Effect.withSpan("LegalHoursReport.legalHoursOf"))
