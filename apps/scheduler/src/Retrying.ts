/**
 * The scheduler's background loops (recording, contact feed, cron) never stop on a failure: a lost database
 * connection or a failed statement is logged with its cause and the loop goes round again a second later, so a
 * database restart costs a pause, not a dead worker. Interruption (shutdown) still ends them.
 */
import { Cause, Effect } from "effect"

/** How long a loop waits after a failed round. */
export const RETRY_AFTER_MS = 1_000

/**
 * Repeats `self` forever; a failed round logs `<what> failed; trying again in 1 s` with its cause, then waits.
 *
 * @category combinators
 */
export const forever = (what: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<never, never, R> =>
  self.pipe(
    Effect.catchCause((cause) =>
      Effect.logError(`${what} failed; trying again in 1 s`).pipe(
        Effect.annotateLogs({ cause: Cause.pretty(cause) }),
        Effect.andThen(Effect.sleep(RETRY_AFTER_MS))
      )
    ),
    Effect.forever
  )
