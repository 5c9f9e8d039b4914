import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import { defaultPolicy } from "../../src/compliance/CallingPolicy.ts"
import { constraintOf } from "../../src/compliance/LegalGroups.ts"
import { isLegalAt, isUsFederalHoliday, nextLegalOpening } from "../../src/compliance/LegalHours.ts"
import { numberOf, singleZone } from "../../test-support/compliance/AreaCodeZones.ts"
import { closedDates, federalHolidays } from "../../test-support/compliance/FederalHolidays.ts"
import * as Oracle from "../../test-support/compliance/LegalHoursOracle.ts"

// Issue 28, "US federal holidays pinned by date": the product's holiday calendar against OPM's published lists for
// 2026-2030 (test-support/compliance/FederalHolidays.ts, written out by hand, observed days included), and each
// "no legal holidays" row of calling-rules.md (AL, LA, PA) refusing calls on every such day and allowing them again
// on the next day the row is open.

const dayMs = 86_400_000
const dateOf = (t: number) => new Date(t).toISOString().slice(0, 10)

describe("US federal holidays", () => {
  it("are exactly the pinned dates and observed dates of 2026-2030, every day checked", () => {
    const wrong: Array<string> = []
    for (let t = Date.UTC(2026, 0, 1); t <= Date.UTC(2030, 11, 31); t += dayMs) {
      const d = new Date(t)
      const got = isUsFederalHoliday(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate())
      if (got !== closedDates.has(dateOf(t))) wrong.push(`${dateOf(t)}: product ${got}`)
    }
    assert.deepStrictEqual(wrong, [])
    // 11 holidays a year, 5 years, and the 7 that fall on a weekend, observed on a weekday
    assert.strictEqual(federalHolidays.filter((h) => h.date >= "2026" && h.date < "2031").length, 55)
    assert.strictEqual(federalHolidays.filter((h) => h.observed !== undefined).length, 7)
  })

  it("names each holiday rule by date: Washington's Birthday, Labor Day, Columbus Day, Veterans Day included", () => {
    for (const holiday of federalHolidays.filter((h) => h.date >= "2026" && h.date < "2031")) {
      const [y, m, d] = holiday.date.split("-").map(Number) as [number, number, number]
      assert.isTrue(isUsFederalHoliday(y, m, d), `${holiday.name} ${holiday.date}`)
      if (holiday.observed !== undefined) {
        const [oy, om, od] = holiday.observed.split("-").map(Number) as [number, number, number]
        assert.isTrue(isUsFederalHoliday(oy, om, od), `${holiday.name} observed ${holiday.observed}`)
      }
    }
  })

  // AL and LA: Birmingham and New Orleans (Central); PA: Philadelphia (Eastern).
  for (const state of ["AL", "LA", "PA"] as const) {
    it(`${state} refuses calls on every holiday and observed day of 2026-2030 and allows them the next open day`, () => {
      const entry = singleZone.find((e) => e.states.includes(state))!
      const number = numberOf(entry.prefix, 5_550_100)
      const { rules, zones } = constraintOf(number, defaultPolicy)!
      const judge = Oracle.judgeOf(number)
      const zone = zones[0]!
      // local noon of a date in the number's zone
      const noon = (date: string) => {
        const guess = Date.parse(`${date}T12:00:00Z`)
        return guess - (Oracle.wallClock(zone, guess).minute - 720) * 60_000
      }
      for (const date of [...closedDates].filter((d) => d < "2031").sort()) {
        assert.isFalse(isLegalAt(noon(date), zones, rules), `${state} ${number} at noon on ${date}`)
        // the next day that is neither a Sunday (closed in all three) nor another closed date opens at 08:00 local
        let next = noon(date) + dayMs
        while (
          closedDates.has(Oracle.wallClock(zone, next).date) || Oracle.wallClock(zone, next).weekday === "Sunday"
        ) {
          assert.isFalse(isLegalAt(next, zones, rules), `${state} on ${Oracle.wallClock(zone, next).date}`)
          next += dayMs
        }
        assert.isTrue(isLegalAt(next, zones, rules), `${state} at noon on ${Oracle.wallClock(zone, next).date}`)
        const opening = Option.getOrUndefined(nextLegalOpening(noon(date), zones, rules))
        const expected = Oracle.nextOpening(noon(date), judge.zones, judge.rules)
        assert.strictEqual(opening, expected, `${state}: the next opening after noon on ${date}`)
        assert.strictEqual(Oracle.wallClock(zone, opening!).minute, 8 * 60, `${state}: opens at 08:00 local`)
      }
    })
  }

  it("does not close rows without the holiday rule on a holiday: Florida on Independence Day 2026", () => {
    const { rules, zones } = constraintOf("+13055550100", defaultPolicy)!
    assert.isTrue(isLegalAt(Date.parse("2026-07-04T16:00:00Z"), zones, rules))
  })
})
