import { assert, describe, it } from "@effect/vitest"
import { DateTime } from "effect"
import { kindsChecked } from "../../src/Deprecation/Engine.ts"
import {
  classify,
  deprecatedOn,
  milestoneAt,
  nextMilestone,
  removedOn,
  type RuleId,
  statusAt,
  utcMidnight
} from "../../src/Deprecation/Rule.ts"
import { getRule, isRuleId, ruleIds, rules } from "../../src/Deprecation/Schedule.ts"

const at = (iso: string) => Date.parse(iso)

describe("Schedule", () => {
  it("covers every one of the spec's twelve rows", () => {
    assert.deepStrictEqual([...new Set(rules.map((rule) => rule.row))].sort((a, b) => a - b), [
      1,
      2,
      3,
      4,
      5,
      6,
      7,
      8,
      9,
      10,
      11,
      12
    ])
  })

  it("has unique kebab-case ids, each resolvable", () => {
    assert.strictEqual(new Set(ruleIds).size, rules.length)
    for (const id of ruleIds) {
      assert.match(id, /^[a-z0-9]+(-[a-z0-9]+)*$/)
      assert.isTrue(isRuleId(id))
      assert.strictEqual(getRule(id).id, id)
    }
    assert.isFalse(isRuleId("no-such-rule"))
  })

  it("keeps milestones non-empty, sorted and at 00:00 UTC of their date", () => {
    for (const rule of rules) {
      assert.isAbove(rule.milestones.length, 0, rule.id)
      for (const [i, m] of rule.milestones.entries()) {
        assert.strictEqual(m.at, Date.parse(`${m.date}T00:00:00Z`), rule.id)
        const previous = rule.milestones[i - 1]
        if (previous !== undefined) assert.isBelow(previous.at, m.at, rule.id)
      }
    }
  })

  it("checks configs in exactly the kinds a rule declares", () => {
    for (const rule of rules) assert.deepStrictEqual(kindsChecked(rule.id), rule.configs, rule.id)
  })

  it("gives endpoint rules endpoints and no other rule any", () => {
    for (const rule of rules) {
      assert.strictEqual(rule.endpoints.length > 0, rule.kind === "endpoint", rule.id)
    }
  })

  it("marks fixable exactly the rules the engine proposes fixes for", () => {
    const fixable = rules.filter((rule) => rule.fixable).map((rule) => rule.id)
    assert.deepStrictEqual(fixable, [
      "cold-transfer-mode",
      "phone-number-single-agent-fields",
      "conversation-node-tools",
      "legacy-analysis-prompts",
      "agent-language-multi"
    ])
  })
})

// One entry per rule: [id, instants and the status expected there]. The instants are the second
// before each date, the date itself at 00:00:00Z, and a time long after.
const timeline: ReadonlyArray<readonly [RuleId, ReadonlyArray<readonly [string, string]>]> = [
  ["cold-transfer-mode", [
    ["2026-01-22T23:59:59Z", "upcoming"],
    ["2026-01-23T00:00:00Z", "deprecated"],
    ["2030-01-01T00:00:00Z", "deprecated"]
  ]],
  ["phone-number-single-agent-fields", [
    ["2026-03-30T23:59:59Z", "upcoming"],
    ["2026-03-31T00:00:00Z", "deprecated"],
    ["2030-01-01T00:00:00Z", "deprecated"]
  ]],
  ["model-retirements", [
    ["2026-04-02T23:59:59Z", "upcoming"],
    ["2026-04-03T00:00:00Z", "deprecated"],
    ["2026-05-24T23:59:59Z", "deprecated"],
    ["2026-05-25T00:00:00Z", "deprecated"],
    ["2026-07-11T23:59:59Z", "deprecated"],
    ["2026-07-12T00:00:00Z", "removed"],
    ["2030-01-01T00:00:00Z", "removed"]
  ]],
  ["conversation-node-tools", [
    ["2026-04-17T23:59:59Z", "upcoming"],
    ["2026-04-18T00:00:00Z", "deprecated"],
    ["2030-01-01T00:00:00Z", "deprecated"]
  ]],
  ["legacy-list-endpoints", [
    ["2026-06-14T23:59:59Z", "upcoming"],
    ["2026-06-15T00:00:00Z", "removed"],
    ["2030-01-01T00:00:00Z", "removed"]
  ]],
  ["legacy-analysis-prompts", [
    ["2026-06-14T23:59:59Z", "upcoming"],
    ["2026-06-15T00:00:00Z", "removed"],
    ["2030-01-01T00:00:00Z", "removed"]
  ]],
  ["publish-agent-endpoints", [
    ["2026-07-19T23:59:59Z", "upcoming"],
    ["2026-07-20T00:00:00Z", "removed"],
    ["2030-01-01T00:00:00Z", "removed"]
  ]],
  ["legacy-mcp-server", [
    ["2026-07-19T23:59:59Z", "upcoming"],
    ["2026-07-20T00:00:00Z", "removed"],
    ["2030-01-01T00:00:00Z", "removed"]
  ]],
  ["list-agents-v1", [
    ["2026-07-30T23:59:59Z", "upcoming"],
    ["2026-07-31T00:00:00Z", "removed"],
    ["2030-01-01T00:00:00Z", "removed"]
  ]],
  ["agent-language-multi", [
    ["2026-07-30T23:59:59Z", "upcoming"],
    ["2026-07-31T00:00:00Z", "removed"],
    ["2030-01-01T00:00:00Z", "removed"]
  ]],
  ["update-call-live-fields", [
    ["2026-08-30T23:59:59Z", "upcoming"],
    ["2026-08-31T00:00:00Z", "deprecated"],
    ["2030-01-01T00:00:00Z", "deprecated"]
  ]],
  ["get-agent-versions", [
    ["2026-09-14T23:59:59Z", "upcoming"],
    ["2026-09-15T00:00:00Z", "removed"],
    ["2030-01-01T00:00:00Z", "removed"]
  ]],
  ["web-client-v2", [
    ["2026-09-29T23:59:59Z", "upcoming"],
    ["2026-09-30T00:00:00Z", "deprecated"],
    ["2030-01-01T00:00:00Z", "deprecated"]
  ]],
  ["create-web-call-v2", [
    ["2026-09-29T23:59:59Z", "upcoming"],
    ["2026-09-30T00:00:00Z", "deprecated"],
    ["2030-01-01T00:00:00Z", "deprecated"]
  ]],
  ["legacy-sip-endpoint", [
    ["2025-10-31T23:59:59Z", "upcoming"],
    ["2025-11-01T00:00:00Z", "deprecated"],
    ["2026-09-29T23:59:59Z", "deprecated"],
    ["2026-09-30T00:00:00Z", "removed"],
    ["2030-01-01T00:00:00Z", "removed"]
  ]],
  ["calendar-cal-tools", [
    ["2026-09-29T23:59:59Z", "upcoming"],
    ["2026-09-30T00:00:00Z", "deprecated"],
    ["2026-10-30T23:59:59Z", "deprecated"],
    ["2026-10-31T00:00:00Z", "removed"],
    ["2030-01-01T00:00:00Z", "removed"]
  ]]
]

describe("statusAt", () => {
  it("has a timeline for every rule", () => {
    assert.deepStrictEqual(timeline.map(([id]) => id), ruleIds)
  })

  for (const [id, points] of timeline) {
    it(`moves ${id} through its dates at 00:00 UTC`, () => {
      const rule = getRule(id)
      for (const [instant, expected] of points) {
        assert.strictEqual(statusAt(rule, at(instant)), expected, `${id} at ${instant}`)
        // The same instant as a Date and as a DateTime.
        assert.strictEqual(statusAt(rule, new Date(instant)), expected)
        assert.strictEqual(statusAt(rule, DateTime.makeUnsafe(instant)), expected)
      }
    })
  }

  it("dates a status with the milestone in effect, or the next one while upcoming", () => {
    const calendar = getRule("calendar-cal-tools")
    assert.deepStrictEqual(classify(calendar, at("2026-09-01T00:00:00Z")), { status: "upcoming", date: "2026-09-30" })
    assert.deepStrictEqual(classify(calendar, at("2026-10-01T00:00:00Z")), {
      status: "deprecated",
      date: "2026-09-30"
    })
    assert.deepStrictEqual(classify(calendar, at("2026-11-01T00:00:00Z")), { status: "removed", date: "2026-10-31" })
    assert.strictEqual(milestoneAt(calendar, at("2026-09-01T00:00:00Z")), undefined)
    assert.strictEqual(nextMilestone(calendar, at("2026-10-01T00:00:00Z"))?.date, "2026-10-31")
    assert.strictEqual(nextMilestone(calendar, at("2026-11-01T00:00:00Z")), undefined)
    assert.strictEqual(deprecatedOn(calendar), "2026-09-30")
    assert.strictEqual(removedOn(calendar), "2026-10-31")
    assert.strictEqual(removedOn(getRule("cold-transfer-mode")), undefined)
    assert.strictEqual(deprecatedOn(getRule("list-agents-v1")), undefined)
  })

  it("reads dates as 00:00 UTC", () => {
    assert.strictEqual(utcMidnight("2026-07-31"), Date.parse("2026-07-31T00:00:00Z"))
    assert.throws(() => utcMidnight("07/31/2026"))
  })
})

describe("getRule", () => {
  // Found unpinned by mutation testing (issue 28 item 1): ids reach the schedule from config files and inline
  // comments, which isRuleId checks first; a bug that skipped that check must fail loudly, naming the id.
  it("refuses an id the schedule does not have, naming it", () => {
    assert.throws(() => getRule("no-such-rule" as RuleId), /no-such-rule/)
  })
})
