/**
 * Legal groups of a batch (issue 15, "Dispatch": "the scheduler's claim honours legal hours without a per-task scan
 * at claim time"; docs/decisions/0623-legal-hours-dispatch.md). At create-batch-call each task's legal-hours
 * constraint (the candidate zones of its number and the ids of the rules that apply) is computed once and mapped to
 * a small integer, the task's `legal_group`, numbered per batch from 0 in order of first use. The dispatcher then
 * evaluates each group once per pass (`isLegalAt`: few groups, however many tasks) and claims only tasks of the
 * groups that are legal now.
 *
 * In this phase only NANP numbers (`+1...`) are constrained, with the default policy, from the number alone (the
 * contact's custom fields are not read at creation); any other number, and a `+1` string with no zones (not a
 * number), is unconstrained: `legal_group` NULL.
 */
import { type CallingPolicy, defaultPolicy, type JurisdictionRule, rulesFor } from "./CallingPolicy.ts"
import { areaCodeStates, type ZoneSet, zonesFor } from "./RecipientZones.ts"

/**
 * What decides a group's legal hours: its zones and the jurisdictions of its rules ("US" for the federal rule, else
 * a state's postal code), in the order `rulesFor` gives them.
 *
 * @category models
 */
export interface LegalGroup {
  readonly group: number
  readonly zones: ZoneSet
  readonly ruleIds: ReadonlyArray<string>
}

/**
 * The constraint of one number under `policy`, or `undefined` when it is unconstrained (not NANP, or no zones).
 *
 * @category combinators
 */
export const constraintOf = (
  toNumber: string,
  policy: CallingPolicy = defaultPolicy
): { readonly zones: ZoneSet; readonly rules: ReadonlyArray<JurisdictionRule> } | undefined => {
  // "+1": only NANP numbers get legal hours in this phase (decision 0623)
  if (toNumber.charCodeAt(0) !== 43 || toNumber.charCodeAt(1) !== 49) return undefined
  const zones = zonesFor(toNumber)
  if (zones.length === 0) return undefined
  return { zones, rules: rulesFor(policy, areaCodeStates(toNumber)) }
}

/**
 * The rules of stored rule ids under `policy`. An id the policy no longer has is dropped; the federal rule always
 * applies (a group is never left with fewer than the federal hours).
 *
 * @category combinators
 */
export const rulesOfIds = (
  policy: CallingPolicy,
  ruleIds: ReadonlyArray<string>
): ReadonlyArray<JurisdictionRule> => rulesFor(policy, ruleIds.filter((id) => id !== policy.federal.jurisdiction))

/**
 * Assigns legal groups to a batch's tasks one at a time, in task order.
 *
 * @category constructors
 */
export class LegalGrouper {
  private readonly byZones = new Map<ZoneSet, Map<string, number>>()
  private readonly list: Array<LegalGroup> = []
  private readonly policy: CallingPolicy

  constructor(policy: CallingPolicy = defaultPolicy) {
    this.policy = policy
  }

  /** The task's group, or `null` when its number is unconstrained. */
  assign(toNumber: string): number | null {
    const constraint = constraintOf(toNumber, this.policy)
    if (constraint === undefined) return null
    // zone sets are shared frozen arrays: their identity, with the rule ids, keys a group
    const key = constraint.rules.map((r) => r.jurisdiction).join(",")
    let byRules = this.byZones.get(constraint.zones)
    if (byRules === undefined) this.byZones.set(constraint.zones, byRules = new Map())
    const found = byRules.get(key)
    if (found !== undefined) return found
    const group = this.list.length
    byRules.set(key, group)
    this.list.push({ group, zones: constraint.zones, ruleIds: constraint.rules.map((r) => r.jurisdiction) })
    return group
  }

  /** The groups assigned so far, by group number. */
  get groups(): ReadonlyArray<LegalGroup> {
    return this.list
  }
}
