import { assert, describe, it } from "@effect/vitest"
import { waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import { Effect, Layer, Logger, Metric, Option } from "effect"
import { PrometheusMetrics } from "effect/observability"
import * as SimulatedDialer from "../../src/carriers/simulated/SimulatedDialer.ts"
import * as Scheduler from "../../src/runtime/Scheduler.ts"
import * as SchedulerConfig from "../../src/runtime/SchedulerConfig.ts"
import * as SchedulerMetrics from "../../src/runtime/SchedulerMetrics.ts"
import { batchRow, createBatch, dialerSettings, seedOrg, StoreLayer } from "../fixtures/Fixtures.ts"

describe("Scheduler", () => {
  it.live("exports every metric series from start-up, before anything happened", () =>
    Effect.gen(function*() {
      const settings = SchedulerConfig.defaults({ backfillCron: Option.none() })
      const text = yield* Effect.scoped(Effect.gen(function*() {
        yield* Layer.build(
          Scheduler.layerWith(settings).pipe(Layer.provide(SimulatedDialer.layerMemory(dialerSettings())))
        )
        return yield* PrometheusMetrics.format()
      }))
      for (
        const series of [
          "svc_scheduler_dials_total",
          "svc_scheduler_leases_reclaimed_total",
          "svc_scheduler_calls_in_flight",
          "svc_scheduler_call_outcomes_total{outcome=\"no_answer\"}",
          "svc_scheduler_tasks_skipped_total{reason=\"do_not_call\"}",
          "svc_scheduler_tasks_skipped_total{reason=\"suppressed\"}",
          "svc_scheduler_reconciled_total{result=\"not_placed\"}",
          "svc_scheduler_backfill_calls_total{result=\"failed\"}",
          "svc_scheduler_cron_ticks_total{job=\"backfill-sync\"}"
        ]
      ) assert.include(text, `${series} `)
    }).pipe(Effect.provide(StoreLayer)))

  it.live("runs batches to completion on its own loop, counts them in metrics, and logs start and stop", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const capture = Logger.layer([Logger.make(({ message }) => lines.push(String(message)))])
      const orgId = yield* seedOrg(10)
      const batch = yield* createBatch(orgId, { count: 40 })
      const settings = SchedulerConfig.defaults({ pollMs: 100, backfillCron: Option.none() })
      const before = yield* Metric.value(SchedulerMetrics.dials)
      yield* Effect.scoped(Effect.gen(function*() {
        yield* Layer.build(
          Scheduler.layerWith(settings).pipe(
            Layer.provide(SimulatedDialer.layerMemory(dialerSettings({ latencyMs: 20 }))),
            Layer.provide(capture)
          )
        )
        let status = ""
        yield* waitUntil(
          "the batch to complete",
          Effect.map(batchRow(batch), (row) => (status = row.status) === "completed"),
          { everyMs: 50, state: () => ({ status }) }
        )
      }))
      assert.strictEqual((yield* batchRow(batch)).status, "completed")
      assert.strictEqual(lines[0], "svc-scheduler started")
      assert.strictEqual(lines[lines.length - 1], "svc-scheduler stopped")
      const after = yield* Metric.value(SchedulerMetrics.dials)
      assert.strictEqual(after.count - before.count, 40)
      const text = yield* PrometheusMetrics.format()
      assert.include(text, "svc_scheduler_dials_total")
      assert.include(text, "svc_scheduler_dispatch_lag_seconds_bucket")
      assert.include(text, "svc_scheduler_call_outcomes_total{outcome=")
    }).pipe(Effect.provide(StoreLayer)))
})
