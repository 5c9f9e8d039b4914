/**
 * The cron-triggered contact-analysis sync (decision 0401): at every tick of `SCHEDULER_BACKFILL_CRON` (effect `Cron`,
 * in `SCHEDULER_CRON_TZ`), each org's idle backfill job is queued again with `triggered_by: cron`. Every worker
 * sleeps until the same next tick and tries to claim it; the claim row (SchedulerCronRepo) lets exactly one of them
 * run it.
 *
 * Missed ticks are not caught up: a tick that passed while every worker was down is skipped, and the next one
 * runs as scheduled; a tick a worker woke for but could not run (the database was unreachable) is tried again every
 * second until it goes through (a sync covers every call recorded since the previous run anyway). A worker that wakes a
 * little late still claims the tick it slept for, so a slow worker cannot make a tick be skipped.
 */
import { SchedulerCronRepo } from "@svc/store/backfill/SchedulerCronRepo.ts"
import { Clock, Cron, Effect } from "effect"
import * as Retrying from "../runtime/Retrying.ts"
import type { SchedulerSettings } from "../runtime/SchedulerConfig.ts"
import * as SchedulerMetrics from "../runtime/SchedulerMetrics.ts"

/**
 * Runs the tick at `tickAt` if no other worker did; returns whether this worker ran it.
 *
 * @category constructors
 */
export const runTick = Effect.fn("BackfillCron.runTick")(function*(settings: SchedulerSettings, tickAt: number) {
  const repo = yield* SchedulerCronRepo
  const now = yield* Clock.currentTimeMillis
  const result = yield* repo.startBackfillSync(tickAt, settings.workerId, now)
  if (result.won) {
    yield* SchedulerMetrics.add(SchedulerMetrics.cronTicks, 1, { job: "backfill-sync" })
    yield* Effect.logInfo("cron backfill sync queued").pipe(
      Effect.annotateLogs({ tick: new Date(tickAt).toISOString(), jobs: result.queued })
    )
  }
  return result
})

/**
 * Sleeps until each tick of `cron` and runs it, calling `onQueued` when jobs were queued; until interrupted.
 *
 * @category constructors
 */
export const loop = (settings: SchedulerSettings, cron: Cron.Cron, onQueued: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const tickAt = Cron.next(cron, now).getTime()
    yield* Effect.sleep(Math.max(0, tickAt - now))
    // the tick itself is retried until it goes through (a database outage at 03:00 delays the sync, it does not
    // skip it); the claim row makes a retry of a tick that did commit harmless. The sleep stays outside the retried
    // round: a round's start time tells DatabaseHealth whether its failure is news
    const result = yield* runTick(settings, tickAt).pipe(Retrying.untilDone("cron tick"))
    if (result.queued > 0) yield* onQueued
  }).pipe(Effect.forever)
