import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import {
  checkAgentLanguage,
  isScalarMultiLanguage,
  ScalarMultiLanguageRejected,
  validateAgentLanguage
} from "../../src/Deprecation/Language.ts"

const at = (iso: string) => Date.parse(iso)

describe("Language", () => {
  it("recognises only the scalar multi", () => {
    assert.isTrue(isScalarMultiLanguage("multi"))
    assert.isFalse(isScalarMultiLanguage(["multi"]))
    assert.isFalse(isScalarMultiLanguage("en-US"))
    assert.isFalse(isScalarMultiLanguage(undefined))
  })

  it("reports multi at the path it was found", () => {
    const finding = checkAgentLanguage("multi", at("2026-08-01T00:00:00Z"), ["tasks", 0, "agent_override", "agent"])
    assert.deepStrictEqual(finding?.path, ["tasks", 0, "agent_override", "agent"])
    assert.strictEqual(finding?.severity, "removed")
    assert.strictEqual(checkAgentLanguage(["en-US", "es-ES"], at("2026-08-01T00:00:00Z")), undefined)
  })

  it.effect("accepts multi until 2026-07-30T23:59:59Z (Clock)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(at("2026-07-30T23:59:59Z"))
      yield* validateAgentLanguage("multi")
    }))

  it.effect("rejects multi from 2026-07-31T00:00:00Z, naming the replacement and the date", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(at("2026-07-31T00:00:00Z"))
      const error = yield* Effect.flip(validateAgentLanguage("multi"))
      assert.instanceOf(error, ScalarMultiLanguageRejected)
      assert.strictEqual(error._tag, "ScalarMultiLanguageRejected")
      assert.strictEqual(error.removedOn, "2026-07-31")
      assert.include(error.message, "2026-07-31")
      assert.include(error.message, "locale array")
    }))

  it.effect("accepts locale strings and arrays after the removal", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(at("2027-01-01T00:00:00Z"))
      yield* validateAgentLanguage("en-US")
      yield* validateAgentLanguage(["en-US", "fr-FR"])
      yield* validateAgentLanguage(undefined)
    }))
})

// Found unpinned by mutation testing (issue 28 item 1). Expectations: spec row 7 (the scalar `multi` of agent
// `language`, replaced by a locale array; existing agents got 10 locales) and docs/lint.md (the locale list is a
// suggestion to review, never applied by --fix).
describe("Language, what the finding and its suggestion say", () => {
  it("names the language field's value and the replacement in the finding", () => {
    const finding = checkAgentLanguage("multi", at("2026-08-01T00:00:00Z"))
    assert.include(finding?.message, "\"multi\"")
    assert.include(finding?.message, "language")
    assert.include(finding?.message, "was removed on 2026-07-31")
    assert.include(finding?.message, "locale array")
  })

  it("offers the locale array as a suggestion to review, not a safe fix", () => {
    const fix = checkAgentLanguage("multi", at("2026-08-01T00:00:00Z"))?.fix
    assert.strictEqual(fix?.safe, false)
    assert.include(fix?.description, "\"multi\"")
    assert.include(fix?.description, "locale array")
    assert.include(fix?.description, "10 locales")
    assert.include(fix?.description, "review")
  })
})
