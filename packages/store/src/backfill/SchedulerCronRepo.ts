/**
 * Cron ticks that run once across all workers (decision 0401: the cron sync starts "exactly once per tick across all
 * workers"). Every worker computes the same tick instants from the same cron expression; the first to insert
 * `(job, tick)` into `scheduler_cron_ticks` runs the tick, in the same statement as the tick's work, so a worker
 * that dies between the two cannot leave a tick claimed and not run.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The job name of the contact-analysis sync in `scheduler_cron_ticks`.
 *
 * @category models
 */
export const BACKFILL_SYNC_JOB = "backfill-sync"

/** Tick rows older than this are deleted when a tick runs (they only guard ticks that can still be contended). */
const TICK_RETENTION_MS = 30 * 24 * 60 * 60 * 1000

/** @category models */
export interface CronSyncResult {
  /** This worker won the tick (and ran it). */
  readonly won: boolean
  /** Orgs whose backfill job was queued with `triggered_by: cron`. */
  readonly queued: number
}

/**
 * Cron ticks in PostgreSQL.
 *
 * @category services
 */
export class SchedulerCronRepo extends Context.Service<SchedulerCronRepo, {
  /**
   * Claims the backfill sync's tick at `tickAt` and, if this worker won it, queues every idle backfill job again
   * with `triggered_by: cron` (its stored attributes and filter; the run covers the calls recorded since the
   * previous run). Active jobs are left alone (one job per org).
   */
  readonly startBackfillSync: (tickAt: number, worker: string, now: number) => Effect.Effect<CronSyncResult>
}>()("@svc/store/SchedulerCronRepo") {
  /** @category layers */
  static readonly layer: Layer.Layer<SchedulerCronRepo, never, SqlClient.SqlClient> = Layer.effect(
    SchedulerCronRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return SchedulerCronRepo.of({
        startBackfillSync: (tickAt, worker, now) =>
          sql<{ won: number; queued: number }>`
            WITH tick AS (
              INSERT INTO scheduler_cron_ticks (job, tick_timestamp, worker, claimed_timestamp)
              VALUES (${BACKFILL_SYNC_JOB}, ${tickAt}, ${worker}, ${now})
              ON CONFLICT (job, tick_timestamp) DO NOTHING
              RETURNING 1
            ), queued AS (
              UPDATE backfill_jobs SET status = 'queued', triggered_by = 'cron', start_timestamp = ${now},
                succeeded = 0, failed = 0, user_modified_timestamp = ${now}
              WHERE status = 'idle' AND EXISTS (SELECT 1 FROM tick)
              RETURNING 1
            ), purged AS (
              DELETE FROM scheduler_cron_ticks
              WHERE job = ${BACKFILL_SYNC_JOB} AND tick_timestamp < ${tickAt - TICK_RETENTION_MS}
                AND EXISTS (SELECT 1 FROM tick)
            )
            SELECT (SELECT count(*) FROM tick)::int4 AS won, (SELECT count(*) FROM queued)::int4 AS queued`.pipe(
            Effect.map((rows) => ({ won: (rows[0]?.won ?? 0) > 0, queued: rows[0]?.queued ?? 0 })),
            Effect.orDie,
            Effect.withSpan("SchedulerCronRepo.startBackfillSync")
          )
      })
    })
  )
}
