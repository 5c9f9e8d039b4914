import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import type { CallTimeWindow } from "../../src/CallWindow.ts"
import { defaultPolicy, type JurisdictionRule, rulesFor } from "../../src/compliance/CallingPolicy.ts"
import { explain, nextLegalOpening, ruleLabel, stateReason } from "../../src/compliance/LegalHours.ts"
import { areaCodeStates, zonesFor } from "../../src/compliance/RecipientZones.ts"

// Edges of the legal-hours rules that mutation testing (issue 28 item 1; docs/testing.md) found unpinned. The
// expectations come from calling-rules.md (the rows), 5 U.S.C. 6103 (the holidays), decision 0622 (the horizon:
// "None beyond it"; the binding rule: "the one whose own opening is latest") and docs/api.md (`state_reason`).

const at = (iso: string): number => Date.parse(iso)
const hourMs = 3_600_000

const dallas = "+12145550100" // TX, America/Chicago
const alabama = "+12055550100" // AL (Birmingham), America/Chicago
const hawaii = "+18085550100" // federal rule only, Pacific/Honolulu (UTC-10, no DST)

const task = (number: string, ...addressStates: ReadonlyArray<string>) => ({
  zones: zonesFor(number),
  rules: rulesFor(defaultPolicy, [...areaCodeStates(number), ...addressStates])
})

describe("LegalHours edges", () => {
  it("names the rule that stays closed longest when several are closed, wherever it sits in the list", () => {
    // A Dallas number whose contact lives in Florida, at 07:00 CST on Sunday 2026-12-06: the federal rule and FL
    // (08:00-20:00) open at 08:00, TX (calling-rules.md: 12:00-21:00 on Sunday) only at 12:00 = 18:00Z. TX binds
    // although FL comes after it in the rules.
    const { rules, zones } = task(dallas, "FL")
    assert.deepStrictEqual(rules.map((r) => r.jurisdiction), ["US", "TX", "FL"])
    const blocked = explain(at("2026-12-06T13:00:00Z"), zones, rules)
    assert.strictEqual(
      Option.getOrUndefined(Option.map(blocked, (b) => stateReason(b))),
      "legal_hours: TX 09:00-21:00 Mon-Sat, 12:00-21:00 Sun America/Chicago until 2026-12-06T18:00:00Z"
    )
  })

  it("says the call window is what blocks when every rule is open", () => {
    // 10:00 in New York (federal 08:00-21:00 open), before a 09:00 window in Los Angeles (= 17:00Z).
    const morningLa: CallTimeWindow = { windows: [{ start: 540, end: 1020 }], timezone: "America/Los_Angeles" }
    const { rules, zones } = task("+12125550100")
    const blocked = explain(at("2026-12-01T15:00:00Z"), zones, rules, morningLa)
    assert.isTrue(Option.isSome(blocked))
    if (Option.isSome(blocked)) {
      assert.strictEqual(blocked.value._tag, "CallWindow")
      assert.deepStrictEqual(blocked.value.until, Option.some(at("2026-12-01T17:00:00Z")))
    }
  })

  it("finds an opening that lies exactly at the horizon, and none one millisecond beyond it", () => {
    // Honolulu at 02:00 HST opens at 08:00 HST = 18:00Z, six hours later (decision 0622: None only beyond the horizon).
    const { rules, zones } = task(hawaii)
    const instant = at("2026-07-01T12:00:00Z")
    assert.deepStrictEqual(
      nextLegalOpening(instant, zones, rules, undefined, 6 * hourMs),
      Option.some(at("2026-07-01T18:00:00Z"))
    )
    assert.deepStrictEqual(nextLegalOpening(instant, zones, rules, undefined, 6 * hourMs - 1), Option.none())
  })

  it("finds no opening when the horizon ends inside a holiday that a rule closes", () => {
    // Thanksgiving 2026 (26 November; 5 U.S.C. 6103) at noon CST in Birmingham: AL allows no calls on legal
    // holidays (calling-rules.md), so nothing opens within an hour; the next morning, Friday 08:00 CST, does.
    const { rules, zones } = task(alabama)
    const noon = at("2026-11-26T18:00:00Z")
    assert.deepStrictEqual(nextLegalOpening(noon, zones, rules, undefined, hourMs), Option.none())
    assert.deepStrictEqual(
      nextLegalOpening(noon, zones, rules, undefined, 21 * hourMs),
      Option.some(at("2026-11-27T14:00:00Z"))
    )
  })

  describe("rule labels (docs/api.md: `TX 09:00-21:00 Mon-Sat, 12:00-21:00 Sun`)", () => {
    // An organisation's override row may list its days in any order and with gaps (CallingPolicy.HoursRow).
    const rule = (days: JurisdictionRule["hours"][number]["days"]): JurisdictionRule => ({
      ...defaultPolicy.federal,
      jurisdiction: "NY",
      hours: [{ days, start: 600, end: 720 }]
    })
    const dayNames = (label: string) => label.split(/[ ,]/u).filter((w) => /^[A-Z][a-z]{2}(-[A-Z][a-z]{2})?$/u.test(w))

    it("writes adjacent days as one range in week order, however the row lists them", () => {
      assert.strictEqual(ruleLabel(rule(["Sunday", "Saturday"])), "NY 10:00-12:00 Sat-Sun")
      assert.strictEqual(ruleLabel(rule(["Wednesday", "Monday", "Tuesday"])), "NY 10:00-12:00 Mon-Wed")
    })

    it("never writes a range across a closed day: Monday, Wednesday and Friday are three days", () => {
      assert.deepStrictEqual(dayNames(ruleLabel(rule(["Monday", "Wednesday", "Friday"]))), ["Mon", "Wed", "Fri"])
      assert.deepStrictEqual(dayNames(ruleLabel(rule(["Friday", "Monday", "Tuesday"]))), ["Mon-Tue", "Fri"])
    })
  })
})
