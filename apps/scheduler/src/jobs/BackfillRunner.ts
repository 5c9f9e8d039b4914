/**
 * The contact-analysis backfill job runner: takes the next queued job (or one whose worker died), runs it chunk by
 * chunk (BackfillRunnerRepo: one transaction per chunk, counters visible to the status endpoint as it goes), and
 * idles when none is waiting. On shutdown it lets go of the job it holds, for another worker to resume at once.
 */
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { BackfillRunnerRepo, type RunningBackfill } from "@svc/store/backfill/BackfillRunnerRepo.ts"
import { Clock, Context, Effect, Layer, Option, Queue } from "effect"
import { DatabaseHealth } from "../runtime/DatabaseHealth.ts"
import type { SchedulerSettings } from "../runtime/SchedulerConfig.ts"
import * as SchedulerMetrics from "../runtime/SchedulerMetrics.ts"

/** @category models */
export interface RunReport {
  readonly orgId: OrgId
  readonly succeeded: number
  readonly failed: number
  /** `false` when the worker lost the job to another (its lease had expired). */
  readonly finished: boolean
}

/**
 * @category services
 */
export class BackfillRunner extends Context.Service<BackfillRunner, {
  /** Runs the next waiting job to its end, if there is one. */
  readonly runNext: Effect.Effect<Option.Option<RunReport>>
  /** Asks the loop to look for a job now (a cron tick queued some). */
  readonly wake: Effect.Effect<void>
  /** Takes jobs as they come, until interrupted. */
  readonly run: Effect.Effect<never>
}>()("@svc/scheduler/jobs/BackfillRunner") {
  /** @category constructors */
  static readonly make = (settings: SchedulerSettings) =>
    Effect.gen(function*() {
      const repo = yield* BackfillRunnerRepo
      const health = yield* DatabaseHealth
      const owner = settings.workerId
      const wakeups = yield* Queue.sliding<void>(1)
      let current: RunningBackfill | undefined

      const runJob = (job: RunningBackfill) =>
        Effect.gen(function*() {
          let succeeded = 0
          let failed = 0
          for (;;) {
            const now = yield* Clock.currentTimeMillis
            const chunk = yield* repo.processChunk(owner, job, {
              now,
              leaseMs: settings.backfillLeaseMs,
              chunk: settings.backfillChunk
            })
            succeeded += chunk.succeeded
            failed += chunk.failed
            yield* SchedulerMetrics.add(SchedulerMetrics.backfillCalls, chunk.succeeded, { result: "succeeded" })
            yield* SchedulerMetrics.add(SchedulerMetrics.backfillCalls, chunk.failed, { result: "failed" })
            if (chunk.lost || chunk.done) {
              return { orgId: job.orgId, succeeded, failed, finished: !chunk.lost }
            }
          }
        })

      const runNext = Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const job = yield* repo.claimNext(owner, now, settings.backfillLeaseMs)
        if (Option.isNone(job)) return Option.none<RunReport>()
        current = job.value
        const report = yield* runJob(job.value).pipe(Effect.ensuring(Effect.sync(() => (current = undefined))))
        yield* Effect.logInfo("backfill run ended").pipe(Effect.annotateLogs({ ...report }))
        return Option.some(report)
      }).pipe(Effect.withSpan("BackfillRunner.runNext"))

      // a failure is DatabaseHealth's to log (an outage once, anything else with its cause); the loop goes on
      const loop = runNext.pipe(
        health.observe("backfill run"),
        Effect.catchCause(() => Effect.succeed(Option.none<RunReport>())),
        Effect.flatMap((report) =>
          Option.isSome(report)
            ? Effect.void
            : Effect.raceFirst(Effect.sleep(settings.pollMs), Queue.take(wakeups))
        ),
        Effect.forever
      )

      const run = loop.pipe(
        Effect.onInterrupt(() =>
          Effect.gen(function*() {
            if (current === undefined) return
            const now = yield* Clock.currentTimeMillis
            // a failed statement is a defect, which Effect.ignore lets through; unreleased, the job's lease runs out
            yield* repo.release(owner, current.orgId, now).pipe(Effect.catchCause(() => Effect.void))
            yield* Effect.logInfo("backfill job released").pipe(Effect.annotateLogs({ orgId: current.orgId }))
          })
        )
      )

      return BackfillRunner.of({ runNext, wake: Queue.offer(wakeups, undefined).pipe(Effect.asVoid), run })
    })

  /** The runner without its loop (tests call `runNext`). @category layers */
  static readonly layerNoDeps = (settings: SchedulerSettings) =>
    Layer.effect(BackfillRunner, BackfillRunner.make(settings))

  /** The runner with its loop running for the layer's lifetime. @category layers */
  static readonly layer = (settings: SchedulerSettings) =>
    Layer.effectContext(
      Effect.gen(function*() {
        const runner = yield* BackfillRunner.make(settings)
        yield* Effect.forkScoped(runner.run)
        return Context.make(BackfillRunner, runner)
      })
    )
}
