/**
 * When a group of tasks (one zone set, one rule set) can be dialled inside a batch's call window over a long
 * horizon, at the granularity of UTC days (the `--as-of` date is a UTC date): the first legal instant, and the
 * breaks, runs of more than a week of UTC days without a single legal instant (docs/decisions/0627).
 *
 * Built only on the domain's `nextLegalOpening` (the function dispatch uses, decision 0622), which jumps from opening
 * to opening, so one call crosses a whole illegal stretch and no minute is ever scanned. A UTC day holds a legal
 * instant exactly when the first legal instant at or after its 00:00 falls before the next day's 00:00.
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
 *
 * After a legal day `d`, the days `d+1 .. d+6` cannot hold a break by themselves (fewer than `MIN_BREAK_DAYS`), so the
 * next question is asked from `d+7`: about one call per week of the horizon. Only when the answer lies far enough
 * ahead for a break are the skipped days asked about, to find the last legal day before it exactly.
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
  const opening = nextLegalOpening(from, zones, rules, window, horizonMs)
  if (Option.isNone(opening)) return { first: undefined, breaks: [] }
  /** The first UTC day at or after `day` that holds a legal instant, `endDay` when none does. */
  const nextLegalDay = (day: number): number => {
    const at = Math.max(day * DAY_MS, from)
    if (at >= end) return endDay
    const next = nextLegalOpening(at, zones, rules, window, end - at)
    return Option.isNone(next) ? endDay : Math.floor(next.value / DAY_MS)
  }
  const breaks: Array<Break> = []
  const push = (fromDay: number, toDay: number) =>
    breaks.push({ from: fromDay * DAY_MS, to: toDay * DAY_MS, open: toDay >= endDay })
  let last = Math.floor(opening.value / DAY_MS)
  if (last - firstDay >= MIN_BREAK_DAYS) push(firstDay, last)
  for (;;) {
    const probe = last + 7
    const next = nextLegalDay(probe)
    if (next - last - 1 >= MIN_BREAK_DAYS) {
      // The empty run may begin before the probe: find the last legal day among the skipped ones.
      const bound = Math.min(probe, endDay)
      for (let day = last + 1; day < bound;) {
        const legal = nextLegalDay(day)
        if (legal >= bound) break
        last = legal
        day = legal + 1
      }
      if (next - last - 1 >= MIN_BREAK_DAYS) push(last + 1, next)
    }
    if (next >= endDay) break
    last = next
  }
  return { first: opening.value, breaks }
}
