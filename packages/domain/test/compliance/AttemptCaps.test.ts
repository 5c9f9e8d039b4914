import { assert, describe, it } from "@effect/vitest"
import { attemptCapOf, capLabel } from "../../src/compliance/AttemptCaps.ts"
import { defaultPolicy, type JurisdictionRule, rulesFor } from "../../src/compliance/CallingPolicy.ts"
import { constraintOf } from "../../src/compliance/LegalGroups.ts"

const rule = (jurisdiction: string, attemptsPer24h?: number): JurisdictionRule => ({
  jurisdiction,
  hours: [{ days: ["Monday"], start: 480, end: 1200 }],
  noHolidays: false,
  ...(attemptsPer24h === undefined ? {} : { attemptsPer24h }),
  source: "test",
  verified: "yes"
})

describe("AttemptCaps", () => {
  it("FL, OK and MD numbers are capped at 3 per 24 h by the default policy; the federal rule alone has no cap", () => {
    for (const state of ["FL", "OK", "MD"]) {
      assert.deepStrictEqual(attemptCapOf(rulesFor(defaultPolicy, [state])), { jurisdiction: state, limit: 3 })
    }
    assert.strictEqual(attemptCapOf(rulesFor(defaultPolicy, [])), undefined)
    assert.strictEqual(attemptCapOf(rulesFor(defaultPolicy, ["NY", "TX", "CT"])), undefined)
    // from the number: Miami (305) is FL, New York (212) is not capped
    assert.deepStrictEqual(attemptCapOf(constraintOf("+13055550100")!.rules), { jurisdiction: "FL", limit: 3 })
    assert.strictEqual(attemptCapOf(constraintOf("+12125550100")!.rules), undefined)
  })

  it("the strictest cap of the rules binds; on a tie the first rule names it", () => {
    assert.deepStrictEqual(attemptCapOf([rule("US"), rule("FL", 3), rule("XX", 2), rule("YY", 5)]), {
      jurisdiction: "XX",
      limit: 2
    })
    assert.deepStrictEqual(attemptCapOf([rule("AA", 4), rule("BB", 4)]), { jurisdiction: "AA", limit: 4 })
    assert.strictEqual(attemptCapOf([]), undefined)
  })

  it("names a cap as state_reason shows it", () => {
    assert.strictEqual(capLabel({ jurisdiction: "FL", limit: 3 }), "FL 3 per 24h")
  })
})
