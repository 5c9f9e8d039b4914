/**
 * Legal hours at the called party (decision 0621): an instant is legal for a task when every rule that applies to it
 * (federal and state rows of `CallingPolicy`) allows it in every candidate zone of its number, each rule read on
 * the wall clock of that zone at that instant, DST included. A task may be dialled at an instant that is legal and
 * inside its batch's call window.
 *
 * Each (rule, zone) pair is evaluated as a union of call windows, one per hours row, with `CallWindow`'s evaluator,
 * so DST gaps and overlaps follow docs/decisions/0101 exactly (a local minute skipped by spring-forward is never
 * legal; a repeated one is legal both times). Rules that exclude legal holidays also close every local day that is
 * a US federal holiday or its observed day. `nextLegalOpening` jumps from opening to opening: every constraint is
 * asked for its own next opening and the latest of them becomes the new candidate, until all agree (a fixed point;
 * docs/decisions/0622-next-legal-opening.md), so no minute is ever scanned.
 */
import { Option } from "effect"
import { type CallTimeWindow, isOpen, nextClosing, nextOpening, type Weekday, Weekdays } from "../CallWindow.ts"
import type { JurisdictionRule } from "./CallingPolicy.ts"

const minuteMs = 60_000
const dayMs = 1440 * minuteMs

/**
 * How far ahead `nextLegalOpening` looks by default: two weeks, past which every satisfiable combination of
 * weekly rules and windows has opened.
 *
 * @category models
 */
export const defaultHorizonMs = 14 * dayMs

// ---------------------------------------------------------------------------------------------------------------
// Holidays
// ---------------------------------------------------------------------------------------------------------------

const nthWeekday = (year: number, month: number, weekday: number, n: number): number => {
  // weekday: 0 = Sunday (Date's numbering); n = 1.. or -1 for the last one of the month.
  if (n > 0) {
    const first = new Date(Date.UTC(year, month - 1, 1)).getUTCDay()
    return 1 + ((weekday - first + 7) % 7) + (n - 1) * 7
  }
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate()
  const last = new Date(Date.UTC(year, month - 1, lastDay)).getUTCDay()
  return lastDay - ((last - weekday + 7) % 7)
}

const holidayCache = new Map<number, ReadonlySet<number>>()

/**
 * The US federal holidays of a year (5 U.S.C. 6103) as `month * 100 + day`, each fixed-date holiday together with
 * its observed day (Friday before a Saturday, Monday after a Sunday): both are closed, the conservative reading of
 * "no legal holidays" where a state row does not say which day counts.
 */
const holidaysOf = (year: number): ReadonlySet<number> => {
  const cached = holidayCache.get(year)
  if (cached !== undefined) return cached
  const days = new Set<number>()
  const fixed = (month: number, day: number) => {
    days.add(month * 100 + day)
    const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay()
    const shift = weekday === 6 ? -1 : weekday === 0 ? 1 : 0
    if (shift !== 0) {
      const observed = new Date(Date.UTC(year, month - 1, day + shift))
      // New Year's Day on a Saturday is observed on 31 December of the year before: that year's set holds it.
      if (observed.getUTCFullYear() === year) days.add((observed.getUTCMonth() + 1) * 100 + observed.getUTCDate())
    }
  }
  fixed(1, 1)
  days.add(100 + nthWeekday(year, 1, 1, 3)) // Martin Luther King Jr. Day
  days.add(200 + nthWeekday(year, 2, 1, 3)) // Washington's Birthday
  days.add(500 + nthWeekday(year, 5, 1, -1)) // Memorial Day
  fixed(6, 19)
  fixed(7, 4)
  days.add(900 + nthWeekday(year, 9, 1, 1)) // Labor Day
  days.add(1000 + nthWeekday(year, 10, 1, 2)) // Columbus Day
  fixed(11, 11)
  days.add(1100 + nthWeekday(year, 11, 4, 4)) // Thanksgiving
  fixed(12, 25)
  if (new Date(Date.UTC(year + 1, 0, 1)).getUTCDay() === 6) days.add(1231)
  holidayCache.set(year, days)
  return days
}

/**
 * Whether a local calendar date is a US federal holiday or the observed day of one.
 *
 * @category guards
 */
export const isUsFederalHoliday = (year: number, month: number, day: number): boolean =>
  holidaysOf(year).has(month * 100 + day)

// ---------------------------------------------------------------------------------------------------------------
// Rules compiled per zone
// ---------------------------------------------------------------------------------------------------------------

interface LocalDate {
  readonly year: number
  readonly month: number
  readonly day: number
  readonly weekday: number // Monday = 0 .. Sunday = 6
}

const dateFormats = new Map<string, Intl.DateTimeFormat>()
const localDate = (zone: string, instant: number): LocalDate => {
  let format = dateFormats.get(zone)
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-US", { timeZone: zone, year: "numeric", month: "numeric", day: "numeric" })
    dateFormats.set(zone, format)
  }
  const [month = "1", day = "1", year = "1970"] = format.format(instant).split("/")
  const y = Number(year)
  const m = Number(month)
  const d = Number(day)
  return { year: y, month: m, day: d, weekday: (new Date(Date.UTC(y, m - 1, d)).getUTCDay() + 6) % 7 }
}

interface Compiled {
  readonly rule: JurisdictionRule
  readonly zone: string
  readonly windows: ReadonlyArray<CallTimeWindow>
  /** One all-day window per local weekday, to find where a local day ends (DST-aware). */
  readonly wholeDays: ReadonlyArray<CallTimeWindow> | undefined
}

const compiledRules = new WeakMap<JurisdictionRule, Map<string, Compiled>>()

const compile = (rule: JurisdictionRule, zone: string): Compiled => {
  let byZone = compiledRules.get(rule)
  if (byZone === undefined) compiledRules.set(rule, byZone = new Map())
  let found = byZone.get(zone)
  if (found === undefined) {
    found = {
      rule,
      zone,
      windows: rule.hours.map((row) => ({
        windows: [{ start: row.start, end: row.end }],
        timezone: zone,
        day: row.days
      })),
      wholeDays: rule.noHolidays
        ? Weekdays.map((day: Weekday) => ({ windows: [{ start: 0, end: 1440 }], timezone: zone, day: [day] }))
        : undefined
    }
    byZone.set(zone, found)
  }
  return found
}

const isRuleOpen = (c: Compiled, instant: number): boolean => {
  let open = false
  for (const w of c.windows) {
    if (isOpen(w, instant)) {
      open = true
      break
    }
  }
  if (!open || c.wholeDays === undefined) return open
  const date = localDate(c.zone, instant)
  return !isUsFederalHoliday(date.year, date.month, date.day)
}

/** The first instant >= `instant` at which the rule is open in the zone, NaN when none within the horizon. */
const ruleOpening = (c: Compiled, instant: number, limit: number): number => {
  let from = instant
  while (from <= limit) {
    let best = Number.POSITIVE_INFINITY
    for (const w of c.windows) {
      const next = nextOpening(w, from)
      if (Option.isSome(next) && next.value < best) best = next.value
    }
    if (best === Number.POSITIVE_INFINITY) return Number.NaN
    if (c.wholeDays === undefined) return best
    const date = localDate(c.zone, best)
    if (!isUsFederalHoliday(date.year, date.month, date.day)) return best
    // A holiday closes the whole local day: continue from the first instant of the next one.
    const end = nextClosing(c.wholeDays[date.weekday]!, best)
    if (Option.isNone(end)) return Number.NaN
    from = end.value
  }
  return Number.NaN
}

// ---------------------------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------------------------

/**
 * Whether every rule allows `instant` (epoch ms) in every zone. An empty zone set (a number of unknown country)
 * or an empty rule list constrains nothing.
 *
 * @category combinators
 */
export const isLegalAt = (
  instant: number,
  zones: ReadonlyArray<string>,
  rules: ReadonlyArray<JurisdictionRule>
): boolean => {
  for (const zone of zones) {
    for (const rule of rules) {
      if (!isRuleOpen(compile(rule, zone), instant)) return false
    }
  }
  return true
}

/**
 * The first instant `>= instant` that is legal in every zone under every rule and, when `window` is given, inside
 * the batch's call window: `instant` itself when it already is. `None` when there is none within `horizonMs`
 * (default 14 days).
 *
 * @category combinators
 */
export const nextLegalOpening = (
  instant: number,
  zones: ReadonlyArray<string>,
  rules: ReadonlyArray<JurisdictionRule>,
  window?: CallTimeWindow,
  horizonMs: number = defaultHorizonMs
): Option.Option<number> => {
  const limit = instant + horizonMs
  const constraints: Array<Compiled> = []
  for (const zone of zones) for (const rule of rules) constraints.push(compile(rule, zone))
  let t = instant
  while (t <= limit) {
    // Any instant legal for all constraints is >= each constraint's own next opening, so jumping to the latest of
    // them skips nothing; when none moves, t is legal for all of them.
    let latest = t
    for (const c of constraints) {
      const opening = ruleOpening(c, t, limit)
      if (Number.isNaN(opening)) return Option.none()
      if (opening > latest) latest = opening
    }
    if (window !== undefined) {
      const opening = nextOpening(window, t)
      if (Option.isNone(opening)) return Option.none()
      if (opening.value > latest) latest = opening.value
    }
    if (latest === t) return Option.some(t)
    t = latest
  }
  return Option.none()
}

/**
 * Why a task may not be dialled at an instant: the binding closed rule and the zone it was read in, or the call
 * window, and the next instant at which everything is open.
 *
 * @category models
 */
export type Blocked =
  | {
    readonly _tag: "LegalHours"
    readonly rule: JurisdictionRule
    readonly zone: string
    readonly until: Option.Option<number>
  }
  | { readonly _tag: "CallWindow"; readonly until: Option.Option<number> }

/**
 * What blocks dialling at `instant`, or `None` when nothing does. Of the closed rules, the one that stays closed
 * longest is named (the binding one: at 07:00 in Miami that is FL 08:00-20:00 rather than the federal 08:00-21:00,
 * which opens at the same time; ties go to the later rule, a state row over the federal one).
 *
 * @category combinators
 */
export const explain = (
  instant: number,
  zones: ReadonlyArray<string>,
  rules: ReadonlyArray<JurisdictionRule>,
  window?: CallTimeWindow,
  horizonMs: number = defaultHorizonMs
): Option.Option<Blocked> => {
  let blocking: Compiled | undefined
  let blockingOpening = Number.NEGATIVE_INFINITY
  for (const zone of zones) {
    for (const rule of rules) {
      const c = compile(rule, zone)
      if (isRuleOpen(c, instant)) continue
      const opening = ruleOpening(c, instant, instant + horizonMs)
      const key = Number.isNaN(opening) ? Number.POSITIVE_INFINITY : opening
      if (key >= blockingOpening) {
        blocking = c
        blockingOpening = key
      }
    }
  }
  if (blocking !== undefined) {
    const until = nextLegalOpening(instant, zones, rules, window, horizonMs)
    return Option.some({ _tag: "LegalHours", rule: blocking.rule, zone: blocking.zone, until })
  }
  if (window !== undefined && !isOpen(window, instant)) {
    return Option.some({ _tag: "CallWindow", until: nextLegalOpening(instant, zones, rules, window, horizonMs) })
  }
  return Option.none()
}

const clock = (minute: number): string =>
  `${String(Math.floor(minute / 60)).padStart(2, "0")}:${String(minute % 60).padStart(2, "0")}`

const shortDay = (day: Weekday): string => day.slice(0, 3)

const daysLabel = (days: ReadonlyArray<Weekday>): string => {
  const indices = [...new Set(days.map((d) => Weekdays.indexOf(d)))].sort((a, b) => a - b)
  if (indices.length === 7) return ""
  const runs: Array<string> = []
  for (let i = 0; i < indices.length;) {
    let j = i
    while (j + 1 < indices.length && indices[j + 1] === indices[j]! + 1) j++
    runs.push(
      j === i
        ? shortDay(Weekdays[indices[i]!]!)
        : `${shortDay(Weekdays[indices[i]!]!)}-${shortDay(Weekdays[indices[j]!]!)}`
    )
    i = j + 1
  }
  return ` ${runs.join(",")}`
}

/**
 * A rule as people read it: `FL 08:00-20:00`, `TX 09:00-21:00 Mon-Sat, 12:00-21:00 Sun`, `AL 08:00-20:00 Mon-Sat
 * no holidays`.
 *
 * @category encoding
 */
export const ruleLabel = (rule: JurisdictionRule): string =>
  `${rule.jurisdiction} ${
    rule.hours.map((row) => `${clock(row.start)}-${clock(row.end)}${daysLabel(row.days)}`).join(", ")
  }${rule.noHolidays ? " no holidays" : ""}`

const isoSeconds = (instant: number): string => new Date(instant).toISOString().replace(/\.\d{3}Z$/u, "Z")

/**
 * The task's `state_reason` for a blocked instant, e.g.
 * `legal_hours: FL 08:00-20:00 America/New_York until 2026-12-01T13:00:00Z`, or
 * `call_window: until 2026-12-01T14:00:00Z`; "no opening within 14 days" when there is none.
 *
 * @category encoding
 */
export const stateReason = (blocked: Blocked, horizonMs: number = defaultHorizonMs): string => {
  const until = Option.match(blocked.until, {
    onNone: () => `no opening within ${Math.round(horizonMs / dayMs)} days`,
    onSome: (t) => `until ${isoSeconds(t)}`
  })
  return blocked._tag === "LegalHours"
    ? `legal_hours: ${ruleLabel(blocked.rule)} ${blocked.zone} ${until}`
    : `call_window: ${until}`
}
