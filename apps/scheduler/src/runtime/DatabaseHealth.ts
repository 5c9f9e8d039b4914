/**
 * The worker's view of whether its database is reachable, shared by all its loops (dispatch passes, recording,
 * lease renewal, the batch-created listener, the contact feed, backfill runs, the cron), so that an outage is told
 * once, not by every loop on every attempt (decision 0402).
 *
 * Each loop runs its rounds through `observe`. A round that fails because the database cannot be reached (see
 * `isUnavailable`) moves the worker to "unavailable": the first such failure logs `database unavailable` (one line,
 * the reason, no stack), later ones only count, and while it lasts a summary (`database still unavailable`, with
 * the seconds and failed rounds) is logged at most every SUMMARY_EVERY_MS. The outage ends when rounds succeed again
 * and keep succeeding: the first success is only a candidate, confirmed by a success at least CONFIRM_MS after it with
 * no outage failure in between, and then `database available again after N s` is logged (a warning, as the
 * server's: an operator reading warnings sees both ends), N counted to the first success. A PostgreSQL whose
 * postmaster was killed keeps answering for a few milliseconds on the backends that have not noticed yet: taking
 * that answer at its word logged one outage as two (seen in the outage test under load). Before this every loop
 * logged its own ~2.5 KB stack trace every second for as long as the database was away.
 *
 * A failure of a round that started before the database was last seen available says nothing new (it was sent to a
 * server that was still coming up, or on a connection from before the outage) and does not start another outage.
 * Any other failure (a bug, a constraint violation) is logged with its cause, as before.
 */
import * as DatabaseUnavailable from "@svc/store/db/DatabaseUnavailable.ts"
import { Cause, Clock, Context, Effect, Layer } from "effect"

/** While the database is unavailable, a summary is logged at most this often. */
export const SUMMARY_EVERY_MS = 30_000

/**
 * How long after the first success of an outage another success confirms that it is over (the loops' rounds come
 * about once a second, so an outage is told over within a round or two of its end).
 */
export const CONFIRM_MS = 1_000

/**
 * Whether a failed round failed because the database cannot be reached (a failure or defect of the cause is an
 * outage by the one classification the server shares, `@svc/store/DatabaseUnavailable.ts`), as opposed to a bug or
 * a refused statement.
 *
 * @category predicates
 */
export const isUnavailable = (cause: Cause.Cause<unknown>): boolean =>
  cause.reasons.some((reason) =>
    Cause.isFailReason(reason)
      ? DatabaseUnavailable.isUnavailable(reason.error)
      : Cause.isDieReason(reason) && DatabaseUnavailable.isUnavailable(reason.defect)
  )

/** The first sentence of what went wrong, for the one line an outage logs. */
const reasonOf = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  const parts: Array<string> = []
  let current: unknown = error
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const message = "message" in current && typeof current.message === "string" ? current.message : ""
    if (message !== "" && !parts.some((p) => p.includes(message))) parts.push(message)
    current = "cause" in current ? current.cause : undefined
  }
  return parts.length > 0 ? parts.join(": ") : String(error)
}

/** @category models */
export interface Status {
  readonly available: boolean
  /** Rounds that failed since the database was last seen available. */
  readonly failedRounds: number
  /** When the current outage was noticed, if there is one. */
  readonly since: number | undefined
  /** During an outage, the first success since its last failure, awaiting confirmation (CONFIRM_MS). */
  readonly backAt: number | undefined
}

/**
 * @category services
 */
export class DatabaseHealth extends Context.Service<DatabaseHealth, {
  /**
   * Runs one round of a loop: its success marks the database available, its failure is reported (and the failure
   * goes on to the caller, which decides when to try again). Interruption is not a failure.
   */
  readonly observe: (what: string) => <A, E, R>(round: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Reports a failure of a round of `what` that started at `startedAt` (for loops that cannot use `observe`). */
  readonly failed: (what: string, startedAt: number, cause: Cause.Cause<unknown>) => Effect.Effect<void>
  /** A round that started at `startedAt` went through. */
  readonly succeeded: (startedAt: number) => Effect.Effect<void>
  readonly status: Effect.Effect<Status>
}>()("@svc/scheduler/DatabaseHealth") {
  /** @category constructors */
  static readonly make = Effect.sync(() => {
    let since: number | undefined
    let backAt: number | undefined
    let failedRounds = 0
    let summarizedAt = 0
    // when the database was last seen available: failures of rounds started earlier are old news
    let availableAt = Number.NEGATIVE_INFINITY

    const failed = (what: string, startedAt: number, cause: Cause.Cause<unknown>) =>
      Effect.gen(function*() {
        if (Cause.hasInterruptsOnly(cause)) return
        if (!isUnavailable(cause)) {
          return yield* Effect.logError(`${what} failed; trying again`).pipe(
            Effect.annotateLogs({ cause: Cause.pretty(cause) })
          )
        }
        const now = yield* Clock.currentTimeMillis
        if (since === undefined) {
          if (startedAt < availableAt) return
          since = now
          summarizedAt = now
          failedRounds = 1
          return yield* Effect.logError("database unavailable").pipe(
            Effect.annotateLogs({ during: what, reason: reasonOf(cause) })
          )
        }
        failedRounds++
        // a round that started after the candidate success and could not reach the database: not over after all
        if (backAt !== undefined && startedAt >= backAt) backAt = undefined
        if (now - summarizedAt >= SUMMARY_EVERY_MS) {
          summarizedAt = now
          yield* Effect.logWarning("database still unavailable").pipe(
            Effect.annotateLogs({ seconds: Math.round((now - since) / 1000), failedRounds, reason: reasonOf(cause) })
          )
        }
      })

    const succeeded = (startedAt: number) =>
      Effect.suspend(() => {
        if (since === undefined) return Effect.void
        return Effect.flatMap(Clock.currentTimeMillis, (now) => {
          if (since === undefined || startedAt < since) return Effect.void
          if (backAt === undefined || startedAt < backAt) {
            backAt ??= now
            return Effect.void
          }
          if (now - backAt < CONFIRM_MS) return Effect.void
          const seconds = Math.round((backAt - since) / 100) / 10
          const rounds = failedRounds
          since = undefined
          failedRounds = 0
          // rounds that started before the first success failed on the outage: old news from here on
          availableAt = backAt
          backAt = undefined
          return Effect.logWarning(`database available again after ${seconds} s`).pipe(
            Effect.annotateLogs({ seconds, failedRounds: rounds })
          )
        })
      })

    const observe = (what: string) => <A, E, R>(round: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.flatMap(Clock.currentTimeMillis, (startedAt) =>
        round.pipe(
          Effect.tap(() => succeeded(startedAt)),
          Effect.tapCause((cause) => failed(what, startedAt, cause))
        ))

    return DatabaseHealth.of({
      observe,
      failed,
      succeeded,
      status: Effect.sync(() => ({ available: since === undefined, failedRounds, since, backAt }))
    })
  })

  /** @category layers */
  static readonly layer: Layer.Layer<DatabaseHealth> = Layer.effect(DatabaseHealth, DatabaseHealth.make)
}
