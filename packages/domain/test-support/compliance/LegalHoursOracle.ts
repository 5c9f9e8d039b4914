/**
 * A slow, obvious judge of legal hours for the tests, built only from the hand-written tables beside it
 * (CallingRulesTable, FederalHolidays, AreaCodeZones) and the platform's `Intl` time zone data: it imports nothing
 * from `src/`, so it can judge the product rather than agree with it (issue 28: "the property oracle evaluates with
 * the fixture"; "ComplianceEndToEnd checks the dial instants against the fixture's oracle").
 *
 * A call at an instant is legal when, in every zone the number may be in, the local wall-clock minute and date are
 * allowed by every rule that applies: the federal row, the area code's state row and the address state's row
 * (calling-rules.md: "a dialer should satisfy both"). The next opening is found by trying every whole minute.
 */
import { allExpectations, type ExpectedZones, stateZones } from "./AreaCodeZones.ts"
import { rowAllows, rowOf, type TableRow, type TableWeekday, weekdays } from "./CallingRulesTable.ts"
import { isClosedDate } from "./FederalHolidays.ts"

const minuteMs = 60_000
const blockMs = 15 * minuteMs

/** A local wall-clock reading: weekday, minute since local midnight, and the local date as YYYY-MM-DD. */
export interface Wall {
  readonly weekday: TableWeekday
  readonly minute: number
  readonly date: string
}

const offsetFormats = new Map<string, Intl.DateTimeFormat>()
/** The zone's UTC offset in ms at an instant, read from Intl ("GMT-05:00"). */
const intlOffset = (zone: string, instant: number): number => {
  let format = offsetFormats.get(zone)
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" })
    offsetFormats.set(zone, format)
  }
  const name = format.formatToParts(instant).find((p) => p.type === "timeZoneName")!.value
  const match = /^GMT(?:([+-])(\d\d):(\d\d))?$/u.exec(name)
  if (match === null) throw new Error(`unexpected offset name ${name} for ${zone}`)
  if (match[1] === undefined) return 0
  return (match[1] === "-" ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3])) * minuteMs
}

// Offsets per 15-minute block of UTC: Intl is asked at both ends of the block, and only a block in which the offset
// changes is read minute by minute, so the oracle stays exact without asking Intl for every minute of two weeks.
const blockOffsets = new Map<string, number>()
const offsetAt = (zone: string, instant: number): number => {
  const block = Math.floor(instant / blockMs)
  const key = `${zone}@${block}`
  let offset = blockOffsets.get(key)
  if (offset === undefined) {
    const first = intlOffset(zone, block * blockMs)
    const last = intlOffset(zone, block * blockMs + blockMs - 1)
    offset = first === last ? first : Number.NaN
    if (blockOffsets.size > 500_000) blockOffsets.clear()
    blockOffsets.set(key, offset)
  }
  return Number.isNaN(offset) ? intlOffset(zone, instant) : offset
}

const pad = (n: number) => String(n).padStart(2, "0")

export const wallClock = (zone: string, instant: number): Wall => {
  const local = new Date(instant + offsetAt(zone, instant))
  return {
    weekday: weekdays[(local.getUTCDay() + 6) % 7]!,
    minute: local.getUTCHours() * 60 + local.getUTCMinutes(),
    date: `${local.getUTCFullYear()}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}`
  }
}

/** A rule as the oracle reads it: which local minutes it allows, and whether holidays close it. */
export interface OracleRule {
  readonly name: string
  readonly allows: (weekday: TableWeekday, minute: number) => boolean
  readonly closedOnHolidays: boolean
}

export const ruleOfRow = (row: TableRow): OracleRule => ({
  name: row.jurisdiction,
  allows: (weekday, minute) => rowAllows(row, weekday, minute),
  closedOnHolidays: row.closedOnHolidays
})

const ruleOpen = (rule: OracleRule, wall: Wall): boolean =>
  rule.allows(wall.weekday, wall.minute) && !(rule.closedOnHolidays && isClosedDate(wall.date))

/** The rules of the table for jurisdictions (the federal row always; states the table has no row for add none). */
export const rulesOf = (jurisdictions: Iterable<string>): Array<OracleRule> => {
  const names = new Set(["US", ...jurisdictions])
  return [...names].flatMap((j) => {
    const row = rowOf(j)
    return row === undefined ? [] : [ruleOfRow(row)]
  })
}

/** The expectation of a number, from the longest prefix of AreaCodeZones that matches; throws for any other. */
export const expectationOf = (number: string): ExpectedZones => {
  let best: ExpectedZones | undefined
  for (const e of allExpectations) {
    if (number.startsWith(e.prefix) && (best === undefined || e.prefix.length > best.prefix.length)) best = e
  }
  if (best === undefined) throw new Error(`the oracle has no expectation for ${number}`)
  return best
}

/** A contact's location fields, as a batch task's contact may carry them. */
export interface Address {
  readonly timezone?: string | undefined
  readonly state?: string | undefined
}

/**
 * The zones and jurisdictions that govern a call to `number` (decision 0620 rule 4 and 0621): a contact's time zone
 * settles an ambiguous number when it is one of its zones, else adds itself; an address state (when no time zone
 * applies) narrows the zones to those inside the state, or adds the state's zones when none are; the address state
 * adds its rules either way.
 */
export const constraintOf = (
  number: string,
  address: Address = {}
): { readonly zones: ReadonlyArray<string>; readonly jurisdictions: ReadonlyArray<string> } => {
  const expected = expectationOf(number)
  let zones = [...expected.zones]
  const state = address.state?.trim().toUpperCase()
  const knownState = state !== undefined && stateZones[state] !== undefined ? state : undefined
  if (address.timezone !== undefined) {
    zones = zones.includes(address.timezone) ? [address.timezone] : [...zones, address.timezone]
  } else if (knownState !== undefined) {
    const inState = zones.filter((z) => stateZones[knownState]!.includes(z))
    zones = inState.length > 0 ? inState : [...new Set([...zones, ...stateZones[knownState]!])]
  }
  const jurisdictions = knownState === undefined ? [...expected.states] : [...expected.states, knownState]
  return { zones: [...new Set(zones)].sort(), jurisdictions }
}

/** Whether a call at `instant` is legal in every zone under every rule. */
export const isLegal = (instant: number, zones: ReadonlyArray<string>, rules: ReadonlyArray<OracleRule>): boolean =>
  zones.every((zone) => {
    const wall = wallClock(zone, instant)
    return rules.every((rule) => ruleOpen(rule, wall))
  })

/** The first rule (and zone) that forbids a call at `instant`, for messages. */
export const whyNot = (
  instant: number,
  zones: ReadonlyArray<string>,
  rules: ReadonlyArray<OracleRule>
): string | undefined => {
  for (const zone of zones) {
    const wall = wallClock(zone, instant)
    for (const rule of rules) {
      if (!ruleOpen(rule, wall)) {
        return `${rule.name} closed in ${zone} (${wall.weekday} ${wall.date} minute ${wall.minute})`
      }
    }
  }
  return undefined
}

/** A batch call window as the oracle reads it: local minutes on some weekdays in one zone. */
export interface OracleWindow {
  readonly zone: string
  readonly days: ReadonlyArray<TableWeekday>
  readonly ranges: ReadonlyArray<{ readonly start: number; readonly end: number }>
}

export const windowOpen = (w: OracleWindow, instant: number): boolean => {
  const wall = wallClock(w.zone, instant)
  return (w.days.length === 0 || w.days.includes(wall.weekday)) &&
    w.ranges.some((r) => r.start <= wall.minute && wall.minute < r.end)
}

/** Fourteen days: how far the product looks for an opening (defaultHorizonMs, docs/decisions/0622). */
export const horizonMs = 14 * 86_400_000

/**
 * The first instant >= `instant` that is legal (and inside the window, when given): `instant` itself when it is, else
 * the first whole minute after it that is, up to `instant + horizon`; `undefined` when there is none.
 */
export const nextOpening = (
  instant: number,
  zones: ReadonlyArray<string>,
  rules: ReadonlyArray<OracleRule>,
  window?: OracleWindow,
  horizon: number = horizonMs
): number | undefined => {
  const ok = (u: number) => isLegal(u, zones, rules) && (window === undefined || windowOpen(window, u))
  if (ok(instant)) return instant
  for (let u = Math.ceil(instant / minuteMs) * minuteMs; u <= instant + horizon; u += minuteMs) {
    if (ok(u)) return u
  }
  return undefined
}

/** The rules (from the table) and zones of a call to `number` for a contact at `address`. */
export const judgeOf = (number: string, address?: Address) => {
  const { jurisdictions, zones } = constraintOf(number, address)
  return { zones, rules: rulesOf(jurisdictions), jurisdictions }
}
