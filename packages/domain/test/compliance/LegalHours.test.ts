import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import type { CallTimeWindow } from "../../src/CallWindow.ts"
import { defaultPolicy, type JurisdictionRule, rulesFor } from "../../src/compliance/CallingPolicy.ts"
import {
  explain,
  isLegalAt,
  isUsFederalHoliday,
  nextLegalOpening,
  ruleLabel,
  stateReason
} from "../../src/compliance/LegalHours.ts"
import { areaCodeStates, zonesFor } from "../../src/compliance/RecipientZones.ts"

const at = (iso: string): number => Date.parse(iso)
const iso = (instant: Option.Option<number>): string | undefined =>
  Option.match(instant, { onNone: () => undefined, onSome: (t) => new Date(t).toISOString() })

/** The zones and rules of a number under the default policy, as dispatch resolves them. */
const task = (number: string, address?: string) => ({
  zones: zonesFor(number),
  rules: rulesFor(defaultPolicy, address === undefined ? areaCodeStates(number) : [...areaCodeStates(number), address])
})

const legal = (number: string, instant: string, address?: string): boolean => {
  const { rules, zones } = task(number, address)
  return isLegalAt(at(instant), zones, rules)
}
const opening = (number: string, instant: string, window?: CallTimeWindow): string | undefined => {
  const { rules, zones } = task(number)
  return iso(nextLegalOpening(at(instant), zones, rules, window))
}
const reason = (number: string, instant: string, window?: CallTimeWindow): string | undefined => {
  const { rules, zones } = task(number)
  return Option.getOrUndefined(Option.map(explain(at(instant), zones, rules, window), (b) => stateReason(b)))
}

const hawaii = "+18085550100"
const arizona = "+16025550100"
const chicago = "+13125550100"
const newYork = "+12125550100"
const florida = "+13055550100"
const saskatchewan = "+13065550100"
const dallas = "+12145550100"
const alabama = "+12055550100"

describe("LegalHours", () => {
  it("Hawaii: federal 08:00-21:00 in Pacific/Honolulu (UTC-10, no DST)", () => {
    assert.isFalse(legal(hawaii, "2026-12-01T17:59:59Z"))
    assert.isTrue(legal(hawaii, "2026-12-01T18:00:00Z"))
    assert.isTrue(legal(hawaii, "2026-12-02T06:59:59Z"))
    assert.isFalse(legal(hawaii, "2026-12-02T07:00:00Z"))
    assert.strictEqual(opening(hawaii, "2026-07-01T12:00:00Z"), "2026-07-01T18:00:00.000Z")
  })

  it("Arizona: 08:00 MST is 15:00Z in January and in July (no DST)", () => {
    assert.strictEqual(opening(arizona, "2026-01-15T10:00:00Z"), "2026-01-15T15:00:00.000Z")
    assert.strictEqual(opening(arizona, "2026-07-15T10:00:00Z"), "2026-07-15T15:00:00.000Z")
  })

  it("Saskatchewan: America/Regina stays UTC-6 all year", () => {
    assert.strictEqual(opening(saskatchewan, "2026-01-15T10:00:00Z"), "2026-01-15T14:00:00.000Z")
    assert.strictEqual(opening(saskatchewan, "2026-07-15T10:00:00Z"), "2026-07-15T14:00:00.000Z")
  })

  it("Chicago: opens at 08:00 CDT on the day DST starts and 08:00 CST the day before", () => {
    assert.strictEqual(opening(chicago, "2026-03-07T10:00:00Z"), "2026-03-07T14:00:00.000Z")
    assert.strictEqual(opening(chicago, "2026-03-08T10:00:00Z"), "2026-03-08T13:00:00.000Z")
  })

  it("New York: opens at 08:00 EST on the day DST ends, closes at 21:00", () => {
    assert.strictEqual(opening(newYork, "2026-11-01T05:00:00Z"), "2026-11-01T13:00:00.000Z")
    assert.isTrue(legal(newYork, "2026-12-01T01:59:59Z"))
    assert.isFalse(legal(newYork, "2026-12-01T02:00:00Z"))
  })

  it("Florida: the state's 20:00 closes an hour before the federal rule, and state_reason names it", () => {
    assert.isTrue(legal(florida, "2026-12-01T00:59:00Z"))
    assert.isFalse(legal(florida, "2026-12-01T01:00:00Z"))
    assert.isTrue(legal(newYork, "2026-12-01T01:00:00Z"))
    assert.strictEqual(
      reason(florida, "2026-12-01T01:00:00Z"),
      "legal_hours: FL 08:00-20:00 America/New_York until 2026-12-01T13:00:00Z"
    )
    // At 07:00 both rules are closed and open together: the state row is named.
    assert.strictEqual(
      reason(florida, "2026-12-01T12:00:00Z"),
      "legal_hours: FL 08:00-20:00 America/New_York until 2026-12-01T13:00:00Z"
    )
    assert.strictEqual(reason(florida, "2026-12-01T15:00:00Z"), undefined)
  })

  it("an address state must be satisfied as well as the area-code state", () => {
    // A New York number whose contact lives in Florida: FL's 20:00 applies (read in New York's zone).
    assert.isTrue(legal(newYork, "2026-12-01T01:30:00Z"))
    assert.isFalse(legal(newYork, "2026-12-01T01:30:00Z", "FL"))
  })

  it("Texas: 09:00-21:00 Monday to Saturday, 12:00-21:00 on Sunday", () => {
    assert.isFalse(legal(dallas, "2026-12-05T14:59:00Z")) // Saturday 08:59 CST
    assert.isTrue(legal(dallas, "2026-12-05T15:00:00Z"))
    assert.isFalse(legal(dallas, "2026-12-06T17:59:00Z")) // Sunday 11:59 CST
    assert.strictEqual(opening(dallas, "2026-12-06T15:00:00Z"), "2026-12-06T18:00:00.000Z")
    assert.strictEqual(
      reason(dallas, "2026-12-06T15:00:00Z"),
      "legal_hours: TX 09:00-21:00 Mon-Sat, 12:00-21:00 Sun America/Chicago until 2026-12-06T18:00:00Z"
    )
  })

  it("Alabama: no Sundays and no federal holidays (Thanksgiving 2026)", () => {
    assert.isFalse(legal(alabama, "2026-11-26T18:00:00Z"))
    assert.strictEqual(opening(alabama, "2026-11-26T15:00:00Z"), "2026-11-27T14:00:00.000Z")
    assert.strictEqual(opening(alabama, "2026-11-29T03:00:00Z"), "2026-11-30T14:00:00.000Z")
  })

  it("624 and 729 (missing from the data) are dialled only while every US and Canadian zone is legal", () => {
    for (const number of ["+16245550100", "+17295550100"]) {
      // Guam opens at 22:00Z (08:00 ChST); St. John's closes at 00:30Z (21:00 NST).
      assert.strictEqual(opening(number, "2026-12-01T12:00:00Z"), "2026-12-01T22:00:00.000Z")
      assert.isTrue(legal(number, "2026-12-02T00:29:00Z"))
      assert.isFalse(legal(number, "2026-12-02T00:30:00Z"))
    }
  })

  it("is inside the batch's call window as well", () => {
    const morningLa: CallTimeWindow = { windows: [{ start: 540, end: 1020 }], timezone: "America/Los_Angeles" }
    assert.strictEqual(opening(newYork, "2026-12-01T12:00:00Z", morningLa), "2026-12-01T17:00:00.000Z")
    assert.strictEqual(reason(newYork, "2026-12-01T14:00:00Z", morningLa), "call_window: until 2026-12-01T17:00:00Z")
    // A window that only opens after 21:00 in New York never overlaps its legal hours.
    const lateLa: CallTimeWindow = { windows: [{ start: 1080, end: 1380 }], timezone: "America/Los_Angeles" }
    assert.strictEqual(opening(newYork, "2026-12-01T12:00:00Z", lateLa), undefined)
    assert.strictEqual(
      reason(newYork, "2026-12-01T12:00:00Z", lateLa),
      "legal_hours: US 08:00-21:00 America/New_York no opening within 14 days"
    )
  })

  it("returns the instant itself when it is legal, and constrains nothing without zones or rules", () => {
    assert.strictEqual(opening(newYork, "2026-12-01T15:00:30.123Z"), "2026-12-01T15:00:30.123Z")
    assert.isTrue(isLegalAt(at("2026-12-01T05:00:00Z"), [], defaultPolicy.states))
    assert.isTrue(isLegalAt(at("2026-12-01T05:00:00Z"), ["America/New_York"], []))
  })

  it("never finds an opening for a rule set that can not be satisfied together", () => {
    const sundayOnly: JurisdictionRule = { ...defaultPolicy.federal, hours: [{ days: ["Sunday"], start: 0, end: 60 }] }
    const mondayOnly: JurisdictionRule = { ...defaultPolicy.federal, hours: [{ days: ["Monday"], start: 0, end: 60 }] }
    assert.isTrue(Option.isNone(nextLegalOpening(at("2026-12-01T00:00:00Z"), ["UTC"], [sundayOnly, mondayOnly])))
  })

  it("knows the federal holidays and their observed days", () => {
    assert.isTrue(isUsFederalHoliday(2026, 7, 4))
    assert.isTrue(isUsFederalHoliday(2026, 7, 3)) // Saturday's holiday observed on Friday
    assert.isTrue(isUsFederalHoliday(2026, 11, 26)) // Thanksgiving
    assert.isTrue(isUsFederalHoliday(2026, 5, 25)) // Memorial Day: last Monday of May
    assert.isTrue(isUsFederalHoliday(2026, 1, 19)) // MLK Day: third Monday of January
    assert.isTrue(isUsFederalHoliday(2027, 12, 31)) // New Year 2028 falls on a Saturday
    assert.isTrue(isUsFederalHoliday(2027, 6, 18)) // Juneteenth 2027 falls on a Saturday
    assert.isFalse(isUsFederalHoliday(2026, 7, 5))
    assert.isFalse(isUsFederalHoliday(2026, 12, 24))
  })

  it("labels rules as people read them", () => {
    assert.deepStrictEqual(defaultPolicy.states.slice(0, 1).map(ruleLabel), ["FL 08:00-20:00"])
    const al = defaultPolicy.states.find((r) => r.jurisdiction === "AL")!
    assert.strictEqual(ruleLabel(al), "AL 08:00-20:00 Mon-Sat no holidays")
  })
})
