import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import { defaultPolicy } from "../../src/compliance/CallingPolicy.ts"
import { constraintOf } from "../../src/compliance/LegalGroups.ts"
import { isLegalAt, nextLegalOpening } from "../../src/compliance/LegalHours.ts"
import { numberOf, singleZone } from "../../test-support/compliance/AreaCodeZones.ts"
import { allRows, parseHours } from "../../test-support/compliance/CallingRulesTable.ts"
import * as Oracle from "../../test-support/compliance/LegalHoursOracle.ts"

// Issue 28: every row of the calling rules pinned by behaviour. For one number of each jurisdiction (an area code
// wholly inside one zone, test-support/compliance/AreaCodeZones.ts), every minute of five weeks is judged by the
// product and by the oracle built from the hand-written table (LegalHoursOracle.ts): a plain week, Thanksgiving week,
// the weeks DST starts and ends, and a week whose Sunday holiday is observed on Monday. Moving any row's start or end
// by one minute, a day, the holiday flag, or a number's zone makes a minute differ.

const minuteMs = 60_000
const iso = (t: number) => new Date(t).toISOString()

const numberFor = (jurisdiction: string): string => {
  const entry = jurisdiction === "US"
    ? singleZone.find((e) => e.prefix === "+1212")! // New York has no state row: the federal rule alone
    : singleZone.find((e) => e.states.includes(jurisdiction))
  if (entry === undefined) throw new Error(`AreaCodeZones has no single-zone area code of ${jurisdiction}`)
  return numberOf(entry.prefix, 5_550_100)
}

const weeks = [
  ["a plain week", "2026-12-07T00:00:00Z"],
  ["Thanksgiving week (2026-11-26)", "2026-11-23T00:00:00Z"],
  ["DST starts (2026-03-08)", "2026-03-06T00:00:00Z"],
  ["DST ends (2026-11-01)", "2026-10-30T00:00:00Z"],
  ["Independence Day 2027 on a Sunday, observed Monday 07-05", "2027-07-02T00:00:00Z"]
] as const

describe("every row of the calling rules, minute by minute", () => {
  for (const row of allRows) {
    it(`${row.jurisdiction} (${row.source}): legal exactly when the table says, and opens when it says`, () => {
      const number = numberFor(row.jurisdiction)
      const product = constraintOf(number, defaultPolicy)!
      const judge = Oracle.judgeOf(number)
      assert.deepStrictEqual([...product.zones].sort(), judge.zones, `${number}: zones`)
      assert.deepStrictEqual(
        product.rules.map((r) => r.jurisdiction),
        row.jurisdiction === "US" ? ["US"] : ["US", row.jurisdiction],
        `${number}: rules`
      )
      for (const [name, from] of weeks) {
        const start = Date.parse(from)
        const minutes = 7 * 1440
        // the oracle's verdict for every minute of the week and 3 days beyond, and from it the next opening of each
        const span = minutes + 3 * 1440
        const legal = Array.from(
          { length: span },
          (_, i) => Oracle.isLegal(start + i * minuteMs, judge.zones, judge.rules)
        )
        const opening: Array<number | undefined> = Array.from({ length: span + 1 }, () => undefined)
        for (let i = span - 1; i >= 0; i--) opening[i] = legal[i] ? start + i * minuteMs : opening[i + 1]
        let open = 0
        for (let i = 0; i < minutes; i++) {
          const t = start + i * minuteMs
          const got = isLegalAt(t, product.zones, product.rules)
          if (got !== legal[i]) {
            assert.fail(
              `${row.jurisdiction} ${number}, ${name}: at ${iso(t)} the product says ${got ? "legal" : "illegal"}; ` +
                `the table: ${Oracle.whyNot(t, judge.zones, judge.rules) ?? "legal"}`
            )
          }
          if (got) open++
          // the next opening from every 61st minute (and every minute the verdict changes), within the week
          if ((i % 61 === 0 || legal[i] !== legal[i - 1]) && opening[i] !== undefined) {
            const next = Option.getOrUndefined(nextLegalOpening(t, product.zones, product.rules))
            assert.strictEqual(next, opening[i], `${row.jurisdiction} ${name}: next opening from ${iso(t)}`)
          }
        }
        // a week of a row that allows any hours has some legal minutes: the comparison above compared something
        assert.isAbove(open, 0, `${row.jurisdiction} ${name}: no legal minute at all`)
      }
    })
  }

  // The same rows read as people read them, for the mutations issue 28 names; expectations from calling-rules.md.
  const localDay = (jurisdiction: string, day: string) => {
    const number = numberFor(jurisdiction)
    const { rules, zones } = constraintOf(number, defaultPolicy)!
    // local midnight of `day` in the number's zone, from the zone's wall clock at noon UTC (no DST change that day)
    const noon = Oracle.wallClock(zones[0]!, Date.parse(`${day}T12:00:00Z`))
    const midnight = Date.parse(`${day}T12:00:00Z`) - noon.minute * minuteMs
    /** Whether the product allows the local minute `hhmm` (+ `delta` minutes) of the day. */
    return (hhmm: string, delta = 0) =>
      isLegalAt(midnight + (parseHours(`${hhmm}-23:59`).start + delta) * minuteMs, zones, rules)
  }

  it("Kentucky opens at 10:00 and closes at 21:00 in Louisville", () => {
    const ky = localDay("KY", "2026-12-07")
    assert.isFalse(ky("09:00"))
    assert.isFalse(ky("09:59"))
    assert.isTrue(ky("10:00"))
    assert.isTrue(ky("20:59"))
    assert.isFalse(ky("21:00"))
  })

  it("Texas opens at 12:00 on Sunday and 09:00 on Saturday in Dallas", () => {
    const sunday = localDay("TX", "2026-12-13")
    assert.isFalse(sunday("09:00"))
    assert.isFalse(sunday("11:59"))
    assert.isTrue(sunday("12:00"))
    const saturday = localDay("TX", "2026-12-12")
    assert.isFalse(saturday("08:59"))
    assert.isTrue(saturday("09:00"))
    assert.isFalse(saturday("21:00"))
  })

  it("each state row's own opening and closing on a Monday, and the closed weekend days", () => {
    const cases = [
      ["FL", "08:00", "20:00"],
      ["OK", "08:00", "20:00"],
      ["MD", "08:00", "20:00"],
      ["CT", "09:00", "20:00"],
      ["WA", "08:00", "20:00"],
      ["AL", "08:00", "20:00"],
      ["LA", "08:00", "20:00"],
      ["MS", "08:00", "20:00"],
      ["MI", "09:00", "21:00"],
      ["MN", "09:00", "21:00"],
      ["NV", "09:00", "20:00"],
      ["RI", "09:00", "18:00"],
      ["PA", "08:00", "21:00"]
    ] as const
    for (const [state, opens, closes] of cases) {
      const monday = localDay(state, "2026-12-07")
      assert.isFalse(monday(opens, -1), `${state} the minute before ${opens}`)
      assert.isTrue(monday(opens), `${state} at ${opens}`)
      assert.isTrue(monday(closes, -1), `${state} the minute before ${closes}`)
      assert.isFalse(monday(closes), `${state} at ${closes}`)
    }
    // no Sundays in AL, LA, MS, PA; no weekends in RI; Sundays open elsewhere
    for (const state of ["AL", "LA", "MS", "PA", "RI"]) assert.isFalse(localDay(state, "2026-12-13")("12:00"), state)
    assert.isFalse(localDay("RI", "2026-12-12")("12:00"))
    for (const state of ["FL", "OK", "MD", "CT", "WA", "KY", "MI", "MN", "NV"]) {
      assert.isTrue(localDay(state, "2026-12-13")("12:00"), state)
    }
  })
})
