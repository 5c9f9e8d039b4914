/**
 * An organisation's effective calling policy (decision 0628: "Per-org override of the policy (stricter always
 * allowed; looser only with an explicit, audited admin flag)"): the default policy (CallingPolicy.defaultPolicy, the
 * reference's rows) with the org's override applied.
 *
 * These are decisions, so they live here and their callers run them (the admin commands that set an override, the
 * scheduler's LegalityCache and the legal-hours report that read one); the store keeps the override as it was decided
 * and returns it as stored (dependency rule 3, docs/architecture.md).
 */
import { Result, Schema } from "effect"
import {
  applyOverride,
  type CallingPolicy,
  defaultPolicy,
  type JurisdictionRule,
  loosenings,
  type LooserThanPolicy,
  PolicyOverride
} from "./CallingPolicy.ts"

/**
 * An org's effective policy and the version of its override (0: none, the default policy).
 *
 * @category models
 */
export interface EffectivePolicy {
  readonly policy: CallingPolicy
  readonly version: number
  readonly override: PolicyOverride | undefined
}

/**
 * The default policy, version 0: what an org without an override dials under.
 *
 * @category constructors
 */
export const defaultEffective: EffectivePolicy = { policy: defaultPolicy, version: 0, override: undefined }

const decodeOverride = Schema.decodeUnknownSync(PolicyOverride)
const encodeOverride = Schema.encodeSync(PolicyOverride)

/**
 * The default row an override row replaces: its state's, or the federal row (which applies anyway, and which a "US"
 * row replaces: the default policy has no state row named "US", CallingPolicy.test holds its rows).
 */
const baseOf = (jurisdiction: string): JurisdictionRule =>
  defaultPolicy.states.find((r) => r.jurisdiction === jurisdiction) ?? defaultPolicy.federal

/**
 * The effective policy of a stored override. A stored override was valid when it was set (its looser rows approved);
 * the default policy may have become stricter since (a corrected row), so each row is applied again: an approved
 * override's rows as they are, an unapproved one's only where they are still stricter or equal (elsewhere the
 * default row stays, never a looser row nobody approved). An override that no longer decodes: the default policy.
 *
 * @category combinators
 */
export const effectiveOf = (override: unknown, version: number): EffectivePolicy => {
  let decoded: PolicyOverride
  try {
    decoded = decodeOverride(override)
  } catch {
    return { ...defaultEffective, version }
  }
  const rules = decoded.allowLooser !== undefined
    ? decoded.rules
    : decoded.rules.filter((row) => loosenings(row, baseOf(row.jurisdiction)).length === 0)
  const applied = applyOverride(defaultPolicy, { ...decoded, rules })
  return Result.isSuccess(applied)
    ? { policy: applied.success, version, override: decoded }
    : { ...defaultEffective, version }
}

/**
 * The effective policy of a stored override, or of none (the default policy, version 0).
 *
 * @category combinators
 */
export const effectiveOfStored = (
  stored: { readonly override: unknown; readonly version: number } | undefined
): EffectivePolicy => stored === undefined ? defaultEffective : effectiveOf(stored.override, stored.version)

/**
 * The looser rows of an override against the default policy, one line each (empty: stricter or equal): what the
 * audit log records beside the approval.
 *
 * @category combinators
 */
export const looseningsOf = (override: PolicyOverride): Array<string> => {
  const lines: Array<string> = []
  for (const row of override.rules) {
    for (const problem of loosenings(row, baseOf(row.jurisdiction))) {
      lines.push(`override ${row.jurisdiction} ${problem}`)
    }
  }
  return lines
}

/**
 * An override decided acceptable: the policy it makes, the form it is stored in, and its looser rows (each approved
 * by `override.allowLooser`) for the audit log.
 *
 * @category models
 */
export interface DecidedOverride {
  readonly override: PolicyOverride
  readonly policy: CallingPolicy
  /** The override encoded for storage (JSON). */
  readonly stored: unknown
  readonly loosenings: ReadonlyArray<string>
}

/**
 * Whether an org may set this override: a row looser than the default row it replaces is refused
 * (`LooserThanPolicy`, naming every loosening) unless the override carries the admin's approval (`allowLooser`).
 *
 * @category combinators
 */
export const decideOverride = (override: PolicyOverride): Result.Result<DecidedOverride, LooserThanPolicy> =>
  Result.map(applyOverride(defaultPolicy, override), (policy) => ({
    override,
    policy,
    stored: encodeOverride(override),
    loosenings: looseningsOf(override)
  }))
