import { assert, describe, it } from "@effect/vitest"
import { retryOutcomes } from "@svc/domain/models/BatchRetry.ts"
import { attemptKey } from "@svc/domain/models/RetryPolicy.ts"
import { BatchRetry } from "@svc/store/batches/BatchRetry.ts"
import { SchedulerSimulatedCarrier } from "@svc/store/carriers/simulated/SchedulerSimulatedCarrier.ts"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as SimulatedDialer from "../../src/carriers/simulated/SimulatedDialer.ts"
import { Dispatcher } from "../../src/dispatch/Dispatcher.ts"
import * as SchedulerConfig from "../../src/runtime/SchedulerConfig.ts"
import { batchRow, createBatch, dialerSettings, isolated, seedOrg, taskStates } from "../fixtures/Fixtures.ts"

// retry-batch-call through the dispatcher (issue 31 item 2, decision 0551): a batch whose calls went unanswered
// completes; the retry re-opens it, and two workers racing over it dial each re-queued task exactly once more, with
// the second attempt's key and a new call id, and nothing after. London numbers: no legal hours or caps in play.

const T0 = Date.parse("2026-12-01T15:00:00Z")
const NUMBERS = ["+442071838760", "+442071838761"]
const NO_ANSWER = { answered: 0, busy: 0, no_answer: 1, failed: 0 }

const dials = Effect.gen(function*() {
  const carrier = yield* SchedulerSimulatedCarrier
  return (yield* Effect.orDie(carrier.attempts)).map((a) => ({
    key: a.request.idempotency_key,
    callId: a.request.call_id,
    at: a.attemptedAt
  }))
})

describe("Dispatcher after retry-batch-call", () => {
  it.live("dials each re-queued task once more, exactly once across two workers, with a new key and call id", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, { tasks: NUMBERS.map((n) => ({ to_number: n })) })
      const a = yield* Dispatcher.make(SchedulerConfig.defaults({ workerId: "worker-a" }))
      const b = yield* Dispatcher.make(SchedulerConfig.defaults({ workerId: "worker-b" }))
      yield* a.tick
      yield* a.settle
      // both unanswered: no retry policy, so the batch completed with its first calls
      const first = yield* dials
      assert.strictEqual(first.length, 2)
      assert.strictEqual((yield* batchRow(batch)).status, "completed")
      const tasks = yield* taskStates(batch)
      assert.deepStrictEqual(tasks.map((t) => t.state), ["completed", "completed"])

      const T1 = T0 + 3_600_000
      yield* TestClock.setTime(T1)
      const result = yield* (yield* BatchRetry).retry(orgId, batch, retryOutcomes, T1)
      assert.strictEqual(result.requeued, 2)
      assert.strictEqual((yield* batchRow(batch)).status, "in_progress")

      // two workers look at once
      const [ra, rb] = yield* Effect.all([a.tick, b.tick], { concurrency: "unbounded" })
      yield* Effect.all([a.settle, b.settle], { concurrency: "unbounded" })
      assert.strictEqual(ra.claimed + rb.claimed, 2)
      // and again, later: nothing more is dialled
      for (const at of [T1 + 60_000, T1 + 3_600_000, T1 + 86_400_000]) {
        yield* TestClock.setTime(at)
        yield* Effect.all([a.tick, b.tick], { concurrency: "unbounded" })
        yield* Effect.all([a.settle, b.settle], { concurrency: "unbounded" })
      }
      const made = yield* dials
      assert.strictEqual(made.length, 4)
      const retried = made.slice(2)
      const ids = tasks.map((t) => t.task_id)
      assert.sameMembers(retried.map((d) => d.key), ids.map((id) => attemptKey(id, 2)))
      assert.deepStrictEqual(retried.map((d) => d.at), [T1, T1])
      // every call its own id
      assert.strictEqual(new Set(made.map((d) => d.callId)).size, 4)
      assert.deepStrictEqual((yield* taskStates(batch)).map((t) => t.state), ["completed", "completed"])
      assert.strictEqual((yield* batchRow(batch)).status, "completed")
    }).pipe(
      Effect.provide(BatchRetry.layer),
      Effect.provide(SimulatedDialer.layerMemory(dialerSettings({ outcomes: NO_ANSWER }))),
      isolated
    ))
})
