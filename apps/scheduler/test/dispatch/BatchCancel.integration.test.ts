// The scheduler and a cancelled batch (issue 13, part 3; decision 0533): calls already claimed finish and are
// recorded, nothing else of the batch is ever dialled, and the batch stays cancelled.
import { assert, describe, it } from "@effect/vitest"
import { BatchProgressRepo } from "@svc/store/batches/BatchProgressRepo.ts"
import { CallsRepo } from "@svc/store/calls/CallsRepo.ts"
import { SchedulerSimulatedCarrier } from "@svc/store/carriers/simulated/SchedulerSimulatedCarrier.ts"
import { DispatchRepo } from "@svc/store/dispatch/DispatchRepo.ts"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as SimulatedDialer from "../../src/carriers/simulated/SimulatedDialer.ts"
import { Dispatcher } from "../../src/dispatch/Dispatcher.ts"
import * as SchedulerConfig from "../../src/runtime/SchedulerConfig.ts"
import { batchRow, createBatch, dialerSettings, isolated, seedOrg, stateCounts } from "../fixtures/Fixtures.ts"

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

/** How many statements of this (the test's own) database wait for a row lock now. */
const rowLockWaiters = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ n: number }>`
    SELECT count(*)::int4 AS n FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')`
  return row!.n
})

const awaitRowLockWaiters = (n: number) =>
  Effect.gen(function*() {
    while ((yield* rowLockWaiters) < n) yield* Effect.yieldNow
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

  // A call whose outcome the batch retries puts its task back to pending in the statement that records it (a trigger
  // turns that into cancelled when the batch already is). A cancel that committed after that statement's trigger
  // looked and before the statement committed used to leave the task pending in a cancelled batch: counted as pending
  // forever, though never dialled. Here the record is held mid-statement (another transaction locks the call's row,
  // which the record updates after the task's) while the cancel runs, then let go.
  it.live("a cancel racing the record of a call the batch retries leaves the task cancelled, not pending", () =>
    scenario(Effect.gen(function*() {
      const t0 = Date.UTC(2026, 4, 4, 15, 0)
      yield* TestClock.setTime(t0)
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg(2)
      const batch = yield* createBatch(orgId, {
        tasks: [{ to_number: "+442071838750" }],
        retry_policy: { max_retries: 2, retry_on: ["no_answer"], min_spacing_ms: 600_000 }
      })
      // the task's first call is in flight, claimed as a worker claims it (its call row registered)
      const repo = yield* DispatchRepo
      const due = (yield* repo.findDue(t0, 100)).due.filter((b) => b.batchCallId === batch)
      const claim = yield* repo.claim(orgId, due, { owner: "w", now: t0, leaseMs: 30_000, maxPerBatch: 10 })
      assert.strictEqual(claim.claimed.length, 1)
      const [task] = yield* sql<{ task_id: string; call_id: string }>`
        SELECT task_id::text AS task_id, call_id FROM batch_call_tasks WHERE batch_call_id = ${batch}`
      const { call_id: callId, task_id: taskId } = task!

      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT 1 FROM calls WHERE org_id = ${orgId} AND call_id = ${callId} FOR UPDATE`
        yield* Deferred.succeed(locked, undefined)
        yield* Deferred.await(release)
      })))
      yield* Deferred.await(locked)
      const record = yield* Effect.forkChild((yield* CallsRepo).recordFinished([{
        taskId,
        orgId,
        batchCallId: batch,
        fromNumber: "+14155550100",
        toNumber: "+442071838750",
        state: "completed",
        reason: "no_answer",
        call: {
          _tag: "CallEnded",
          idempotency_key: taskId,
          call_id: callId,
          outcome: "no_answer",
          start_timestamp: t0,
          end_timestamp: t0 + 20_000,
          duration_ms: 20_000,
          disconnection_reason: "dial_no_answer",
          analysis: {}
        }
      }], t0 + 20_000))
      // the record has written the task (pending, for the retry) and waits for the call's row
      yield* awaitRowLockWaiters(1)
      const cancel = yield* Effect.forkChild((yield* BatchProgressRepo).cancel(orgId, batch, t0 + 21_000))
      // the cancel either finished already or waits for the record (a second waiter): let the record go on
      yield* Effect.raceFirst(Effect.asVoid(Fiber.await(cancel)), awaitRowLockWaiters(2))
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      assert.strictEqual((yield* Fiber.join(record)).finished, 1)
      const progress = yield* Fiber.join(cancel)

      const [row] = yield* sql<{ state: string; state_reason: string; retry_attempt: number }>`
        SELECT state, state_reason, retry_attempt FROM batch_call_tasks WHERE task_id = ${taskId}::int8`
      // the record went first and scheduled the retry (attempt 2); the cancel, which waited for it, cancelled that
      assert.deepStrictEqual(row, { state: "cancelled", state_reason: "batch_cancelled", retry_attempt: 2 })
      assert.strictEqual(progress.status, "cancelled")
      assert.strictEqual(progress.tasks.pending, 0)
      assert.strictEqual(progress.tasks.cancelled, 1)
      // the call that ended is recorded once, as not connected; nothing more is ever dialled
      const calls = yield* sql<{ call_status: string }>`SELECT call_status FROM calls WHERE batch_call_id = ${batch}`
      assert.deepStrictEqual(calls.map((c) => c.call_status), ["not_connected"])
      const dispatcher = yield* Dispatcher
      yield* TestClock.setTime(t0 + 2 * 60 * 60_000)
      assert.strictEqual((yield* dispatcher.tick).claimed, 0)
      yield* dispatcher.settle
      assert.strictEqual((yield* dialsOf(batch)).length, 0)
    })))
})
