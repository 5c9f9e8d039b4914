/**
 * The tasks one worker holds: claimed and not yet recorded (or released). The dials mark theirs started, the
 * recorder forgets what it wrote, the heartbeat renews their leases and the shutdown releases the rest.
 */
import type { ClaimedTask } from "@svc/store/dispatch/DispatchRepo.ts"
import { Effect, Latch } from "effect"
import * as SchedulerMetrics from "../runtime/SchedulerMetrics.ts"

/** A task this worker holds; `started` once its dial began (its call may exist from then on). */
export interface InFlightTask {
  readonly task: ClaimedTask
  started: boolean
}

export const make = Effect.gen(function*() {
  const byTaskId = new Map<string, InFlightTask>()
  // open while no task is tracked (settle waits for it)
  const idle = yield* Latch.make(true)

  /** Takes `tasks` into the worker's hands (none started yet). */
  const track = (tasks: ReadonlyArray<ClaimedTask>) =>
    Effect.gen(function*() {
      yield* idle.close
      for (const task of tasks) byTaskId.set(task.taskId, { task, started: false })
      yield* SchedulerMetrics.setInFlight(byTaskId.size)
    })

  /** Lets go of `taskIds` (recorded, released, or too late to dial). */
  const untrack = (taskIds: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      for (const id of taskIds) byTaskId.delete(id)
      yield* SchedulerMetrics.setInFlight(byTaskId.size)
      if (byTaskId.size === 0) yield* idle.open
    })

  return { byTaskId, idle, track, untrack }
})

export type InFlight = Effect.Success<typeof make>
