/**
 * A batch's pending tasks seen through legal hours (decisions 0623, 0628: `get-batch-call` and the admin's
 * `batch-preview` report how many tasks each rule holds back and the next opening per zone set).
 *
 * The store reads the counts (`LegalHoursRows`: pending tasks per legal group, those waiting on their own instant,
 * the batch's groups and the org's stored policy override); this module explains them, and its callers (the server's
 * handlers, the admin command) run it, since whether and why a task may be dialled is a compliance decision
 * (dependency rule 3, docs/architecture.md). Each group is evaluated once at the instant the rows were read for,
 * under the org's effective calling policy (`effectiveOfStored`), with the batch's call window: the binding rule
 * (`FL 08:00-20:00`, or `call_window`), the `state_reason` its tasks carry while blocked, and the group's next
 * opening. The same answer the dispatcher acts on.
 */
import { Option } from "effect"
import type { CanonicalCallTimeWindow } from "../CallWindow.ts"
import { effectiveOfStored } from "./EffectivePolicy.ts"
import { rulesOfIds } from "./LegalGroups.ts"
import { explain, ruleLabel, stateReason } from "./LegalHours.ts"

/**
 * What a batch's legal-hours report is computed from, as stored at one instant.
 *
 * @category models
 */
export interface LegalHoursRows {
  /** The instant the rows were read for (`waiting` depends on it) and the report is computed at. */
  readonly at: number
  /** The batch's call window, if it has one. */
  readonly window: CanonicalCallTimeWindow | undefined
  /** Pending tasks per legal group (`null`: unconstrained). */
  readonly pending: ReadonlyArray<{ readonly legal_group: number | null; readonly n: number }>
  /**
   * Pending tasks that wait for their own instant after `at`, per legal group: `attempt_cap` (at their number's
   * attempt cap, decision 0624) or `retry_spacing` (a retry not yet due, decision 0625).
   */
  readonly waiting: ReadonlyArray<
    { readonly legal_group: number | null; readonly kind: "attempt_cap" | "retry_spacing"; readonly n: number }
  >
  /** The batch's legal groups, in group order. */
  readonly groups: ReadonlyArray<
    { readonly legal_group: number; readonly zones: ReadonlyArray<string>; readonly rule_ids: ReadonlyArray<string> }
  >
  /** The org's stored calling-policy override, if any. */
  readonly policy: { readonly override: unknown; readonly version: number } | undefined
}

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
 * The legal-hours summary of a batch's pending tasks at the instant its rows were read for.
 *
 * @category combinators
 */
export const legalHoursOf = (rows: LegalHoursRows): LegalHoursSummary => {
  const { at, window } = rows
  const effective = effectiveOfStored(rows.policy)
  const pendingOf = new Map(rows.pending.map((c) => [c.legal_group, c.n]))
  const heldBack = new Map<string, number>()
  const hold = (rule: string, tasks: number) => heldBack.set(rule, (heldBack.get(rule) ?? 0) + tasks)
  /** Of a group whose legal hours allow it now, the tasks waiting on their own instant; returns how many. */
  const holdWaiting = (group: number | null) => {
    let n = 0
    for (const w of rows.waiting) {
      if (w.legal_group !== group) continue
      hold(w.kind, w.n)
      n += w.n
    }
    return n
  }
  const zoneSets: Array<LegalZoneSet> = []
  let dialable = 0
  let never = 0
  for (const g of rows.groups) {
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
  }
}
