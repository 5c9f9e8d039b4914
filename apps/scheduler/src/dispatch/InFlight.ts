/**
 * The tasks one worker holds: claimed and not yet recorded (or released). The dials mark theirs started, the
 * recorder forgets what it wrote, the heartbeat renews their leases and the shutdown releases the rest.
 */
import type { ClaimedTask } from "@svc/store/dispatch/DispatchRepo.ts"
import { Effect, Latch } from "effect"
import * as SchedulerMetrics from "../runtime/SchedulerMetrics.ts"

/** A task this worker holds; `started` once its dial began (its call may exist from then on). */
export interface HeldTask {
  readonly task: ClaimedTask
  started: boolean
}

export const make = Effect.gen(function*() {
  const held = new Map<string, HeldTask>()
  // open while nothing is held (settle waits for it)
  const idle = yield* Latch.make(true)

  /** Takes `tasks` into the worker's hands (none started yet). */
  const hold = (tasks: ReadonlyArray<ClaimedTask>) =>
    Effect.gen(function*() {
      yield* idle.close
      for (const task of tasks) held.set(task.taskId, { task, started: false })
      yield* SchedulerMetrics.setInFlight(held.size)
    })

  /** Lets go of `taskIds` (recorded, released, or too late to dial). */
  const forget = (taskIds: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      for (const id of taskIds) held.delete(id)
      yield* SchedulerMetrics.setInFlight(held.size)
      if (held.size === 0) yield* idle.open
    })

  return { held, idle, hold, forget }
})

export type InFlight = Effect.Success<typeof make>
