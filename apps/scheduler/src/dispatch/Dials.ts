/**
 * One fiber per claimed task's call, for the call's whole life (a real call lasts minutes). Each dial starts only
 * while its lease has time left (Lease.mayStartDial), carries its attempt's request, and reports its end to the
 * recorder: a call that ended, a dial the carrier refused, or a dial that ended in doubt (Outcome). An org's pre-dial
 * check (decision 0553) runs between the claim and the dial; only its allow starts the dial.
 */
import * as Lease from "@svc/domain/dispatch/Lease.ts"
import * as Outcome from "@svc/domain/dispatch/Outcome.ts"
import { Dialer, type DialerError } from "@svc/domain/ports/Dialer.ts"
import type { ClaimedTask } from "@svc/store/dispatch/DispatchRepo.ts"
import { Cause, Effect, FiberSet, Option } from "effect"
import type { Gate } from "../predial/PredialCheck.ts"
import * as SchedulerMetrics from "../runtime/SchedulerMetrics.ts"
import type { InFlight, InFlightTask } from "./InFlight.ts"
import { finished, type Recorder } from "./Recorder.ts"

/**
 * The pre-dial check of the worker's dials (decision 0553) and the loop's wake-up, for the slots a check frees.
 *
 * @category models
 */
export interface Predial {
  readonly gate: Gate
  readonly wake: Effect.Effect<void>
}

export const make = (inFlight: InFlight, recorder: Recorder, predial?: Predial) =>
  Effect.gen(function*() {
    const dialer = yield* Dialer
    const dials = yield* FiberSet.make<void, never>()

    /** What a dial that ended without a call reports: a rejection fails the task, anything else is unresolved. */
    const reportFailure = (task: ClaimedTask, cause: Cause.Cause<DialerError>) => {
      const error = Cause.findErrorOption(cause)
      const finish = Outcome.failureOf(Option.getOrUndefined(error))
      if (finish !== undefined) return recorder.report(finished(task, finish, undefined))
      if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
      // the adapter's own words for DialerUnavailable (it is the expected way for a dial to end in doubt, and
      // comes in bursts when the carrier is down); a stack only for a defect, which is a bug in the adapter
      return Effect.logWarning("dial outcome unknown; the task will be reconciled").pipe(
        Effect.annotateLogs(
          Option.isSome(error)
            ? { taskId: task.taskId, reason: error.value.message }
            : { taskId: task.taskId, cause: Cause.pretty(cause) }
        ),
        Effect.andThen(recorder.report({ _tag: "Unresolved", taskId: task.taskId }))
      )
    }

    // Written without a generator: this runs thousands of times a second, and a generator, a clock effect and a latch
    // effect per dial were a measurable part of the time in which the dials of a fresh claim hold up the next record
    // (docs/benchmarks.md).
    const dialOne = (task: ClaimedTask): Effect.Effect<void> =>
      Effect.clockWith((clock) => {
        const now = clock.currentTimeMillisUnsafe()
        const entry = inFlight.byTaskId.get(task.taskId)
        if (entry === undefined) return Effect.void
        // the claim is too old to act on (the worker stalled): the lease expires and a reconciler finds no call
        if (!Lease.mayStartDial(now, task.leaseExpiresAt)) return inFlight.untrack([task.taskId])
        // the org's pre-dial check (decision 0553), if it has one: no effect at all for an org without
        const check = predial?.gate(task, now)
        if (check === undefined) return place(task, entry, now)
        return Effect.flatMap(check, (allowed) =>
          allowed
            ? Effect.clockWith((after) => {
              // the check took time: the lease must still leave room for the dial
              const at = after.currentTimeMillisUnsafe()
              if (!Lease.mayStartDial(at, task.leaseExpiresAt)) return inFlight.untrack([task.taskId])
              return place(task, entry, at)
            })
            // not allowed: the check undid the attempt (or left it to its lease); its slot is free
            : Effect.andThen(inFlight.untrack([task.taskId]), predial!.wake))
      })

    /** Starts the dial of a tracked task (its call may exist from here on). */
    const place = (task: ClaimedTask, entry: InFlightTask, now: number): Effect.Effect<void> => {
      entry.started = true
      return SchedulerMetrics.observeLag(Math.max(0, now - task.dueAt) / 1000).pipe(
        Effect.andThen(dialer.dial(task.request)),
        Effect.matchCauseEffect({
          onSuccess: (call) => recorder.report(finished(task, Outcome.finishOf(call), call)),
          onFailure: (cause) => reportFailure(task, cause)
        })
      )
    }

    /** Holds `tasks` and starts their dials. */
    const start = (tasks: ReadonlyArray<ClaimedTask>) =>
      Effect.gen(function*() {
        if (tasks.length === 0) return
        yield* inFlight.track(tasks)
        yield* SchedulerMetrics.add(SchedulerMetrics.dials, tasks.length)
        // started when this fiber next waits (on the next statement), so the dials' work overlaps the database's
        for (const task of tasks) yield* FiberSet.run(dials, dialOne(task), { startImmediately: false })
      })

    return { dials, start }
  })

export type Dials = Effect.Success<ReturnType<typeof make>>
