// Rule.ts: dates, milestones and the wording of findings. The timelines of the schedule's rules are in
// Schedule.test.ts; these are the edges mutation testing found unpinned (issue 28 item 1). Expectations: the design's
// "every date takes effect at 00:00 UTC" and `YYYY-MM-DD` dates (docs/lint.md, `--as-of YYYY-MM-DD`), and the message
// shape docs/api.md shows for the same rules ("... is deprecated since 2026-09-30 ...; use ...", "... was removed on
// 2026-07-31; use ...").
import { assert, describe, it } from "@effect/vitest"
import { makeFinding, nextMilestone, utcMidnight } from "../../src/Deprecation/Rule.ts"
import { getRule } from "../../src/Deprecation/Schedule.ts"

const at = (iso: string) => Date.parse(iso)

describe("utcMidnight", () => {
  it("reads only a whole YYYY-MM-DD date, and says so naming what it got", () => {
    for (const text of ["2026-07-31T00:00:00Z", "12026-07-31", "x2026-07-31", "2026-07-31 ", "07/31/2026"]) {
      assert.throws(() => utcMidnight(text), /YYYY-MM-DD/, undefined, text)
      assert.throws(() => utcMidnight(text), text)
    }
    assert.strictEqual(utcMidnight("2026-07-31"), at("2026-07-31T00:00:00Z"))
  })
})

describe("nextMilestone", () => {
  it("counts a milestone as started from 00:00 UTC of its date: the next one is the one after it", () => {
    const calendar = getRule("calendar-cal-tools")
    assert.strictEqual(nextMilestone(calendar, at("2026-09-29T23:59:59.999Z"))?.date, "2026-09-30")
    assert.strictEqual(nextMilestone(calendar, at("2026-09-30T00:00:00Z"))?.date, "2026-10-31")
    assert.strictEqual(nextMilestone(calendar, at("2026-10-31T00:00:00Z")), undefined)
  })
})

describe("makeFinding", () => {
  it("says 'is deprecated since' a rule's date, and announces no removal the schedule does not have", () => {
    const finding = makeFinding(getRule("cold-transfer-mode"), at("2026-02-01T00:00:00Z"), ["x"], "the thing")
    assert.strictEqual(finding.severity, "deprecated")
    assert.include(finding.message, "the thing is deprecated since 2026-01-23")
    assert.notInclude(finding.message, "removed")
    assert.match(finding.message, /; use .*cold_transfer_mode/)
  })

  it("names the removal date while a rule with one is deprecated, and the date it happened once removed", () => {
    const calendar = getRule("calendar-cal-tools")
    const deprecated = makeFinding(calendar, at("2026-10-01T00:00:00Z"), [], "the tool")
    assert.include(deprecated.message, "the tool is deprecated since 2026-09-30 and will be removed on 2026-10-31")
    const removed = makeFinding(calendar, at("2026-11-01T00:00:00Z"), [], "the tool")
    assert.include(removed.message, "the tool was removed on 2026-10-31; use the calendar integration")
  })

  it("leaves the optional fix out of a finding that has none", () => {
    const finding = makeFinding(getRule("model-retirements"), at("2030-01-01T00:00:00Z"), ["model"], "the model")
    assert.notProperty(finding, "fix")
    assert.deepStrictEqual(Object.keys(finding).sort(), [
      "date",
      "message",
      "path",
      "replacement",
      "ruleId",
      "severity"
    ])
  })
})
