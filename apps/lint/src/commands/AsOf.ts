/**
 * The `--as-of YYYY-MM-DD` date: the instant the schedule is read at. Without the flag it is 00:00
 * UTC of today, from effect's `Clock` (so tests set the date with `TestClock`, never the machine).
 */
import { utcMidnight } from "@svc/domain/Deprecation/Rule.ts"
import { Clock, Effect, Option, Schema } from "effect"
import { Flag } from "effect/cli"

const isCalendarDate = (s: string) => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false
  return new Date(utcMidnight(s)).toISOString().slice(0, 10) === s
}

/** A real calendar date written `YYYY-MM-DD`. */
export const IsoDate = Schema.String.pipe(
  Schema.check(Schema.makeFilter(isCalendarDate, { message: "Expected a date as YYYY-MM-DD" }))
)

/** The `--as-of` flag, shared by every command that reads the schedule. */
export const asOfFlag = Flag.String("as-of").pipe(
  Flag.withDescription("Read the schedule as of this UTC date (YYYY-MM-DD); default: today"),
  Flag.withSchema(IsoDate),
  Flag.optional
)

/** The as-of date and its instant (00:00 UTC). */
export interface AsOf {
  readonly date: string
  readonly at: number
}

const fromDate = (date: string): AsOf => ({ date, at: utcMidnight(date) })

/** Resolves the flag: the date given, or today (UTC) from the Clock. */
export const resolve = (flag: Option.Option<string>): Effect.Effect<AsOf> =>
  Option.isSome(flag)
    ? Effect.succeed(fromDate(flag.value))
    : Effect.map(Clock.currentTimeMillis, (now) => fromDate(new Date(now).toISOString().slice(0, 10)))
