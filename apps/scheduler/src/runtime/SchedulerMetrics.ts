/**
 * The scheduler's Prometheus metrics (decision 0401, "Operations": dials, outcomes, lag from due to dialled, leases
 * reclaimed), as effect `Metric`s in the process's registry. Inside `npm start` the server's `GET /metrics` shows
 * them with the HTTP metrics (one process, one registry); a standalone `svc-scheduler` serves them itself on
 * `SCHEDULER_METRICS_PORT` when that is set (docs/decisions/0401-scheduler-row-leasing.md).
 */
import { NodeHttpServer } from "@effect/platform-node"
import { DialOutcome } from "@svc/domain/ports/Dialer.ts"
import { Cause, Effect, Layer, Metric } from "effect"
import { HttpRouter } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { createServer } from "node:http"

/** @category models */
export const dials = Metric.counter("svc_scheduler_dials_total", {
  description: "Calls handed to the dialer (one per claimed task)",
  incremental: true
})

/** @category models */
export const outcomes = Metric.counter("svc_scheduler_call_outcomes_total", {
  description: "Finished dials by outcome: answered, busy, no_answer, failed, rejected",
  incremental: true
})

/** @category models */
export const skipped = Metric.counter("svc_scheduler_tasks_skipped_total", {
  description: "Tasks never dialled, by reason (do_not_call, suppressed)",
  incremental: true
})

/** @category models */
export const dispatchLag = Metric.histogram("svc_scheduler_dispatch_lag_seconds", {
  description: "From when a task's batch became dispatchable (trigger time or window opening) to its dial",
  boundaries: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600]
})

/** @category models */
export const leasesReclaimed = Metric.counter("svc_scheduler_leases_reclaimed_total", {
  description:
    "Dialling tasks whose lease expired (their worker died or stalled); they are reconciled before any redial",
  incremental: true
})

/** @category models */
export const reconciled = Metric.counter("svc_scheduler_reconciled_total", {
  description: "Unknown tasks looked up at the dialer, by result: ended, ongoing, not_placed",
  incremental: true
})

/** @category models */
export const inFlight = Metric.gauge("svc_scheduler_calls_in_flight", {
  description: "Calls this worker is dialling now"
})

/** @category models */
export const backfillCalls = Metric.counter("svc_scheduler_backfill_calls_total", {
  description: "Calls processed by contact-analysis backfill runs, by result: succeeded, failed",
  incremental: true
})

/** @category models */
export const cronTicks = Metric.counter("svc_scheduler_cron_ticks_total", {
  description: "Cron ticks this worker ran (each tick runs on one worker), by job",
  incremental: true
})

/** @category models */
export const predialLatency = Metric.histogram("svc_scheduler_predial_seconds", {
  description: "Pre-dial checks sent to an org's receiver (decision 0553): from the request to its answer or timeout",
  boundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
})

/** @category models */
export const predialChecks = Metric.counter("svc_scheduler_predial_checks_total", {
  description:
    "Pre-dial checks by result: allowed (dialled), refused (task skipped), unavailable (task waits; fails closed)",
  incremental: true
})

/** Records one pre-dial check's latency, in seconds. */
export const observePredial = (seconds: number) => Metric.update(predialLatency, seconds)

/** Records one dial's lag, in seconds. */
export const observeLag = (seconds: number) => Metric.update(dispatchLag, seconds)

/** Sets this worker's calls in flight. */
export const setInFlight = (n: number) => Metric.update(inFlight, n)

// Metric.withAttributes builds a new metric each call; the dispatch path asks for the same few label sets
// thousands of times a second.
const labelled = new Map<string, Metric.Counter<number>>()
const withLabel = (metric: Metric.Counter<number>, name: string, value: string) => {
  const key = `${metric.id}\u0000${name}\u0000${value}`
  let found = labelled.get(key)
  if (found === undefined) {
    found = Metric.withAttributes(metric, { [name]: value })
    labelled.set(key, found)
  }
  return found
}

/** Adds `n` to a counter, under one label when given. */
export const add = (metric: Metric.Counter<number>, n: number, label?: { readonly [name: string]: string }) => {
  if (n === 0) return Effect.void
  if (label === undefined) return Metric.update(metric, n)
  const [name, value] = Object.entries(label)[0]!
  return Metric.update(withLabel(metric, name, value), n)
}

/**
 * Exports every series at 0 from start-up: a counter that appears only at its first event breaks `rate()` and
 * "absent" alerts, and an operator looking at a fresh worker should see what it will report.
 */
export const registerAll: Effect.Effect<void> = Effect.gen(function*() {
  for (const metric of [dials, leasesReclaimed]) yield* Metric.update(metric, 0)
  yield* Metric.update(inFlight, 0)
  const labelled: ReadonlyArray<readonly [Metric.Counter<number>, string, ReadonlyArray<string>]> = [
    // the dialer's outcomes, and "rejected" for dials the carrier refused (no call)
    [outcomes, "outcome", [...DialOutcome.literals, "rejected"]],
    [skipped, "reason", ["do_not_call", "suppressed"]],
    [reconciled, "result", ["ended", "ongoing", "not_placed"]],
    [predialChecks, "result", ["allowed", "refused", "unavailable"]],
    [backfillCalls, "result", ["succeeded", "failed"]],
    [cronTicks, "job", ["backfill-sync"]]
  ]
  for (const [metric, name, values] of labelled) {
    for (const value of values) yield* Metric.update(withLabel(metric, name, value), 0)
  }
})

/**
 * `GET /metrics` on `port` (all interfaces), closed with the layer's scope.
 *
 * @category layers
 */
export const layerServer = (port: number): Layer.Layer<never, Error> =>
  HttpRouter.serve(PrometheusMetrics.layerHttp({ path: "/metrics" }), { disableListenLog: true, disableLogger: true })
    .pipe(
      Layer.provide(NodeHttpServer.layer(createServer, { port })),
      Layer.catchCause((cause) =>
        Layer.effectDiscard(
          Effect.fail(new Error(`SCHEDULER_METRICS_PORT ${port}: ${Cause.pretty(cause).split("\n")[0]}`))
        )
      ),
      Layer.tap(() => Effect.logInfo(`svc-scheduler metrics on http://localhost:${port}/metrics`))
    )
