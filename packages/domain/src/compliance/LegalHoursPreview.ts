/**
 * Legal hours for a whole batch at once (decision 0623: batch-preview reports how many tasks each rule
 * holds back and the next opening per zone set). Tasks are grouped by what decides their legal hours (the shared
 * zone set of their number and contact, and the jurisdictions whose rules apply), and each group is evaluated once:
 * the same grouping lets dispatch compute one next legal instant per group instead of one per task.
 */
import { Option } from "effect"
import type { CallTimeWindow } from "../CallWindow.ts"
import { type CallingPolicy, type JurisdictionRule, rulesFor } from "./CallingPolicy.ts"
import { defaultHorizonMs, explain, ruleLabel } from "./LegalHours.ts"
import { areaCodeStates, type ContactLocation, type ZoneSet, zonesFor } from "./RecipientZones.ts"

/**
 * One task as the preview sees it: its number and its contact's location fields.
 *
 * @category models
 */
export interface PreviewTask {
  readonly toNumber: string
  readonly contact?: ContactLocation | undefined
}

/**
 * Tasks that share zones and rules, with their common answer at the preview's instant.
 *
 * @category models
 */
export interface LegalHoursGroup {
  readonly zones: ZoneSet
  readonly rules: ReadonlyArray<JurisdictionRule>
  readonly tasks: number
  /** The first instant >= the preview's at which the group may be dialled; `None` within the horizon. */
  readonly nextOpening: Option.Option<number>
  /** What holds the group back now: a rule label (`FL 08:00-20:00`), `call_window`, or `None` when dialable. */
  readonly blockedBy: Option.Option<string>
}

/**
 * @category models
 */
export interface LegalHoursPreview {
  readonly total: number
  readonly dialableNow: number
  /** Tasks held back per blocking rule label (`call_window` for the batch window), largest first. */
  readonly heldBack: ReadonlyArray<{ readonly rule: string; readonly tasks: number }>
  /** Tasks with no legal opening inside the window within the horizon. */
  readonly neverWithinHorizon: number
  readonly groups: ReadonlyArray<LegalHoursGroup>
}

/**
 * The legal-hours picture of a batch at `instant`: how many tasks may be dialled now, what holds the others back,
 * and when each group of tasks (same zones and rules) opens next.
 *
 * @category combinators
 */
export const previewLegalHours = (
  tasks: Iterable<PreviewTask>,
  instant: number,
  policy: CallingPolicy,
  window?: CallTimeWindow,
  horizonMs: number = defaultHorizonMs
): LegalHoursPreview => {
  // Zone sets are shared frozen arrays, so their identity (plus the rule jurisdictions) keys a group.
  const groups = new Map<ZoneSet, Map<string, { rules: ReadonlyArray<JurisdictionRule>; tasks: number }>>()
  let total = 0
  for (const task of tasks) {
    total++
    const zones = zonesFor(task.toNumber, task.contact)
    const address = task.contact?.state
    const states = areaCodeStates(task.toNumber)
    const rules = rulesFor(policy, address === undefined ? states : [...states, address])
    const key = rules.map((r) => r.jurisdiction).join(",")
    let byRules = groups.get(zones)
    if (byRules === undefined) groups.set(zones, byRules = new Map())
    const group = byRules.get(key)
    if (group === undefined) byRules.set(key, { rules, tasks: 1 })
    else group.tasks++
  }
  const result: Array<LegalHoursGroup> = []
  const heldBack = new Map<string, number>()
  let dialableNow = 0
  let never = 0
  for (const [zones, byRules] of groups) {
    for (const { rules, tasks: count } of byRules.values()) {
      const blocked = explain(instant, zones, rules, window, horizonMs)
      const blockedBy = Option.map(blocked, (b) => b._tag === "LegalHours" ? ruleLabel(b.rule) : "call_window")
      const nextOpening = Option.match(blocked, {
        onNone: () => Option.some(instant),
        onSome: (b) => b.until
      })
      if (Option.isNone(blockedBy)) dialableNow += count
      else heldBack.set(blockedBy.value, (heldBack.get(blockedBy.value) ?? 0) + count)
      if (Option.isNone(nextOpening)) never += count
      result.push({ zones, rules, tasks: count, nextOpening, blockedBy })
    }
  }
  return {
    total,
    dialableNow,
    heldBack: [...heldBack].map(([rule, n]) => ({ rule, tasks: n })).sort((a, b) =>
      b.tasks - a.tasks || (a.rule < b.rule ? -1 : 1)
    ),
    neverWithinHorizon: never,
    groups: result
  }
}
