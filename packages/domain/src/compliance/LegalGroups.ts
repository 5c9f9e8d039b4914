/**
 * Legal groups of a batch (decision 0623: "the scheduler's claim honours legal hours without a per-task scan
 * at claim time"). At create-batch-call each task's legal-hours
 * constraint (the candidate zones of its number and the ids of the rules that apply) is computed once and mapped to
 * a small integer, the task's `legal_group`, numbered per batch from 0 in order of first use. The dispatcher then
 * evaluates each group once per pass (`isLegalAt`: few groups, however many tasks) and claims only tasks of the
 * groups that are legal now.
 *
 * Only NANP numbers (`+1...`) are constrained; any other number, and a `+1` string with no zones (not a number), is
 * unconstrained: `legal_group` NULL.
 *
 * A group stores the number's candidate jurisdictions ("US" and every state its area code may be in, plus the
 * contact's address state), not the rules of one policy: the rules are resolved from them with the organisation's
 * policy when the group is evaluated (`rulesOfIds`), so a policy set or changed after the batch was created applies
 * to its pending tasks, including a row added for a state the policy had none for (decision 0628).
 */
import { type CallingPolicy, defaultPolicy, type JurisdictionRule, rulesFor } from "./CallingPolicy.ts"
import { areaCodeStates, type ContactLocation, type ZoneSet, zonesFor, zonesOfState } from "./RecipientZones.ts"

/**
 * What decides a group's legal hours: its zones and its candidate jurisdictions ("US" first, then the postal codes of
 * the states its number's area code may be in and of the contact's address state, as given), whose rules apply when
 * the policy has a row for them.
 *
 * @category models
 */
export interface LegalGroup {
  readonly group: number
  readonly zones: ZoneSet
  readonly ruleIds: ReadonlyArray<string>
}

const federalOnly: ReadonlyArray<string> = Object.freeze(["US"])

/**
 * The candidate zones and jurisdictions of one number (and its contact's location fields), or `undefined` when it
 * is unconstrained (not NANP, or no zones). Independent of any policy.
 *
 * @category combinators
 */
export const candidatesOf = (
  toNumber: string,
  contact?: ContactLocation
): { readonly zones: ZoneSet; readonly jurisdictions: ReadonlyArray<string> } | undefined => {
  // "+1": only NANP numbers get legal hours (decision 0623)
  if (toNumber.charCodeAt(0) !== 43 || toNumber.charCodeAt(1) !== 49) return undefined
  const zones = zonesFor(toNumber, contact)
  if (zones.length === 0) return undefined
  const states = areaCodeStates(toNumber)
  const address = contact?.state?.trim().toUpperCase()
  // the area-code state and the address state: a call must satisfy both (calling-rules.md)
  const extra = address !== undefined && zonesOfState(address) !== undefined && !states.includes(address)
    ? [address]
    : []
  if (states.length === 0 && extra.length === 0) return { zones, jurisdictions: federalOnly }
  return { zones, jurisdictions: ["US", ...states, ...extra] }
}

/**
 * The constraint of one number under `policy`, or `undefined` when it is unconstrained (not NANP, or no zones).
 *
 * @category combinators
 */
export const constraintOf = (
  toNumber: string,
  policy: CallingPolicy = defaultPolicy,
  contact?: ContactLocation
): { readonly zones: ZoneSet; readonly rules: ReadonlyArray<JurisdictionRule> } | undefined => {
  const candidates = candidatesOf(toNumber, contact)
  return candidates === undefined
    ? undefined
    : { zones: candidates.zones, rules: rulesOfIds(policy, candidates.jurisdictions) }
}

/**
 * The rules of stored jurisdiction ids under `policy`. An id the policy has no row for is passed over; the federal
 * rule always applies (a group is never left with fewer than the federal hours).
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
  private readonly byKey = new Map<string, number>()
  private readonly zoneKeys = new Map<ZoneSet, string>()
  private readonly list: Array<LegalGroup> = []

  /** The task's group, or `null` when its number is unconstrained. */
  assign(toNumber: string, contact?: ContactLocation): number | null {
    const candidates = candidatesOf(toNumber, contact)
    if (candidates === undefined) return null
    // by content: a contact's fields can give an equal zone set as another array
    let zoneKey = this.zoneKeys.get(candidates.zones)
    if (zoneKey === undefined) this.zoneKeys.set(candidates.zones, zoneKey = candidates.zones.join("&"))
    const key = `${zoneKey}|${candidates.jurisdictions.join(",")}`
    const found = this.byKey.get(key)
    if (found !== undefined) return found
    const group = this.list.length
    this.byKey.set(key, group)
    this.list.push({ group, zones: candidates.zones, ruleIds: candidates.jurisdictions })
    return group
  }

  /** The groups assigned so far, by group number. */
  get groups(): ReadonlyArray<LegalGroup> {
    return this.list
  }
}
