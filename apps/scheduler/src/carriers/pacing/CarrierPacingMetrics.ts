/**
 * Carrier pacing metrics (decision 0610: pacing waits are counted), in the process's registry beside the
 * scheduler's (SchedulerMetrics): the same `/metrics` shows them.
 */
import { Effect, Metric } from "effect"

/** @category models */
export const acquires = Metric.counter("svc_scheduler_carrier_slots_total", {
  description: "Call-creation slots taken from the carrier pacer (one per call creation request)",
  incremental: true
})

/** @category models */
export const waits = Metric.counter("svc_scheduler_carrier_pacing_waits_total", {
  description: "Slots that were not free at once: the call creation waited for the account's calls-per-second pace",
  incremental: true
})

/** @category models */
export const waitSeconds = Metric.counter("svc_scheduler_carrier_pacing_wait_seconds_total", {
  description: "Time call creations spent waiting for a slot (divide by the waits for the mean wait)",
  incremental: true
})

/** @category models */
export const backoffs = Metric.counter("svc_scheduler_carrier_backoffs_total", {
  description: "Backoffs after a carrier 429 or 5xx: every worker held off call creation on the account",
  incremental: true
})

/** @category models */
export const unavailable = Metric.counter("svc_scheduler_carrier_pacing_unavailable_total", {
  description: "Slots that could not be taken because the shared pacing state (PostgreSQL or Redis) did not answer",
  incremental: true
})

/** @category models */
export const late = Metric.counter("svc_scheduler_carrier_pacing_late_slots_total", {
  description: "Slots given up because the call creation would have started later than SVC_CARRIER_START_TOLERANCE_MS",
  incremental: true
})

/** One slot taken after waiting `waitedMs` (0: at once). */
export const slot = (waitedMs: number) =>
  waitedMs > 0
    ? Effect.andThen(
      Metric.update(acquires, 1),
      Effect.andThen(Metric.update(waits, 1), Metric.update(waitSeconds, waitedMs / 1_000))
    )
    : Metric.update(acquires, 1)

/** Every series at 0 from start-up (SchedulerMetrics.registerAll says why). */
export const registerAll: Effect.Effect<void> = Effect.forEach(
  [acquires, waits, waitSeconds, backoffs, unavailable, late],
  (metric) => Metric.update(metric, 0),
  { discard: true }
)
