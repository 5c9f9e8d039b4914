/**
 * The scheduler worker. This is the process shape that the scheduler issue fills with batch-call
 * dispatch, backfill and cron jobs: it starts after the database is migrated, announces itself,
 * and on shutdown logs that it stopped, after its jobs (none yet) released what they hold.
 */
import { Effect, Layer } from "effect"

/** @category layers */
export const layer: Layer.Layer<never> = Layer.effectDiscard(
  Effect.acquireRelease(
    Effect.logInfo("svc-scheduler started (no jobs registered yet)"),
    () => Effect.logInfo("svc-scheduler stopped")
  )
)
