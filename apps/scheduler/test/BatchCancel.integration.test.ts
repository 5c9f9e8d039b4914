// The scheduler and a cancelled batch (issue 13, part 3; decision 0533): calls already claimed finish and are
// recorded, nothing else of the batch is ever dialled, and the batch stays cancelled.
import { assert, describe, it } from "@effect/vitest"
import { BatchProgressRepo } from "@svc/store/BatchProgressRepo.ts"
import { SchedulerSimulatedCarrier } from "@svc/store/SchedulerSimulatedCarrier.ts"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Dispatcher } from "../src/Dispatcher.ts"
import * as SchedulerConfig from "../src/SchedulerConfig.ts"
import * as SimulatedDialer from "../src/SimulatedDialer.ts"
import { batchRow, createBatch, dialerSettings, isolated, seedOrg, stateCounts } from "./fixtures/Fixtures.ts"

const scenario = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const dispatcher = yield* Dispatcher.make(SchedulerConfig.defaults())
    return yield* body.pipe(Effect.provideService(Dispatcher, dispatcher))
  }).pipe(
    Effect.provide(Layer.merge(SimulatedDialer.layerMemory(dialerSettings()), BatchProgressRepo.layer)),
    isolated
  )

const dialsOf = (batchCallId: string) =>
  Effect.gen(function*() {
    const carrier = yield* SchedulerSimulatedCarrier
    const attempts = yield* Effect.orDie(carrier.attempts)
    return attempts.filter((a) => a.request.batch_call_id === batchCallId)
  })

describe("a cancelled batch", () => {
  it.live("finishes the calls claimed before the cancel and dials nothing after it", () =>
    scenario(Effect.gen(function*() {
      const t0 = Date.UTC(2026, 4, 4, 15, 0)
      yield* TestClock.setTime(t0)
      const orgId = yield* seedOrg(2)
      const batch = yield* createBatch(orgId, { count: 6 })
      const dispatcher = yield* Dispatcher
      // two lines: the first pass claims two tasks and starts their calls
      assert.strictEqual((yield* dispatcher.tick).claimed, 2)
      const progress = yield* (yield* BatchProgressRepo).cancel(orgId, batch, t0 + 1)
      assert.strictEqual(progress.status, "cancelled")
      assert.strictEqual(progress.tasks.cancelled, 4)
      yield* dispatcher.settle
      yield* TestClock.setTime(t0 + 60 * 60_000)
      assert.strictEqual((yield* dispatcher.tick).claimed, 0)
      yield* dispatcher.settle
      assert.strictEqual((yield* dialsOf(batch)).length, 2)
      const counts = yield* stateCounts(batch)
      assert.strictEqual(counts["cancelled"], 4)
      assert.strictEqual((counts["completed"] ?? 0) + (counts["failed"] ?? 0), 2)
      // the calls in flight were recorded, and the batch did not turn completed when they ended
      assert.strictEqual((yield* batchRow(batch)).status, "cancelled")
      const after = yield* (yield* BatchProgressRepo).get(orgId, batch, t0 + 60 * 60_000)
      assert.strictEqual(after.calls_placed, 2)
      assert.strictEqual(after.calls_in_flight, 0)
      assert.strictEqual(after.cancelled_timestamp, t0 + 1)
    })))
})
