/**
 * When a group of tasks (one zone set, one rule set) can be dialled inside a batch's call window over a long
 * horizon, at the granularity of UTC days (the `--as-of` date is a UTC date): the first legal instant, and the
 * breaks, runs of more than a week of UTC days without a single legal instant (docs/decisions/0627).
 *
 * Built only on the domain's `nextLegalOpening` (the function dispatch uses, decision 0622), which jumps from opening
 * to opening: one call per legal day, and one call crosses a whole break, so a year costs a few hundred calls per
 * group and never a minute scan. A UTC day holds a legal instant exactly when the first legal instant at or after its
 * 00:00 falls before the next day's 00:00.
 */
import type { CallTimeWindow } from "@svc/domain/CallWindow.ts"
import type { JurisdictionRule } from "@svc/domain/compliance/CallingPolicy.ts"
import { nextLegalOpening } from "@svc/domain/compliance/LegalHours.ts"
import { Option } from "effect"

export const DAY_MS = 86_400_000

/**
 * A weekly window on one weekday leaves six empty days between two legal ones, and a DST change can move its UTC
 * date by one: seven. Eight or more empty days in a row mean a whole week was lost (a season, a holiday week).
 */
export const MIN_BREAK_DAYS = 8

/** A run of UTC days without a legal instant: `[from, to)` as epoch ms of 00:00 UTC. */
export interface Break {
  readonly from: number
  readonly to: number
  /** The run reaches the end of the horizon: `to` is the horizon's end, not the day legality resumes. */
  readonly open: boolean
}

/** The legal timeline of one group. */
export interface LegalTimeline {
  /** The first legal instant within the horizon; `undefined`: never legal. */
  readonly first: number | undefined
  /** Runs of at least `MIN_BREAK_DAYS` empty UTC days, in order; a leading one starts at `from`. */
  readonly breaks: ReadonlyArray<Break>
}

/**
 * The timeline from `from` (00:00 UTC of the as-of date) over `horizonMs`, for tasks of these zones and rules inside
 * `window` (`undefined`: no call window, any time).
 */
export const legalTimeline = (
  from: number,
  horizonMs: number,
  zones: ReadonlyArray<string>,
  rules: ReadonlyArray<JurisdictionRule>,
  window: CallTimeWindow | undefined
): LegalTimeline => {
  const end = from + horizonMs
  const firstDay = Math.floor(from / DAY_MS)
  const endDay = Math.ceil(end / DAY_MS)
  const breaks: Array<Break> = []
  let first: number | undefined
  // The first UTC day not yet known to hold a legal instant.
  let emptyFrom = firstDay
  let cursor = from
  while (cursor < end) {
    const opening = nextLegalOpening(cursor, zones, rules, window, end - cursor)
    if (Option.isNone(opening)) break
    first ??= opening.value
    const day = Math.floor(opening.value / DAY_MS)
    if (day - emptyFrom >= MIN_BREAK_DAYS) breaks.push({ from: emptyFrom * DAY_MS, to: day * DAY_MS, open: false })
    emptyFrom = day + 1
    cursor = emptyFrom * DAY_MS
  }
  if (first !== undefined && endDay - emptyFrom >= MIN_BREAK_DAYS) {
    breaks.push({ from: emptyFrom * DAY_MS, to: endDay * DAY_MS, open: true })
  }
  return { first, breaks }
}
