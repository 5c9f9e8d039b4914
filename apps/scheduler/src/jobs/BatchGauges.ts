/**
 * Batches by status, as gauges (docs/operations.md: paused batches are watched beside running ones, decision 0549): `svc_batch_calls{status}` for
 * `scheduled`, `in_progress` and `paused`, all orgs, sampled every `everyMs`. Each worker samples the same totals (a
 * dashboard takes any one, or the max); three index-only counts a sample (BatchProgressRepo.openCounts).
 */
import { BatchProgressRepo } from "@svc/store/batches/BatchProgressRepo.ts"
import { Effect, Metric, Schedule } from "effect"

/** @category models */
export const batches = Metric.gauge("svc_batch_calls", {
  description: "Batch calls of all orgs by status: scheduled, in_progress, paused (pause-batch-call)"
})

const byStatus = {
  scheduled: Metric.withAttributes(batches, { status: "scheduled" }),
  in_progress: Metric.withAttributes(batches, { status: "in_progress" }),
  paused: Metric.withAttributes(batches, { status: "paused" })
}

/** Every series at 0 from start-up (SchedulerMetrics.registerAll says why). */
export const registerAll: Effect.Effect<void> = Effect.forEach(
  Object.values(byStatus),
  (gauge) => Metric.update(gauge, 0),
  { discard: true }
)

/** One sample of the gauges. */
export const sample = Effect.gen(function*() {
  const counts = yield* (yield* BatchProgressRepo).openCounts
  for (const status of ["scheduled", "in_progress", "paused"] as const) {
    yield* Metric.update(byStatus[status], counts[status])
  }
})

/** Samples every `everyMs` until interrupted; a failed sample (the database away) is skipped, not the end. */
export const loop = (everyMs: number) =>
  sample.pipe(Effect.catchCause(() => Effect.void), Effect.repeat(Schedule.spaced(everyMs)))
