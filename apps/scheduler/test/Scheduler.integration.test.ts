import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, Metric, Option } from "effect"
import { PrometheusMetrics } from "effect/observability"
import * as Scheduler from "../src/Scheduler.ts"
import * as SchedulerConfig from "../src/SchedulerConfig.ts"
import * as SchedulerMetrics from "../src/SchedulerMetrics.ts"
import * as SimulatedDialer from "../src/SimulatedDialer.ts"
import { batchRow, createBatch, dialerSettings, seedOrg, StoreLayer } from "./fixtures/Fixtures.ts"

describe("Scheduler", () => {
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
        for (let i = 0; i < 200 && (yield* batchRow(batch)).status !== "completed"; i++) yield* Effect.sleep(50)
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
