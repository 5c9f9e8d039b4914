import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Option, Schema } from "effect"
import { type CallTimeWindow, type Weekday, Weekdays } from "../../src/CallWindow.ts"
import { defaultPolicy, type JurisdictionRule, rulesFor } from "../../src/compliance/CallingPolicy.ts"
import { isLegalAt, nextLegalOpening } from "../../src/compliance/LegalHours.ts"
import { areaCodeStates, zonesFor } from "../../src/compliance/RecipientZones.ts"

// ---------------------------------------------------------------------------------------------------------------
// The oracle knows nothing of the implementation: it asks Intl for the wall clock and calendar date of every UTC
// minute in every zone, reads the rules and the window as given, and finds holidays from their definitions
// (nth weekday by day-of-month range, observed days by neighbouring weekday) rather than by computing dates.
// ---------------------------------------------------------------------------------------------------------------

const minuteMs = 60_000
const hourMs = 60 * minuteMs
const dayMs = 24 * hourMs
const horizon = 3 * dayMs

interface Wall {
  readonly weekday: Weekday
  readonly minute: number
  readonly year: number
  readonly month: number
  readonly day: number
}

const formats = new Map<string, Intl.DateTimeFormat>()
const walls = new Map<string, Wall>()
const wallClock = (zone: string, instant: number): Wall => {
  const key = `${zone}@${Math.floor(instant / minuteMs)}`
  const cached = walls.get(key)
  if (cached !== undefined) return cached
  let format = formats.get(zone)
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      weekday: "long",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "2-digit",
      minute: "2-digit"
    })
    formats.set(zone, format)
  }
  const parts = format.formatToParts(instant)
  const get = (type: string) => parts.find((p) => p.type === type)!.value
  const wall: Wall = {
    weekday: get("weekday") as Weekday,
    minute: Number(get("hour")) * 60 + Number(get("minute")),
    year: Number(get("year")),
    month: Number(get("month")),
    day: Number(get("day"))
  }
  if (walls.size > 200_000) walls.clear()
  walls.set(key, wall)
  return wall
}

const fixedHolidays = [[1, 1], [6, 19], [7, 4], [11, 11], [12, 25]] as const
const isFixed = (month: number, day: number) => fixedHolidays.some(([m, d]) => m === month && d === day)
const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate()

const oracleHoliday = ({ day, month, weekday, year }: Wall): boolean => {
  if (isFixed(month, day)) return true
  // Observed: the Friday before a Saturday holiday, the Monday after a Sunday one (31 December for 1 January).
  if (weekday === "Friday") {
    if (day < daysInMonth(year, month) ? isFixed(month, day + 1) : month === 12 && day === 31) return true
  }
  if (weekday === "Monday" && day > 1 && isFixed(month, day - 1)) return true
  if (weekday === "Monday") {
    if (month === 1 && day >= 15 && day <= 21) return true // MLK Day
    if (month === 2 && day >= 15 && day <= 21) return true // Washington's Birthday
    if (month === 5 && day + 7 > 31) return true // Memorial Day
    if (month === 9 && day <= 7) return true // Labor Day
    if (month === 10 && day >= 8 && day <= 14) return true // Columbus Day
  }
  return weekday === "Thursday" && month === 11 && day >= 22 && day <= 28 // Thanksgiving
}

const oracleRuleOpen = (rule: JurisdictionRule, wall: Wall): boolean =>
  rule.hours.some((row) => row.days.includes(wall.weekday) && row.start <= wall.minute && wall.minute < row.end) &&
  !(rule.noHolidays && oracleHoliday(wall))

const oracleWindowOpen = (w: CallTimeWindow, instant: number): boolean => {
  const wall = wallClock(w.timezone ?? "America/Los_Angeles", instant)
  const days: ReadonlyArray<string> = w.day ?? []
  return (days.length === 0 || days.includes(wall.weekday)) &&
    w.windows.some((x) => x.start <= wall.minute && wall.minute < x.end)
}

const oracleLegal = (
  instant: number,
  zones: ReadonlyArray<string>,
  rules: ReadonlyArray<JurisdictionRule>
): boolean => zones.every((zone) => rules.every((rule) => oracleRuleOpen(rule, wallClock(zone, instant))))

const oracleNext = (
  instant: number,
  zones: ReadonlyArray<string>,
  rules: ReadonlyArray<JurisdictionRule>,
  window: CallTimeWindow | undefined
): number | undefined => {
  const ok = (u: number) => oracleLegal(u, zones, rules) && (window === undefined || oracleWindowOpen(window, u))
  if (ok(instant)) return instant
  for (let u = Math.ceil(instant / minuteMs) * minuteMs; u <= instant + horizon; u += minuteMs) {
    if (ok(u)) return u
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------------------------

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

// Hawaii, Arizona, Chicago, New York, Florida (both panhandle zones), Saskatchewan, Dallas, Alabama, Idaho, Alaska,
// Puerto Rico, Winnipeg-listed 474, Oklahoma, Maryland, Rhode Island, Pennsylvania, and the 624/729 gaps.
const areaCodes = [808, 602, 312, 212, 305, 850, 306, 214, 205, 208, 907, 787, 474, 405, 410, 401, 215, 624, 729]
const contactZones = [undefined, undefined, undefined, "America/Chicago", "America/Phoenix", "Europe/London"]
const addressStates = [undefined, undefined, "FL", "TX", "AL", "RI", "PA", "CT", "KY"]
const windowZones = ["America/Los_Angeles", "America/New_York", "America/Chicago", "America/Phoenix", "UTC"]

const daysArbitrary = Arbitrary.array(Arbitrary.schema(Schema.Literals(Weekdays)), { minLength: 1, maxLength: 7 })
const rowArbitrary = Arbitrary.map(
  Arbitrary.all([int(0, 1380), int(30, 900), daysArbitrary]),
  ([start, length, days]) => ({ days, start, end: Math.min(1440, start + length) })
)
const customRuleArbitrary = Arbitrary.map(
  Arbitrary.all([Arbitrary.array(rowArbitrary, { minLength: 1, maxLength: 3 }), int(0, 1)]),
  ([hours, holidays]): JurisdictionRule => ({
    jurisdiction: "ZZ",
    hours,
    noHolidays: holidays === 1,
    source: "property test",
    verified: "no"
  })
)

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
const rangeEnd = Date.UTC(2031, 0, 1)

describe("LegalHours properties", () => {
  it.prop(
    "nextLegalOpening equals a minute-by-minute Intl oracle and never returns an illegal instant (2026-2030, DST)",
    {
      area: int(0, areaCodes.length - 1),
      exchange: int(200, 999),
      contactZone: int(0, contactZones.length - 1),
      address: int(0, addressStates.length - 1),
      custom: Arbitrary.array(customRuleArbitrary, { maxLength: 1 }),
      windowRows: Arbitrary.array(rowArbitrary, { maxLength: 2 }),
      windowZone: int(0, windowZones.length - 1),
      aim: int(0, 4),
      pick: int(0, 1_000_000),
      shift: int(-30 * 60, 50 * 60),
      ms: int(0, 59_999)
    },
    ({ address, aim, area, contactZone, custom, exchange, ms, pick, shift, windowRows, windowZone }) => {
      const number = `+1${areaCodes[area]}${exchange}${String(pick % 10_000).padStart(4, "0")}`
      const timezone = contactZones[contactZone]
      const state = addressStates[address]
      const zones = zonesFor(number, timezone === undefined ? undefined : { timezone })
      const rules = [
        ...rulesFor(defaultPolicy, state === undefined ? areaCodeStates(number) : [...areaCodeStates(number), state]),
        ...custom
      ]
      const window: CallTimeWindow | undefined = windowRows.length === 0 ? undefined : {
        windows: windowRows.map(({ end, start }) => ({ start, end })),
        timezone: windowZones[windowZone]!,
        day: windowRows[0]!.days
      }
      let instant: number
      if (aim === 0) instant = rangeStart + Math.floor((pick / 1_000_000) * (rangeEnd - rangeStart - 4 * dayMs))
      else if (aim >= 3) {
        // Aimed at the weeks of federal holidays (and their observed days), where rules without holidays close.
        const [month, from] = holidayWeeks[pick % holidayWeeks.length]!
        instant = Date.UTC(2026 + (pick % 5), month - 1, from) + shift * minuteMs + 2 * dayMs
      } else {
        // Aimed at a DST change of 2026-2030, local midnight UTC of that Sunday shifted by up to -30 h / +50 h.
        const year = 2026 + (pick % 5)
        instant = dstDay(year, aim === 1) + shift * minuteMs
      }
      instant = Math.floor(instant / minuteMs) * minuteMs + (pick % 3 === 0 ? 0 : ms)

      assert.strictEqual(isLegalAt(instant, zones, rules), oracleLegal(instant, zones, rules), "isLegalAt")
      const found = Option.getOrUndefined(nextLegalOpening(instant, zones, rules, window, horizon))
      const expected = oracleNext(instant, zones, rules, window)
      assert.strictEqual(
        found,
        expected,
        `${number} ${zones.join(",")} from ${new Date(instant).toISOString()}: got ${
          found === undefined ? "none" : new Date(found).toISOString()
        }, oracle ${expected === undefined ? "none" : new Date(expected).toISOString()}`
      )
      if (found !== undefined) {
        assert.isTrue(oracleLegal(found, zones, rules), "the opening is legal in every zone")
        if (window !== undefined) assert.isTrue(oracleWindowOpen(window, found), "the opening is inside the window")
      }
    },
    { timeout: 120_000, arbitrary: { runs: 150 } }
  )
})
