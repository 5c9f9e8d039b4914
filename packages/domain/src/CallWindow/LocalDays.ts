/**
 * A call window on a timeline with a fixed UTC offset, where local times are plain numbers (epoch milliseconds
 * shifted by the offset): the allowed days as a bit mask, the windows in milliseconds since local midnight, and the
 * next open or closed local time found by walking local days. `../CallWindow.ts` compiles a window to this form and
 * hands over from one constant-offset stretch of its zone to the next.
 */
import { dayMs, type Zone } from "./ZoneOffsets.ts"

/** A window prepared for evaluation: canonical windows in milliseconds, allowed days as a bit mask (Monday = 1). */
export interface Compiled {
  readonly zone: Zone
  readonly days: number
  readonly starts: Array<number>
  readonly ends: Array<number>
  readonly alwaysOpen: boolean
}

/** Monday = 0 .. Sunday = 6 for a day number counted from 1970-01-01 (a Thursday). */
export const weekdayOf = (dayNumber: number): number => (((dayNumber + 3) % 7) + 7) % 7

/**
 * On a timeline with a fixed offset, local times are just numbers: the first local time `>= local` that is open,
 * found by walking at most eight local days. `NaN` when nothing is ever open (no allowed day or window).
 */
export const nextOpenLocal = (c: Compiled, local: number): number => {
  let day = Math.floor(local / dayMs)
  let within = local - day * dayMs
  for (let k = 0; k < 8; k++, day++, within = 0) {
    if ((c.days & (1 << weekdayOf(day))) === 0) continue
    for (let i = 0; i < c.starts.length; i++) {
      if (c.ends[i]! > within) return day * dayMs + Math.max(within, c.starts[i]!)
    }
  }
  return Number.NaN
}

/** The first local time `>= local` that is closed; a window ending at 24:00 runs on into a window at 00:00. */
export const nextClosedLocal = (c: Compiled, local: number): number => {
  if (c.alwaysOpen) return Number.NaN
  let day = Math.floor(local / dayMs)
  let within = local - day * dayMs
  for (let k = 0; k < 8; k++, day++, within = 0) {
    if ((c.days & (1 << weekdayOf(day))) === 0) return day * dayMs + within
    let end = -1
    for (let i = 0; i < c.starts.length; i++) {
      if (within < c.starts[i]!) break
      if (within < c.ends[i]!) {
        end = c.ends[i]!
        break
      }
    }
    if (end < 0) return day * dayMs + within
    if (end < dayMs) return day * dayMs + end
  }
  return Number.NaN
}
