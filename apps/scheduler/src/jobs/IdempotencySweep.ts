/**
 * The idempotency sweep: create-batch-call's idempotency records (an `Idempotency-Key` is remembered 24 h, a keyless
 * retry 10 minutes: docs/api.md, decision 0302) are ignored by `create` once expired, but only this loop deletes
 * them. Before it, `BatchCallsRepo.purgeExpired` was never scheduled, so both tables grew by one row per request
 * for as long as the product ran.
 *
 * Every worker runs it; the deletes are idempotent, so two workers sweeping at once only split the rows. A sweep
 * every `SWEEP_EVERY_MS` keeps each table at most one period past its records' lifetime: a steady stream of R
 * requests a minute holds about R * (24 h + 10 min) keys and R * 20 minutes of keyless retries.
 */
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import { Effect } from "effect"
import { DatabaseHealth } from "../runtime/DatabaseHealth.ts"

/** The pause between sweeps: the keyless retry window (10 minutes), the shortest lifetime swept. */
export const SWEEP_EVERY_MS = 600_000

/**
 * Sweeps, then waits `everyMs`, for the worker's lifetime. A sweep that fails (the database away) is reported
 * through `DatabaseHealth` (one line per outage, not per loop) and the next one tries again.
 *
 * @category constructors
 */
export const loop = (everyMs: number = SWEEP_EVERY_MS) =>
  Effect.gen(function*() {
    const repo = yield* BatchCallsRepo
    const health = yield* DatabaseHealth
    for (;;) {
      yield* repo.purgeExpired.pipe(
        health.observe("sweeping expired idempotency records"),
        Effect.tap((deleted) =>
          deleted > 0
            ? Effect.logDebug("swept expired idempotency records").pipe(Effect.annotateLogs({ deleted }))
            : Effect.void
        ),
        Effect.catchCause(() => Effect.void)
      )
      yield* Effect.sleep(everyMs)
    }
  })
