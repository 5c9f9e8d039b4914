/**
 * Attempt caps (decision 0624: "a per-number cap across batches of an org (e.g. 3 per rolling 24 h for FL/OK/MD
 * numbers; configurable)"). A number's cap comes from the rules that apply to
 * it (CallingPolicy rows: `attemptsPer24h`); when several rules carry one, the strictest (lowest) binds, as for
 * hours every rule must be satisfied. A number whose rules carry no cap has none.
 */
import type { JurisdictionRule } from "./CallingPolicy.ts"

/**
 * The binding cap: at most `limit` attempts per rolling 24 h, from the rule of `jurisdiction`.
 *
 * @category models
 */
export interface AttemptCap {
  readonly jurisdiction: string
  readonly limit: number
}

/** The window the caps of the policy count over (its rows say "per 24 hours", rolling). */
export const CAP_WINDOW_MS = 86_400_000

/**
 * The strictest cap among `rules` (the first such rule on a tie), or `undefined` when none of them has one.
 *
 * @category combinators
 */
export const attemptCapOf = (rules: ReadonlyArray<JurisdictionRule>): AttemptCap | undefined => {
  let cap: AttemptCap | undefined
  for (const rule of rules) {
    const limit = rule.attemptsPer24h
    if (limit !== undefined && (cap === undefined || limit < cap.limit)) {
      cap = { jurisdiction: rule.jurisdiction, limit }
    }
  }
  return cap
}

/**
 * How a cap is named in a waiting task's `state_reason` (`attempt_cap: FL 3 per 24h until <instant>`).
 *
 * @category combinators
 */
export const capLabel = (cap: AttemptCap): string => `${cap.jurisdiction} ${cap.limit} per 24h`
