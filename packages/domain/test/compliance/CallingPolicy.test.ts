import { assert, describe, it } from "@effect/vitest"
import { Cause, Exit, Result, Schema } from "effect"
import { describeIssue } from "../../src/CallWindow.ts"
import { attemptCapOf } from "../../src/compliance/AttemptCaps.ts"
import {
  applyOverride,
  CallingPolicy,
  defaultPolicy,
  isStricterOrEqual,
  JurisdictionRule,
  loosenings,
  PolicyOverride,
  rulesFor
} from "../../src/compliance/CallingPolicy.ts"
import { allRows, parseHours, weekdays } from "../../test-support/compliance/CallingRulesTable.ts"

const row = (jurisdiction: string) => defaultPolicy.states.find((r) => r.jurisdiction === jurisdiction)!
const federal = defaultPolicy.federal
const fl = row("FL")

describe("CallingPolicy", () => {
  it("holds the rows of calling-rules.md and decodes as its own schema", () => {
    assert.isTrue(Exit.isSuccess(Schema.decodeUnknownExit(CallingPolicy)(defaultPolicy)))
    assert.deepStrictEqual(federal.hours, [{ days: federal.hours[0]!.days, start: 480, end: 1260 }])
    assert.deepStrictEqual(
      defaultPolicy.states.filter((r) => r.attemptsPer24h === 3).map((r) => r.jurisdiction),
      ["FL", "OK", "MD"]
    )
    assert.deepStrictEqual(
      defaultPolicy.states.filter((r) => r.noHolidays).map((r) => r.jurisdiction),
      ["AL", "LA", "PA"]
    )
    assert.strictEqual(row("CT").hours[0]!.end, 1200) // the stricter of 9-20 and 9-21
    assert.deepStrictEqual(row("TX").hours.map((h) => [h.days.length, h.start]), [[6, 540], [1, 720]])
    // Every state row is at least as strict as the federal one.
    for (const state of defaultPolicy.states) assert.isTrue(isStricterOrEqual(state, federal), state.jurisdiction)
  })

  // Issue 28: the policy against a table written by hand from calling-rules.md (test-support/compliance), row by
  // row and minute by minute, so a wrong hour, day, holiday flag or cap in any row fails here.
  it("equals the independent table of calling-rules.md in every row: hours per weekday, holidays, cap", () => {
    const policyRows = [federal, ...defaultPolicy.states]
    assert.deepStrictEqual(
      policyRows.map((r) => r.jurisdiction).sort(),
      allRows.map((r) => r.jurisdiction).sort(),
      "the same jurisdictions"
    )
    for (const expected of allRows) {
      const rule = policyRows.find((r) => r.jurisdiction === expected.jurisdiction)!
      for (const day of weekdays) {
        const open = new Set<number>()
        for (const hours of rule.hours) {
          if (hours.days.includes(day)) { for (let m = hours.start; m < hours.end; m++) open.add(m) }
        }
        const want = expected.hours[day]
        const { end, start } = want === null ? { start: 0, end: 0 } : parseHours(want)
        const wrong: Array<number> = []
        for (let m = 0; m < 1440; m++) if (open.has(m) !== (start <= m && m < end)) wrong.push(m)
        assert.deepStrictEqual(
          wrong.length === 0 ? "as the table" : `differs at local minutes ${wrong[0]}..${wrong[wrong.length - 1]}`,
          "as the table",
          `${expected.jurisdiction} ${day}: the table says ${want ?? "closed"}`
        )
      }
      assert.strictEqual(rule.noHolidays, expected.closedOnHolidays, `${expected.jurisdiction} holidays`)
      assert.strictEqual(rule.attemptsPer24h ?? null, expected.attemptsPer24h, `${expected.jurisdiction} cap`)
      // the cap that binds a number of the state alone (with the federal rule, which has none)
      const cap = attemptCapOf(rulesFor(defaultPolicy, [expected.jurisdiction]))
      assert.deepStrictEqual(
        cap,
        expected.attemptsPer24h === null
          ? undefined
          : { jurisdiction: expected.jurisdiction, limit: expected.attemptsPer24h },
        `${expected.jurisdiction} binding cap`
      )
    }
  })

  it("rejects malformed rows, naming the field and the rule", () => {
    const bad = { ...fl, jurisdiction: "Florida", hours: [{ days: [], start: 600, end: 600 }] }
    const exit = Schema.decodeUnknownExit(JurisdictionRule, { errors: "all" })(bad)
    assert.isTrue(Exit.isFailure(exit))
    const text = String(exit)
    assert.include(text, "must be US or a two-letter state code")
    assert.include(text, "must list at least one day")
    // The cross-field rule runs once the fields themselves are valid.
    const inverted = Schema.decodeUnknownExit(JurisdictionRule)({
      ...fl,
      hours: [{ days: ["Monday"], start: 600, end: 600 }]
    })
    assert.include(String(inverted), "must be greater than start (got start=600, end=600)")
    assert.isTrue(Exit.isFailure(Schema.decodeUnknownExit(JurisdictionRule)({ ...fl, hours: [] })))
    assert.isTrue(Exit.isFailure(Schema.decodeUnknownExit(JurisdictionRule)({ ...fl, attemptsPer24h: 0 })))
  })

  it("resolves a task's rules from its area-code and address states, without duplicates", () => {
    assert.deepStrictEqual(rulesFor(defaultPolicy, []), [federal])
    assert.deepStrictEqual(rulesFor(defaultPolicy, ["FL", "fl", " FL "]), [federal, fl])
    assert.deepStrictEqual(rulesFor(defaultPolicy, ["NY", "TX"]), [federal, row("TX")])
  })

  describe("stricter-or-equal", () => {
    it("accepts equal and narrower hours, fewer attempts, more closed days", () => {
      assert.isTrue(isStricterOrEqual(fl, fl))
      assert.isTrue(isStricterOrEqual({ ...fl, hours: [{ days: ["Monday"], start: 600, end: 900 }] }, fl))
      assert.isTrue(isStricterOrEqual({ ...fl, attemptsPer24h: 2, noHolidays: true }, fl))
    })

    it("names every way a row is looser", () => {
      assert.deepStrictEqual(
        loosenings({ ...fl, hours: [{ days: ["Sunday"], start: 420, end: 1230 }], attemptsPer24h: 4 }, fl),
        [
          "allows Sunday 07:00-08:00, which FL forbids",
          "allows Sunday 20:00-20:30, which FL forbids",
          "allows 4 attempts per 24 h, FL at most 3"
        ]
      )
      const { attemptsPer24h: _, ...uncapped } = fl
      assert.deepStrictEqual(loosenings(uncapped, fl), ["allows unlimited attempts per 24 h, FL at most 3"])
      assert.deepStrictEqual(loosenings({ ...row("AL"), noHolidays: false }, row("AL")), [
        "allows legal holidays, which AL forbids"
      ])
    })
  })

  describe("applyOverride", () => {
    it("accepts a stricter override and replaces the row", () => {
      const stricter = { ...fl, hours: [{ ...fl.hours[0]!, start: 540 }], attemptsPer24h: 2 }
      const result = applyOverride(defaultPolicy, { rules: [stricter] })
      assert.isTrue(Result.isSuccess(result))
      if (Result.isSuccess(result)) {
        assert.strictEqual(result.success.states.find((r) => r.jurisdiction === "FL"), stricter)
        assert.strictEqual(result.success.states.length, defaultPolicy.states.length)
      }
    })

    it("rejects a looser override without the admin flag, naming the rows", () => {
      const looser = { ...federal, hours: [{ ...federal.hours[0]!, end: 1320 }] }
      const result = applyOverride(defaultPolicy, { rules: [looser, { ...fl, attemptsPer24h: 5 }] })
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        assert.strictEqual(result.failure._tag, "LooserThanPolicy")
        assert.deepStrictEqual(result.failure.problems, [
          "override US allows Monday 21:00-22:00, which US forbids",
          "override US allows Tuesday 21:00-22:00, which US forbids",
          "override US allows Wednesday 21:00-22:00, which US forbids",
          "override US allows Thursday 21:00-22:00, which US forbids",
          "override US allows Friday 21:00-22:00, which US forbids",
          "override US allows Saturday 21:00-22:00, which US forbids",
          "override US allows Sunday 21:00-22:00, which US forbids",
          "override FL allows 5 attempts per 24 h, FL at most 3"
        ])
        assert.include(result.failure.message, "no admin approval (allowLooser)")
      }
    })

    it("accepts a looser override with an audited admin approval", () => {
      const override = Schema.decodeUnknownSync(PolicyOverride)({
        rules: [{ ...fl, attemptsPer24h: 5 }],
        allowLooser: { approvedBy: "admin@example.com", reason: "consent on file for every contact" }
      })
      const result = applyOverride(defaultPolicy, override)
      assert.isTrue(Result.isSuccess(result))
      assert.isTrue(Exit.isFailure(Schema.decodeUnknownExit(PolicyOverride)({ rules: [], allowLooser: {} })))
    })

    it("compares a row for a new state with the federal rule and adds it", () => {
      const ny = { ...federal, jurisdiction: "NY", hours: [{ ...federal.hours[0]!, start: 540 }] }
      const result = applyOverride(defaultPolicy, { rules: [ny] })
      assert.isTrue(Result.isSuccess(result))
      if (Result.isSuccess(result)) assert.deepStrictEqual(rulesFor(result.success, ["NY"]), [federal, ny])
      assert.isTrue(
        Result.isFailure(applyOverride(defaultPolicy, { rules: [{ ...ny, hours: [{ ...ny.hours[0]!, start: 420 }] }] }))
      )
    })
  })
})

// Edges that mutation testing (issue 28 item 1; docs/testing.md) found unpinned. The expectations are the rows of
// calling-rules.md and the override rules of this module's contract (decision 0621, 0628): "US" replaces the
// federal row, a looser row is one that allows a minute the base forbids.
describe("CallingPolicy edges", () => {
  it("names the end of an hours row whose start is not before its end, as a call window does", () => {
    const input = { ...fl, hours: [{ days: ["Monday"], start: 600, end: 600 }] }
    const exit = Schema.decodeUnknownExit(JurisdictionRule, { errors: "all" })(input)
    assert.isTrue(Exit.isFailure(exit))
    if (Exit.isFailure(exit)) {
      const error = Cause.squash(exit.cause)
      assert.isTrue(Schema.isSchemaError(error))
      if (Schema.isSchemaError(error)) {
        assert.deepStrictEqual(describeIssue(error.issue, input, ""), [
          "hours[0].end must be greater than start (got start=600, end=600)"
        ])
      }
    }
  })

  it("finds the row of an address state written with blanks or in lower case", () => {
    assert.deepStrictEqual(rulesFor(defaultPolicy, [" fl "]), [federal, fl])
    assert.deepStrictEqual(rulesFor(defaultPolicy, ["\ttx\n"]), [federal, row("TX")])
  })

  it("does not call the federal rule stricter or equal to Florida's: it allows 20:00-21:00 (Fla. Stat. 501.616(6))", () => {
    assert.isFalse(isStricterOrEqual(federal, fl))
    assert.isFalse(isStricterOrEqual({ ...row("AL"), noHolidays: false }, row("AL")))
  })

  it("replaces the federal row with a stricter US override and leaves the state rows as they are", () => {
    const us = { ...federal, hours: [{ ...federal.hours[0]!, start: 540 }] }
    const result = applyOverride(defaultPolicy, { rules: [us] })
    assert.isTrue(Result.isSuccess(result))
    if (Result.isSuccess(result)) {
      assert.strictEqual(result.success.federal, us)
      assert.deepStrictEqual(result.success.states, defaultPolicy.states)
      assert.deepStrictEqual(rulesFor(result.success, ["TX"]), [us, row("TX")])
    }
  })

  it("keeps each looser row a readable clause of the message, none run into the next", () => {
    const result = applyOverride(defaultPolicy, {
      rules: [{ ...fl, attemptsPer24h: 5 }, { ...row("AL"), noHolidays: false }]
    })
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) {
      const { message, problems } = result.failure
      assert.deepStrictEqual(problems, [
        "override FL allows 5 attempts per 24 h, FL at most 3",
        "override AL allows legal holidays, which AL forbids"
      ])
      for (const problem of problems) assert.include(message, problem)
      assert.notInclude(message, `${problems[0]}${problems[1]}`)
    }
  })
})
