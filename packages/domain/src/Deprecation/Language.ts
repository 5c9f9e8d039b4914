/**
 * The scalar agent language `multi` (spec: Versioning row 7, "Removed: scalar `multi` value of
 * agent `language`"; spec: Errors, "a request that sends the scalar `multi` as an agent `language`
 * is rejected").
 *
 * The value is rejected only as a scalar: a locale array is the replacement. Request validation
 * uses `validateAgentLanguage` (time from `Clock`); the linter gets the same decision as a finding
 * through the engine.
 *
 * @category models
 */
import { Clock, Effect, Schema } from "effect"
import { multiLocales } from "./Catalogue.ts"
import { type Fix, type JsonPath, set } from "./Fixes.ts"
import { type AsOf, type Finding, makeFinding, removedOn, toEpochMillis } from "./Rule.ts"
import { getRule } from "./Schedule.ts"

const rule = getRule("agent-language-multi")

/**
 * Whether a `language` value is the scalar `multi`.
 *
 * @category guards
 */
export const isScalarMultiLanguage = (language: unknown): language is "multi" => language === "multi"

/**
 * The suggested edit for a scalar `multi`: the locale array of `Catalogue.multiLocales`. Unsafe,
 * because the spec does not name the ten locales the platform migrated existing agents to.
 *
 * @category constructors
 */
export const multiLanguageFix = (path: JsonPath): Fix => ({
  description: `replace the scalar "multi" with a locale array (${multiLocales.length} locales; review them)`,
  safe: false,
  operations: [set(path, multiLocales)]
})

/**
 * The finding for an agent `language` value at `path`, or `undefined` when the value is not the
 * scalar `multi`. The severity follows the schedule: `upcoming` before 2026-07-31, `removed` from
 * 2026-07-31T00:00:00Z.
 *
 * @category combinators
 */
export const checkAgentLanguage = (
  language: unknown,
  asOf: AsOf,
  path: JsonPath = ["language"]
): Finding | undefined =>
  language === "multi"
    ? makeFinding(rule, toEpochMillis(asOf), path, "the scalar language \"multi\"", multiLanguageFix(path))
    : undefined

/**
 * A request sent the scalar `multi` as an agent `language` after its removal.
 *
 * @category errors
 */
export class ScalarMultiLanguageRejected extends Schema.TaggedError<ScalarMultiLanguageRejected>()(
  "ScalarMultiLanguageRejected",
  {
    ruleId: Schema.Literal("agent-language-multi"),
    removedOn: Schema.String,
    replacement: Schema.String
  }
) {
  override get message(): string {
    return `language "multi" was removed on ${this.removedOn}; send ${this.replacement}`
  }
}

/**
 * Fails with `ScalarMultiLanguageRejected` when `language` is the scalar `multi` and the current
 * time (from `Clock`) is on or after the removal date.
 *
 * @category combinators
 */
export const validateAgentLanguage = Effect.fnUntraced(
  function*(language: unknown): Effect.fn.Return<void, ScalarMultiLanguageRejected> {
    if (language !== "multi") return
    const now = yield* Clock.currentTimeMillis
    const finding = checkAgentLanguage(language, now)
    // Stryker disable next-line OptionalChaining: equivalent — checkAgentLanguage("multi", …) is never undefined
    if (finding?.severity === "removed") {
      return yield* new ScalarMultiLanguageRejected({
        ruleId: "agent-language-multi",
        // Row 7 has one milestone, its removal: a `removed` finding's date is removedOn(rule) (`&&` gives the same).
        // Stryker disable next-line LogicalOperator: equivalent — see the line above
        removedOn: removedOn(rule) ?? finding.date,
        replacement: rule.replacement
      })
    }
  }
)
