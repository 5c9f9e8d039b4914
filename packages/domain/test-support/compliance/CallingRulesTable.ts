/**
 * The calling rules of `shared/reference/calling-rules.md`, written out again by hand for the tests: one row per
 * jurisdiction, its local hours for each weekday, whether it closes on legal holidays and its attempt cap. This file
 * is an independent witness of the policy, so it imports nothing from `src/`: a test that compared the policy with
 * a table built from the policy could not catch a wrong row (issue 28, "An independent table of the rules").
 *
 * Reading of the source's table ("hours, local time at the called party"), row by row, with the conservative
 * reading where the source is vague (decision 0621):
 *
 * | source row                                                  | here                                          |
 * | ----------------------------------------------------------- | --------------------------------------------- |
 * | Federal 8:00-21:00                                          | every day 08:00-21:00                         |
 * | Florida 8:00-20:00, 3 calls per 24 h                        | every day 08:00-20:00, cap 3                  |
 * | Oklahoma 8:00-20:00, 3 per 24 h                             | every day 08:00-20:00, cap 3                  |
 * | Maryland 8:00-20:00, 3 calls or texts per 24 h              | every day 08:00-20:00, cap 3                  |
 * | Connecticut 9:00-20:00 (9-20 vs 9-21: take the stricter)    | every day 09:00-20:00                         |
 * | Washington 8:00-20:00                                       | every day 08:00-20:00                         |
 * | Texas 9:00-21:00 Mon-Sat; 12:00-21:00 Sun                   | Mon-Sat 09:00-21:00, Sun 12:00-21:00          |
 * | Alabama, Louisiana 8:00-20:00, no Sundays, no legal holidays | Mon-Sat 08:00-20:00, closed on holidays       |
 * | Mississippi 8:00-20:00, no Sundays                          | Mon-Sat 08:00-20:00                           |
 * | Kentucky 10:00-21:00                                        | every day 10:00-21:00                         |
 * | Michigan, Minnesota 9:00-21:00                              | every day 09:00-21:00                         |
 * | Nevada 9:00-20:00                                           | every day 09:00-20:00                         |
 * | Rhode Island 9:00-18:00 weekdays (weekends not confirmed)   | Mon-Fri 09:00-18:00, no weekend calls         |
 * | Pennsylvania federal hours, Sunday and holiday restrictions | Mon-Sat 08:00-21:00, closed on holidays       |
 *
 * Hours are "HH:MM-HH:MM" strings, a half-open interval of local wall-clock time (the call may start at 08:00 and
 * must have started before 20:00), so a row reads as its source does.
 */

/** Monday first, as the source's "Mon-Sat" reads. */
export const weekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"] as const
export type TableWeekday = typeof weekdays[number]

export interface TableRow {
  /** "US" for the federal rule, else the state's postal code. */
  readonly jurisdiction: string
  /** Local hours per weekday, `null` when no call may be placed that day. */
  readonly hours: Readonly<Record<TableWeekday, string | null>>
  /** No calls on a US federal holiday or its observed day (test-support/compliance/FederalHolidays.ts). */
  readonly closedOnHolidays: boolean
  /** At most this many attempts per rolling 24 hours, `null` when the source names no cap. */
  readonly attemptsPer24h: number | null
  /** The source column of calling-rules.md. */
  readonly source: string
}

const everyDay = (hours: string): TableRow["hours"] => ({
  Monday: hours,
  Tuesday: hours,
  Wednesday: hours,
  Thursday: hours,
  Friday: hours,
  Saturday: hours,
  Sunday: hours
})

const noSunday = (hours: string): TableRow["hours"] => ({ ...everyDay(hours), Sunday: null })

export const federalRow: TableRow = {
  jurisdiction: "US",
  hours: everyDay("08:00-21:00"),
  closedOnHolidays: false,
  attemptsPer24h: null,
  source: "47 CFR 64.1200(c)(1), (c)(2), (d); FCC 24-17"
}

export const stateRows: ReadonlyArray<TableRow> = [
  {
    jurisdiction: "FL",
    hours: everyDay("08:00-20:00"),
    closedOnHolidays: false,
    attemptsPer24h: 3,
    source: "Fla. Stat. 501.616(6); 501.059"
  },
  {
    jurisdiction: "OK",
    hours: everyDay("08:00-20:00"),
    closedOnHolidays: false,
    attemptsPer24h: 3,
    source: "Oklahoma Telephone Solicitation Act (2022)"
  },
  {
    jurisdiction: "MD",
    hours: everyDay("08:00-20:00"),
    closedOnHolidays: false,
    attemptsPer24h: 3,
    source: "Stop the Spam Calls Act (from 2024-01-01)"
  },
  {
    jurisdiction: "CT",
    hours: everyDay("09:00-20:00"),
    closedOnHolidays: false,
    attemptsPer24h: null,
    source: "PA 23-98"
  },
  {
    jurisdiction: "WA",
    hours: everyDay("08:00-20:00"),
    closedOnHolidays: false,
    attemptsPer24h: null,
    source: "RCW 19.158.040"
  },
  {
    jurisdiction: "TX",
    hours: { ...everyDay("09:00-21:00"), Sunday: "12:00-21:00" },
    closedOnHolidays: false,
    attemptsPer24h: null,
    source: "Bus. & Com. Code 301.051"
  },
  {
    jurisdiction: "AL",
    hours: noSunday("08:00-20:00"),
    closedOnHolidays: true,
    attemptsPer24h: null,
    source: "secondary tables"
  },
  {
    jurisdiction: "LA",
    hours: noSunday("08:00-20:00"),
    closedOnHolidays: true,
    attemptsPer24h: null,
    source: "secondary tables"
  },
  {
    jurisdiction: "MS",
    hours: noSunday("08:00-20:00"),
    closedOnHolidays: false,
    attemptsPer24h: null,
    source: "secondary tables"
  },
  {
    jurisdiction: "KY",
    hours: everyDay("10:00-21:00"),
    closedOnHolidays: false,
    attemptsPer24h: null,
    source: "secondary tables"
  },
  {
    jurisdiction: "MI",
    hours: everyDay("09:00-21:00"),
    closedOnHolidays: false,
    attemptsPer24h: null,
    source: "secondary tables"
  },
  {
    jurisdiction: "MN",
    hours: everyDay("09:00-21:00"),
    closedOnHolidays: false,
    attemptsPer24h: null,
    source: "secondary tables"
  },
  {
    jurisdiction: "NV",
    hours: everyDay("09:00-20:00"),
    closedOnHolidays: false,
    attemptsPer24h: null,
    source: "secondary tables"
  },
  {
    jurisdiction: "RI",
    hours: { ...everyDay("09:00-18:00"), Saturday: null, Sunday: null },
    closedOnHolidays: false,
    attemptsPer24h: null,
    source: "secondary tables"
  },
  {
    jurisdiction: "PA",
    hours: noSunday("08:00-21:00"),
    closedOnHolidays: true,
    attemptsPer24h: null,
    source: "secondary tables"
  }
]

/** Every row of the table, the federal one first. */
export const allRows: ReadonlyArray<TableRow> = [federalRow, ...stateRows]

export const rowOf = (jurisdiction: string): TableRow | undefined =>
  allRows.find((r) => r.jurisdiction === jurisdiction)

/** `"08:00-20:00"` as local minutes since midnight, end exclusive. */
export const parseHours = (hours: string): { readonly start: number; readonly end: number } => {
  const match = /^(\d\d):(\d\d)-(\d\d):(\d\d)$/u.exec(hours)
  if (match === null) throw new Error(`not an hours string: ${hours}`)
  const [, h1, m1, h2, m2] = match.map(Number) as [number, number, number, number, number]
  return { start: h1 * 60 + m1, end: h2 * 60 + m2 }
}

/** Whether the row allows a call at a local wall-clock minute of a weekday (holidays aside). */
export const rowAllows = (row: TableRow, weekday: TableWeekday, minute: number): boolean => {
  const hours = row.hours[weekday]
  if (hours === null) return false
  const { end, start } = parseHours(hours)
  return start <= minute && minute < end
}
