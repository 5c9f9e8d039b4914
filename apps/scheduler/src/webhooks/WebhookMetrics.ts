/**
 * Webhook metrics (delivered, failed, retried, queue age; docs/operations.md), in the process's registry beside
 * the scheduler's (SchedulerMetrics): the same `/metrics` shows them.
 */
import { WebhooksRepo } from "@svc/store/webhooks/WebhooksRepo.ts"
import type { AttemptResult } from "@svc/store/webhooks/WebhooksRepo.ts"
import { Effect, Metric, Schedule } from "effect"

/** @category models */
export const deliveries = Metric.counter("svc_webhook_deliveries_total", {
  description: "Webhook events finished, by result: delivered (2xx), gone (410, stopped), failed (given up after 24 h)",
  incremental: true
})

/** @category models */
export const retries = Metric.counter("svc_webhook_retries_total", {
  description: "Webhook attempts that failed and were scheduled again (timeout, network error, non-2xx)",
  incremental: true
})

/** @category models */
export const attempts = Metric.counter("svc_webhook_attempts_total", {
  description: "Webhook POSTs made (first attempts and retries)",
  incremental: true
})

/** @category models */
export const queueDepth = Metric.gauge("svc_webhook_queue_depth", {
  description: "Webhook events not yet delivered, stopped or given up (all orgs)"
})

/** @category models */
export const queueAge = Metric.gauge("svc_webhook_queue_age_seconds", {
  description: "Age of the oldest webhook event not yet delivered (0 when none)"
})

const byResult = {
  delivered: Metric.withAttributes(deliveries, { result: "delivered" }),
  gone: Metric.withAttributes(deliveries, { result: "gone" }),
  failed: Metric.withAttributes(deliveries, { result: "failed" })
}

/** Counts one attempt by its result. */
export const count = (state: AttemptResult["state"], _attempt: number) =>
  Effect.andThen(
    Metric.update(attempts, 1),
    state === "pending" ? Metric.update(retries, 1) : Metric.update(byResult[state], 1)
  )

/** Every series at 0 from start-up (SchedulerMetrics.registerAll says why). */
export const registerAll: Effect.Effect<void> = Effect.gen(function*() {
  yield* Metric.update(retries, 0)
  yield* Metric.update(attempts, 0)
  for (const metric of Object.values(byResult)) yield* Metric.update(metric, 0)
  yield* Metric.update(queueDepth, 0)
  yield* Metric.update(queueAge, 0)
})

/** Refreshes the queue gauges every `everyMs`, until interrupted. */
export const sampleQueue = (everyMs: number) =>
  Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const stats = yield* repo.stats
    yield* Metric.update(queueDepth, stats.pending)
    yield* Metric.update(queueAge, stats.oldestAgeSeconds)
  }).pipe(
    // a failed sample (the database away: `stats` dies) is skipped, not the end of sampling
    Effect.catchCause(() => Effect.void),
    Effect.repeat(Schedule.spaced(everyMs))
  )
