/**
 * The scheduler's background loops (recording, contact feed, cron, backfill) never stop on a failure: a lost
 * database connection or a failed statement is reported to DatabaseHealth (an outage is logged once when it starts
 * and once when it ends, anything else with its cause) and the round is tried again a second later, so a database
 * restart costs a pause, not a dead worker and not a flooded log. Interruption (shutdown) still ends them.
 */
import { Effect } from "effect"
import { DatabaseHealth } from "./DatabaseHealth.ts"

/** How long a loop waits after a failed round. */
export const RETRY_AFTER_MS = 1_000

/**
 * Runs `self` until it succeeds: each failure is reported to DatabaseHealth as a round of `what`, then waits
 * RETRY_AFTER_MS. A round that succeeds tells DatabaseHealth the database answered, so a round must reach the
 * database (a round that only sleeps would report an outage over).
 *
 * @category combinators
 */
export const untilDone =
  (what: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, never, R | DatabaseHealth> =>
    Effect.gen(function*() {
      const health = yield* DatabaseHealth
      const attempt: Effect.Effect<A, never, R> = self.pipe(
        health.observe(what),
        Effect.catchCause(() => Effect.andThen(Effect.sleep(RETRY_AFTER_MS), Effect.suspend(() => attempt)))
      )
      return yield* attempt
    })

/**
 * Repeats `self` forever, each round as in `untilDone`.
 *
 * @category combinators
 */
export const forever =
  (what: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<never, never, R | DatabaseHealth> =>
    self.pipe(untilDone(what), Effect.forever)
