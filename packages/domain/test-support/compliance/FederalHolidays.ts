/**
 * US federal holidays (5 U.S.C. 6103(a)) of 2026-2030, pinned by date as the Office of Personnel Management publishes
 * them (opm.gov, "Federal Holidays", pay & leave, one list per year): each holiday's calendar date and, where it
 * falls on a weekend, the day it is observed (6103(b): a Saturday holiday is observed on the Friday before, a Sunday
 * one on the Monday after). Written out, not computed, so a test against this list catches a rule the code computes
 * wrongly or leaves out (issue 28: "US federal holidays pinned by date").
 *
 * States whose rule says "no legal holidays" (AL, LA, PA in calling-rules.md) do not say which of the two days
 * counts, so the conservative reading closes both (decision 0621): `closedDates` holds every date and every
 * observed date. Inauguration Day (6103(c), 2029-01-20) is a holiday only for federal employees around Washington,
 * D.C., not a legal public holiday of 6103(a), and is not listed.
 *
 * Christmas 2025 and the first two holidays of 2031 are listed too: an instant of 2026-01-01 UTC is still 2025 in
 * the Americas, and a 14-day horizon from late December 2030 reaches January 2031.
 */

export interface FederalHoliday {
  readonly name: string
  /** The holiday's own date, YYYY-MM-DD. */
  readonly date: string
  /** The weekday it is observed on when `date` is a Saturday or Sunday. */
  readonly observed?: string
}

export const federalHolidays: ReadonlyArray<FederalHoliday> = [
  // December 2025, for instants of 2026-01-01 UTC that are still 2025-12-31 in the Americas
  { name: "Christmas Day", date: "2025-12-25" },
  // 2026
  { name: "New Year's Day", date: "2026-01-01" },
  { name: "Birthday of Martin Luther King, Jr.", date: "2026-01-19" },
  { name: "Washington's Birthday", date: "2026-02-16" },
  { name: "Memorial Day", date: "2026-05-25" },
  { name: "Juneteenth National Independence Day", date: "2026-06-19" },
  { name: "Independence Day", date: "2026-07-04", observed: "2026-07-03" },
  { name: "Labor Day", date: "2026-09-07" },
  { name: "Columbus Day", date: "2026-10-12" },
  { name: "Veterans Day", date: "2026-11-11" },
  { name: "Thanksgiving Day", date: "2026-11-26" },
  { name: "Christmas Day", date: "2026-12-25" },
  // 2027
  { name: "New Year's Day", date: "2027-01-01" },
  { name: "Birthday of Martin Luther King, Jr.", date: "2027-01-18" },
  { name: "Washington's Birthday", date: "2027-02-15" },
  { name: "Memorial Day", date: "2027-05-31" },
  { name: "Juneteenth National Independence Day", date: "2027-06-19", observed: "2027-06-18" },
  { name: "Independence Day", date: "2027-07-04", observed: "2027-07-05" },
  { name: "Labor Day", date: "2027-09-06" },
  { name: "Columbus Day", date: "2027-10-11" },
  { name: "Veterans Day", date: "2027-11-11" },
  { name: "Thanksgiving Day", date: "2027-11-25" },
  { name: "Christmas Day", date: "2027-12-25", observed: "2027-12-24" },
  // 2028 (New Year's Day on a Saturday is observed on Friday 2027-12-31)
  { name: "New Year's Day", date: "2028-01-01", observed: "2027-12-31" },
  { name: "Birthday of Martin Luther King, Jr.", date: "2028-01-17" },
  { name: "Washington's Birthday", date: "2028-02-21" },
  { name: "Memorial Day", date: "2028-05-29" },
  { name: "Juneteenth National Independence Day", date: "2028-06-19" },
  { name: "Independence Day", date: "2028-07-04" },
  { name: "Labor Day", date: "2028-09-04" },
  { name: "Columbus Day", date: "2028-10-09" },
  { name: "Veterans Day", date: "2028-11-11", observed: "2028-11-10" },
  { name: "Thanksgiving Day", date: "2028-11-23" },
  { name: "Christmas Day", date: "2028-12-25" },
  // 2029
  { name: "New Year's Day", date: "2029-01-01" },
  { name: "Birthday of Martin Luther King, Jr.", date: "2029-01-15" },
  { name: "Washington's Birthday", date: "2029-02-19" },
  { name: "Memorial Day", date: "2029-05-28" },
  { name: "Juneteenth National Independence Day", date: "2029-06-19" },
  { name: "Independence Day", date: "2029-07-04" },
  { name: "Labor Day", date: "2029-09-03" },
  { name: "Columbus Day", date: "2029-10-08" },
  { name: "Veterans Day", date: "2029-11-11", observed: "2029-11-12" },
  { name: "Thanksgiving Day", date: "2029-11-22" },
  { name: "Christmas Day", date: "2029-12-25" },
  // 2030
  { name: "New Year's Day", date: "2030-01-01" },
  { name: "Birthday of Martin Luther King, Jr.", date: "2030-01-21" },
  { name: "Washington's Birthday", date: "2030-02-18" },
  { name: "Memorial Day", date: "2030-05-27" },
  { name: "Juneteenth National Independence Day", date: "2030-06-19" },
  { name: "Independence Day", date: "2030-07-04" },
  { name: "Labor Day", date: "2030-09-02" },
  { name: "Columbus Day", date: "2030-10-14" },
  { name: "Veterans Day", date: "2030-11-11" },
  { name: "Thanksgiving Day", date: "2030-11-28" },
  { name: "Christmas Day", date: "2030-12-25" },
  // 2031, for horizons that reach into January
  { name: "New Year's Day", date: "2031-01-01" },
  { name: "Birthday of Martin Luther King, Jr.", date: "2031-01-20" }
]

/** First and last local date the list covers completely. */
export const coveredFrom = "2025-12-01"
export const coveredUntil = "2031-01-31"

/** Every date a "no legal holidays" rule closes: each holiday's date and its observed date. */
export const closedDates: ReadonlySet<string> = new Set(
  federalHolidays.flatMap((h) => h.observed === undefined ? [h.date] : [h.date, h.observed])
)

/** Whether a local calendar date (YYYY-MM-DD) is closed; throws outside the covered range, so no gap passes. */
export const isClosedDate = (date: string): boolean => {
  if (date < coveredFrom || date > coveredUntil) {
    throw new Error(`FederalHolidays covers ${coveredFrom}..${coveredUntil}, asked for ${date}`)
  }
  return closedDates.has(date)
}
