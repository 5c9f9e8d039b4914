/**
 * Whether a batch may dial now (decision 0623 for legal groups, decision 0101 for call windows): a batch outside its
 * call window waits for the window's next opening; a legal group is legal when every rule allows the instant in
 * every zone of it, else it is blocked, with the reason its pending tasks show and the instant it opens (legal hours
 * and the batch's window together), kept until that instant comes.
 */
import { Option } from "effect"
import { type CallTimeWindow, isOpen, nextOpening } from "../CallWindow.ts"
import type { JurisdictionRule } from "../compliance/CallingPolicy.ts"
import { explain, stateReason } from "../compliance/LegalHours.ts"

/**
 * A blocked group with no opening within the horizon (14 days) is looked at again this much later (a day: decision
 * 0623).
 *
 * @category models
 */
export const noOpeningRecheckMs = 86_400_000

/**
 * What a legal group is at an instant.
 *
 * @category models
 */
export type GroupLegality =
  | { readonly _tag: "Legal" }
  | {
    readonly _tag: "Blocked"
    /** When to look at the group again: its next opening, or `noOpeningRecheckMs` later if none is in sight. */
    readonly until: number
    /** The pending tasks' `state_reason` (`legal_hours: <rule> <zone> until <instant>`). */
    readonly reason: string
  }

const legal: GroupLegality = { _tag: "Legal" }

/**
 * A legal group's legality at `now`, for the batch's call window `window` (which only moves a blocked group's opening:
 * a closed window is the batch's matter, `closedUntil`).
 *
 * @category combinators
 */
export const groupLegality = (
  now: number,
  zones: ReadonlyArray<string>,
  rules: ReadonlyArray<JurisdictionRule>,
  window: CallTimeWindow | undefined
): GroupLegality => {
  // the binding closed rule, if any (LegalHours.explain: some rule closed in some zone is exactly what makes
  // isLegalAt false); a closed window alone names no rule and blocks no group
  const why = explain(now, zones, rules, window)
  if (Option.isNone(why) || why.value._tag === "CallWindow") return legal
  return {
    _tag: "Blocked",
    until: Option.getOrElse(why.value.until, () => now + noOpeningRecheckMs),
    reason: stateReason(why.value)
  }
}

/**
 * Whether `now` falls in a blocked stretch found before: from the instant the group was found blocked (inclusive) to
 * its opening (exclusive). A clock that went back before it, or the opening come, needs a new look.
 *
 * @category guards
 */
export const isKnownBlocked = (now: number, blockedFrom: number, blockedUntil: number): boolean =>
  now >= blockedFrom && now < blockedUntil

/**
 * When a batch whose call window is closed at `now` may dial again (its next opening, decision 0101), or `undefined`
 * when it has no window or the window is open.
 *
 * @category combinators
 */
export const closedUntil = (window: CallTimeWindow | undefined, now: number): number | undefined => {
  if (window === undefined || isOpen(window, now)) return undefined
  // a valid window always opens again within a week; the fallback only guards the type
  return Option.getOrElse(nextOpening(window, now), () => now + 86_400_000)
}
