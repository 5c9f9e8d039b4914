import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Option, Schema } from "effect"
import { type CallTimeWindow, Weekdays } from "../../src/CallWindow.ts"
import { defaultPolicy, type JurisdictionRule } from "../../src/compliance/CallingPolicy.ts"
import { constraintOf } from "../../src/compliance/LegalGroups.ts"
import { defaultHorizonMs, isLegalAt, nextLegalOpening } from "../../src/compliance/LegalHours.ts"
import { allExpectations, numberOf } from "../../test-support/compliance/AreaCodeZones.ts"
import * as Oracle from "../../test-support/compliance/LegalHoursOracle.ts"
import pinnedSeeds from "./LegalHours.seeds.json" with { type: "json" }

// ---------------------------------------------------------------------------------------------------------------
// The product against an oracle that shares nothing with it (issue 28, item 2): the oracle reads the rules from the
// hand-written table of calling-rules.md, a number's zones and presumed state from its own list of area codes and
// exchanges (single-zone, split and unknown ones), holidays from the dates OPM publishes, and the wall clock from
// Intl; it finds the next opening by trying every minute of the production horizon (14 days). Addresses and contact
// time zones are applied to zones as production applies them (decision 0620 rule 4), and address states add their
// rules (0621).
//
// Every run prints its seed. A failure names the seed: add it to LegalHours.seeds.json (with what it found), so that
// every later run replays it before trying a new one. `SVC_PROPERTY_SEED=<n>` replays one seed.
// ---------------------------------------------------------------------------------------------------------------

const minuteMs = 60_000
const dayMs = 86_400_000

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

const contactZones = [undefined, undefined, undefined, "America/Chicago", "America/Phoenix", "Europe/London"]
const addressStates = [undefined, undefined, "FL", "TX", "AL", "RI", "PA", "CT", "KY"]
const windowZones = ["America/Los_Angeles", "America/New_York", "America/Chicago", "America/Phoenix", "UTC"]

interface Row {
  readonly days: ReadonlyArray<typeof Weekdays[number]>
  readonly start: number
  readonly end: number
}
const daysArbitrary = Arbitrary.array(Arbitrary.schema(Schema.Literals(Weekdays)), { minLength: 1, maxLength: 7 })
const rowArbitrary = Arbitrary.map(
  Arbitrary.all([int(0, 1380), int(30, 900), daysArbitrary]),
  ([start, length, days]): Row => ({ days, start, end: Math.min(1440, start + length) })
)

/** An organisation's extra rule (a stricter override row), given to the product and to the oracle alike. */
const customRule = (rows: ReadonlyArray<Row>, noHolidays: boolean) => ({
  product: { jurisdiction: "ZZ", hours: rows, noHolidays, source: "property test", verified: "no" } as JurisdictionRule,
  oracle: {
    name: "ZZ",
    allows: (weekday: string, minute: number) =>
      rows.some((r) => r.days.includes(weekday as Row["days"][number]) && r.start <= minute && minute < r.end),
    closedOnHolidays: noHolidays
  } satisfies Oracle.OracleRule
})

// Second Sunday of March and first Sunday of November: where US and Canadian clocks change.
const dstDay = (year: number, spring: boolean): number => {
  const month = spring ? 2 : 10
  const first = new Date(Date.UTC(year, month, 1)).getUTCDay()
  const firstSunday = 1 + ((7 - first) % 7)
  return Date.UTC(year, month, spring ? firstSunday + 7 : firstSunday)
}

// [month, first day] of a stretch that holds a federal holiday or its observed day.
const holidayWeeks: ReadonlyArray<readonly [number, number]> = [
  [1, 1],
  [1, 15],
  [2, 15],
  [5, 24],
  [6, 17],
  [7, 2],
  [9, 1],
  [10, 8],
  [11, 9],
  [11, 22],
  [12, 23]
]

const rangeStart = Date.UTC(2026, 0, 1)
const rangeEnd = Date.UTC(2030, 11, 31)

const iso = (t: number | undefined) => t === undefined ? "none" : new Date(t).toISOString()

const property = {
  entry: int(0, allExpectations.length - 1),
  tail: int(0, 9_999_999),
  contactZone: int(0, contactZones.length - 1),
  address: int(0, addressStates.length - 1),
  custom: Arbitrary.array(Arbitrary.all([Arbitrary.array(rowArbitrary, { minLength: 1, maxLength: 3 }), int(0, 1)]), {
    maxLength: 1
  }),
  windowRows: Arbitrary.array(rowArbitrary, { maxLength: 2 }),
  windowZone: int(0, windowZones.length - 1),
  aim: int(0, 4),
  pick: int(0, 1_000_000),
  shift: int(-30 * 60, 50 * 60),
  ms: int(0, 59_999)
}

type Case = {
  readonly [K in keyof typeof property]: typeof property[K] extends Arbitrary.Arbitrary<infer A> ? A : never
}

const check = (c: Case): void => {
  const expectation = allExpectations[c.entry]!
  const number = numberOf(expectation.prefix, c.tail)
  const timezone = contactZones[c.contactZone]
  const state = addressStates[c.address]
  const contact = { timezone, state }

  // zones and jurisdictions: the product's resolution against the oracle's own list
  const product = constraintOf(number, defaultPolicy, contact)!
  const judge = Oracle.judgeOf(number, contact)
  assert.deepStrictEqual([...product.zones].sort(), judge.zones, `${number} ${JSON.stringify(contact)}: zones`)
  assert.deepStrictEqual(
    [...new Set(product.rules.map((r) => r.jurisdiction))].sort(),
    [...new Set(["US", ...judge.jurisdictions])].filter((j) => j === "US" || judge.rules.some((r) => r.name === j))
      .sort(),
    `${number} ${JSON.stringify(contact)}: rules`
  )

  const custom = c.custom.map(([rows, holidays]) => customRule(rows, holidays === 1))
  const rules = [...product.rules, ...custom.map((x) => x.product)]
  const oracleRules = [...judge.rules, ...custom.map((x) => x.oracle)]
  const window: CallTimeWindow | undefined = c.windowRows.length === 0 ? undefined : {
    windows: c.windowRows.map(({ end, start }) => ({ start, end })),
    timezone: windowZones[c.windowZone]!,
    day: c.windowRows[0]!.days
  }
  const oracleWindow: Oracle.OracleWindow | undefined = window === undefined ? undefined : {
    zone: window.timezone!,
    days: c.windowRows[0]!.days,
    ranges: c.windowRows.map(({ end, start }) => ({ start, end }))
  }

  let instant: number
  if (c.aim === 0) instant = rangeStart + Math.floor((c.pick / 1_000_000) * (rangeEnd - rangeStart))
  else if (c.aim >= 3) {
    // aimed at the weeks of federal holidays (and their observed days), where rules without holidays close
    const [month, from] = holidayWeeks[c.pick % holidayWeeks.length]!
    instant = Date.UTC(2026 + (c.pick % 5), month - 1, from) + c.shift * minuteMs + 2 * dayMs
  } else {
    // aimed at a DST change of 2026-2030, local midnight UTC of that Sunday shifted by up to -30 h / +50 h
    instant = dstDay(2026 + (c.pick % 5), c.aim === 1) + c.shift * minuteMs
  }
  instant = Math.floor(instant / minuteMs) * minuteMs + (c.pick % 3 === 0 ? 0 : c.ms)
  const where = `${number} ${product.zones.join(",")} ${JSON.stringify(contact)} at ${iso(instant)}`

  assert.strictEqual(
    isLegalAt(instant, product.zones, rules),
    Oracle.isLegal(instant, judge.zones, oracleRules),
    `isLegalAt ${where} (oracle: ${Oracle.whyNot(instant, judge.zones, oracleRules) ?? "legal"})`
  )
  const found = Option.getOrUndefined(nextLegalOpening(instant, product.zones, rules, window))
  const expected = Oracle.nextOpening(instant, judge.zones, oracleRules, oracleWindow, Oracle.horizonMs)
  assert.strictEqual(iso(found), iso(expected), `nextLegalOpening ${where}`)
}

const freshSeed = process.env["SVC_PROPERTY_SEED"] === undefined
  ? Math.floor(Math.random() * 2 ** 31)
  : Number(process.env["SVC_PROPERTY_SEED"])

describe("LegalHours properties", () => {
  it("searches as far ahead as the oracle: 14 days", () => {
    assert.strictEqual(defaultHorizonMs, Oracle.horizonMs)
  })

  const seeds: ReadonlyArray<{ readonly seed: number; readonly runs: number; readonly why: string }> = [
    ...pinnedSeeds.map((p) => ({ seed: p.seed, runs: 40, why: `pinned: ${p.found}` })),
    { seed: freshSeed, runs: 200, why: "new" }
  ]
  for (const { runs, seed, why } of seeds) {
    it.prop(
      `the product equals the oracle of the hand-written tables (seed ${seed}, ${why})`,
      property,
      (c) => {
        try {
          check(c)
        } catch (error) {
          // the seed to pin (LegalHours.seeds.json) and to replay (SVC_PROPERTY_SEED)
          const message = error instanceof Error ? error.message : String(error)
          throw new Error(`seed ${seed} (pin it in LegalHours.seeds.json): ${message}`, { cause: error })
        }
      },
      { timeout: 180_000, arbitrary: { runs, seed } }
    )
  }
  process.stdout.write(`LegalHours property: new seed ${freshSeed} (replay with SVC_PROPERTY_SEED=${freshSeed})\n`)
})
