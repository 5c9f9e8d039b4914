/**
 * The scheduler's background loops (dispatch, recording, contact feed, cron, backfill) never stop on a failure:
 * a lost database connection or a failed statement is logged and the loop goes round again, so a database
 * restart costs a pause, not a dead worker. Interruption (shutdown) still ends them.
 *
 * A database outage is logged once per state change for the whole process, not once per failed round of each
 * loop with a stack trace (issue 16: every loop logged a 2.5 KB stack every second while PostgreSQL was down):
 * the first failure that is an outage (DatabaseUnavailable.isUnavailable) logs `database unavailable; the
 * scheduler pauses until it returns`, later ones only count (a summary every 30 s), and the first dispatch pass
 * that goes through again logs `database available again; the scheduler resumes`. Any other failure is logged
 * with its cause, every time: it is a bug or a bad row, not weather.
 */
import { isUnavailable } from "@svc/store/DatabaseUnavailable.ts"
import * as SqlErrorMessage from "@svc/store/SqlErrorMessage.ts"
import { Cause, Clock, Effect } from "effect"

/** How long a loop waits after a failed round. */
export const RETRY_AFTER_MS = 1_000

/** How often a summary is logged while the database stays unavailable. */
export const OUTAGE_SUMMARY_MS = 30_000

/** This process's view of the database: one outage at a time, shared by every loop. */
const outage = { down: false, since: 0, failures: 0, summarisedAt: 0 }

/**
 * Logs a failed round of a loop: an outage once per state change, anything else at `level` with its cause.
 *
 * @category logging
 */
export const logFailure = (
  message: string,
  cause: Cause.Cause<unknown>,
  level: "Error" | "Warning" = "Error"
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const error = Cause.squash(cause)
    if (!Cause.hasInterruptsOnly(cause) && isUnavailable(error)) {
      const now = yield* Clock.currentTimeMillis
      outage.failures++
      if (!outage.down) {
        outage.down = true
        outage.since = now
        outage.summarisedAt = now
        outage.failures = 1
        return yield* Effect.logError("database unavailable; the scheduler pauses until it returns").pipe(
          Effect.annotateLogs({ reason: SqlErrorMessage.describe(error), noticedBy: message })
        )
      }
      if (now - outage.summarisedAt >= OUTAGE_SUMMARY_MS) {
        outage.summarisedAt = now
        yield* Effect.logWarning("database still unavailable; the scheduler is paused").pipe(
          Effect.annotateLogs({ downMs: now - outage.since, failedRounds: outage.failures })
        )
      }
      return
    }
    const log = level === "Error" ? Effect.logError(message) : Effect.logWarning(message)
    yield* log.pipe(Effect.annotateLogs({ cause: Cause.pretty(cause) }))
  })

/**
 * A dispatch pass went through (it read the database): ends an outage, with one line.
 *
 * @category logging
 */
export const databaseAnswered: Effect.Effect<void> = Effect.suspend(() => {
  if (!outage.down) return Effect.void
  outage.down = false
  return Effect.flatMap(
    Clock.currentTimeMillis,
    (now) =>
      Effect.logWarning("database available again; the scheduler resumes").pipe(
        Effect.annotateLogs({ downMs: now - outage.since, failedRounds: outage.failures })
      )
  )
})

/**
 * Repeats `self` forever; a failed round is logged (`logFailure`: `<what> failed; trying again in 1 s`), then
 * the loop waits.
 *
 * @category combinators
 */
export const forever = (what: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<never, never, R> =>
  self.pipe(
    Effect.catchCause((cause) =>
      logFailure(`${what} failed; trying again in 1 s`, cause).pipe(Effect.andThen(Effect.sleep(RETRY_AFTER_MS)))
    ),
    Effect.forever
  )
