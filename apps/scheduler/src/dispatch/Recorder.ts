/**
 * Recording the results of one worker's dials (decision 0401): finished tasks are written in bulk
 * (CallsRepo.recordFinished: task, call and contact in one statement, which also puts a task whose outcome its batch
 * retries back to `pending`), tasks whose dial ended in doubt are released to `unknown`; either frees their slots and
 * wakes the loop. Up to RECORDERS statements run at once, each on its own connection, while the loop claims more.
 */
import type { Finish } from "@svc/domain/dispatch/Outcome.ts"
import type { CallEnded } from "@svc/domain/ports/Dialer.ts"
import { CallsRepo, type FinishedTask } from "@svc/store/calls/CallsRepo.ts"
import { type ClaimedTask, DispatchRepo } from "@svc/store/dispatch/DispatchRepo.ts"
import { Cause, Clock, Effect, FiberSet, Latch, Semaphore } from "effect"
import { DatabaseHealth } from "../runtime/DatabaseHealth.ts"
import * as SchedulerMetrics from "../runtime/SchedulerMetrics.ts"
import type { InFlight } from "./InFlight.ts"

/** Most results written by one record statement. */
const RECORD_CHUNK = 1_000

/** Record statements in flight at once. */
const RECORDERS = 2

/** A task whose dial ended without a result: the dialer could not tell whether the call exists. */
export interface Unresolved {
  readonly _tag: "Unresolved"
  readonly taskId: string
}

/** @category models */
export type Result = FinishedTask | Unresolved

/** A task's finished result: its part, its finish (Outcome) and its call, if one was placed. */
export const finished = (task: ClaimedTask, finish: Finish, call: CallEnded | undefined): FinishedTask => ({
  taskId: task.taskId,
  orgId: task.orgId,
  batchCallId: task.batchCallId,
  fromNumber: task.request.from_number,
  toNumber: task.request.to_number,
  state: finish.state,
  reason: finish.reason,
  call
})

export const make = (owner: string, inFlight: InFlight, wake: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const repo = yield* DispatchRepo
    const calls = yield* CallsRepo
    const health = yield* DatabaseHealth

    let results: Array<Result> = []
    const hasResults = yield* Latch.make(false)
    const recording = yield* Semaphore.make(RECORDERS)
    // set by shutdown: the recorder stops taking permits, so that flush (which needs all of them) gets them. During
    // an outage the recorder took each permit back as soon as a failed record released it, and a shutdown with
    // results in memory waited for the database to return (a worker that did not stop on SIGTERM, seen in CI)
    let stopping = false
    const records = yield* FiberSet.make<void, never>()

    /** Writes one batch of results: tasks, calls, contacts; frees their slots. */
    const record = (batch: ReadonlyArray<Result>) =>
      Effect.gen(function*() {
        const done: Array<FinishedTask> = []
        const unresolved: Array<string> = []
        for (const result of batch) {
          if ("_tag" in result) unresolved.push(result.taskId)
          else done.push(result)
        }
        const now = yield* Clock.currentTimeMillis
        const recorded = yield* calls.recordFinished(done, now)
        yield* repo.releaseToUnknown(owner, unresolved, now)
        // the slots are free once those commit: the loop claims again while this fiber completes batches (a
        // statement of its own, which need not delay the next claim)
        yield* inFlight.untrack(batch.map((r) => r.taskId))
        yield* wake
        // results are recorded by now, so a failure here must not requeue them: a batch left in progress is
        // completed by the next pass that looks at it and finds nothing to claim (at most IDLE_RECHECK_MS later).
        // The failure is DatabaseHealth's to log: the database going away right after a record is an outage
        // like any other (the outage test caught this as a stack trace in the log)
        yield* repo.completeIfDone(recorded.batchCallIds).pipe(
          health.observe("completing batches"),
          Effect.catchCause(() => Effect.void)
        )
        yield* Effect.logDebug("recorded").pipe(
          Effect.annotateLogs({ tasks: batch.length, ms: (yield* Clock.currentTimeMillis) - now })
        )
        const byOutcome = new Map<string, number>()
        for (const task of done) {
          const outcome = task.call?.outcome ?? "rejected"
          byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1)
        }
        for (const [outcome, n] of byOutcome) yield* SchedulerMetrics.add(SchedulerMetrics.outcomes, n, { outcome })
      })

    /** Takes the next results to record, at most `RECORD_CHUNK`. */
    const takeResults = Effect.gen(function*() {
      const batch = results.length <= RECORD_CHUNK ? results : results.slice(0, RECORD_CHUNK)
      results = results.length <= RECORD_CHUNK ? [] : results.slice(RECORD_CHUNK)
      if (results.length === 0) yield* hasResults.close
      return batch
    })

    /**
     * Records a batch of results. What cannot be written goes back to the queue for the next attempt; the
     * heartbeat keeps those tasks' leases meanwhile.
     */
    const recordOrRequeue = (batch: ReadonlyArray<Result>) =>
      record(batch).pipe(
        Effect.onError(() =>
          Effect.gen(function*() {
            results = batch.concat(results)
            yield* hasResults.open
          })
        )
      )

    /** Records everything reported so far, once no recorder is busy (settle, shutdown). */
    const flush = Effect.gen(function*() {
      while (results.length > 0) yield* recordOrRequeue(yield* takeResults)
    }).pipe(recording.withPermits(RECORDERS))

    /** Queues a dial's result for the recorder. */
    const report = (result: Result) =>
      Effect.sync(() => {
        results.push(result)
        hasResults.openUnsafe()
      })

    /** The recorder fiber: runs until interrupted, taking results as they come. */
    const run = Effect.gen(function*() {
      yield* hasResults.await
      // the first result of a claim's dials wakes this fiber while the rest of them are still queued to run: let
      // them run first, so the claim's results go in one statement (taken at once, the first made a record
      // statement of one task, and a completion check, for every claim)
      yield* Effect.yieldNow
      if (stopping) return yield* Effect.never
      yield* recording.take(1)
      const batch = yield* takeResults
      if (batch.length === 0) return yield* recording.release(1)
      // a batch that cannot be written (the database is away) goes back to the queue and this recorder pauses a
      // second, holding its permit: the results wait in memory, their leases renewed while the database answers,
      // and are written once it does (if their leases expired meanwhile, the record still finishes each task
      // once: it finishes only tasks still in flight, and reconciliation may have recorded them first)
      yield* FiberSet.run(
        records,
        recordOrRequeue(batch).pipe(
          health.observe("recording finished calls"),
          Effect.catchCause(() => Effect.sleep(1_000)),
          Effect.ensuring(recording.release(1))
        )
      )
    }).pipe(
      // only a bug gets here (the record's failures are handled above): log it, and keep the recorder alive
      Effect.catchCause((cause) =>
        Effect.logError("recorder failed; restarting it in 1 s").pipe(
          Effect.annotateLogs({ cause: Cause.pretty(cause) }),
          Effect.andThen(Effect.sleep(1_000))
        )
      ),
      Effect.forever
    )

    /** Shutdown begins: the recorder takes no more permits, so that `flush` gets them all. */
    const stop = Effect.sync(() => {
      stopping = true
    })

    return { report, flush, run, stop }
  })

export type Recorder = Effect.Success<ReturnType<typeof make>>
