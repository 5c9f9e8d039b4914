// The exactly-once failure paths (issue 16, item 10; docs/dialer.md rules 3 and 4) with a scripted carrier behind
// the real Dialer port and the real database: a dial that cannot say whether it placed a call leaves its task
// `unknown`; nothing dials that task again until `lookup` answers `None`, however often the lookup fails or hangs;
// a lookup that finds the call records it without a redial.
import { assert, describe, it } from "@effect/vitest"
import { makeSleepWatch, waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import { Deferred, Effect, Fiber, Option } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { Dispatcher } from "../../src/dispatch/Dispatcher.ts"
import * as Reconciler from "../../src/dispatch/Reconciler.ts"
import * as SchedulerConfig from "../../src/runtime/SchedulerConfig.ts"
import { batchRow, createBatch, isolated, seedOrg, taskStates } from "../fixtures/Fixtures.ts"
import * as ScriptedDialer from "../fixtures/ScriptedDialer.ts"

const T0 = Date.UTC(2026, 4, 4, 15, 0)
const RECHECK_MS = 5_000

/** A dispatcher on a scripted carrier, on its own database and TestClock (at T0). */
const scenario = <A, E, R>(body: (carrier: ScriptedDialer.ScriptedDialer) => Effect.Effect<A, E, R>) => {
  const carrier = ScriptedDialer.make()
  return Effect.gen(function*() {
    yield* TestClock.setTime(T0)
    const dispatcher = yield* Dispatcher.make(SchedulerConfig.defaults({ reconcileRecheckMs: RECHECK_MS }))
    return yield* body(carrier).pipe(Effect.provideService(Dispatcher, dispatcher))
  }).pipe(Effect.provide(carrier.layer), isolated)
}

const tick = Effect.gen(function*() {
  return yield* (yield* Dispatcher).tick
})
const settle = Effect.gen(function*() {
  yield* (yield* Dispatcher).settle
})

/** Task states, in task order. */
const statesOf = (batch: string) => Effect.map(taskStates(batch), (rows) => rows.map((r) => r.state))

/** Task ids, in task order. */
const idsOf = (batch: string) => Effect.map(taskStates(batch), (rows) => rows.map((r) => r.task_id))

/** Call rows recorded for a batch: task id -> call id. */
const callsOf = (batch: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // finished calls only (a call is registered at the claim, migration 0012); each keeps the id svc gave it
    return yield* sql<{ task_id: string; svc_call_id: boolean }>`
      SELECT task_id::text AS task_id, call_id = svc_call_id(task_id) AS svc_call_id FROM calls
      WHERE batch_call_id = ${batch} AND call_status NOT IN ('registered', 'ongoing') ORDER BY task_id`
  })

describe("Reconciler: a dial whose outcome is unknown", () => {
  it.live("DialerUnavailable leaves the task unknown, holding its slot; no redial while lookups fail; one after None", () =>
    scenario((carrier) =>
      Effect.gen(function*() {
        // one line: while the first task is unknown its call may be live, so the second must wait too
        const orgId = yield* seedOrg(1)
        const batch = yield* createBatch(orgId, { count: 2 })
        const first = yield* tick
        assert.strictEqual(first.claimed, 1)
        yield* settle
        const [a, b] = yield* idsOf(batch)
        assert.deepStrictEqual(yield* statesOf(batch), ["unknown", "pending"])
        assert.deepStrictEqual(carrier.dials.map((d) => d.idempotency_key), [a])
        assert.deepStrictEqual(yield* callsOf(batch), [])

        // the lookup fails, four times in a row, each at the task's recheck: nothing is dialled, nothing changes
        for (let round = 1; round <= 4; round++) {
          yield* TestClock.setTime(T0 + round * RECHECK_MS)
          const report = yield* tick
          assert.deepStrictEqual(report.reconciled, { ended: 0, ongoing: 0, notPlaced: 0, unanswered: 1 }, `${round}`)
          assert.strictEqual(report.claimed, 0, `round ${round}: no redial, and no second call beside a live one`)
          assert.deepStrictEqual(yield* statesOf(batch), ["unknown", "pending"])
          assert.strictEqual(carrier.lookups.length, round)
          // between rechecks the task is not asked about again
          yield* TestClock.adjust(1_000)
          yield* tick
          assert.strictEqual(carrier.lookups.length, round)
        }
        assert.strictEqual(carrier.dials.length, 1)

        // the carrier answers at last: no call with that key. The same pass returns the task to pending and dials it
        carrier.onLookup(() => ScriptedDialer.answers.notPlaced)
        carrier.onDial(ScriptedDialer.answers.ended)
        yield* TestClock.adjust(RECHECK_MS)
        const redial = yield* tick
        assert.strictEqual(redial.reconciled.notPlaced, 1)
        assert.strictEqual(redial.claimed, 1)
        yield* settle
        assert.strictEqual(carrier.dialsOf(a!), 2)
        assert.deepStrictEqual(yield* statesOf(batch), ["completed", "pending"])

        // the rest of the batch goes on normally, and nothing is dialled a third time
        assert.strictEqual((yield* tick).claimed, 1)
        yield* settle
        yield* TestClock.adjust(10 * RECHECK_MS)
        assert.strictEqual((yield* tick).claimed, 0)
        assert.deepStrictEqual([carrier.dialsOf(a!), carrier.dialsOf(b!)], [2, 1])
        assert.deepStrictEqual((yield* callsOf(batch)).map((c) => c.task_id), [a!, b!].sort())
        assert.strictEqual((yield* batchRow(batch)).status, "completed")
      })
    ))

  it.live("a lookup that never answers times out as unanswered: no redial, and the pass goes on", () =>
    scenario((carrier) =>
      Effect.gen(function*() {
        const orgId = yield* seedOrg(5)
        const batch = yield* createBatch(orgId, { count: 1 })
        yield* tick
        yield* settle
        const [a] = yield* idsOf(batch)
        assert.deepStrictEqual(yield* statesOf(batch), ["unknown"])

        // another org's batch, due now: the pass whose lookup hangs must still dispatch it
        const other = yield* createBatch(yield* seedOrg(5), { count: 2 })
        carrier.onDial(ScriptedDialer.answers.ended)
        const hanging = yield* carrier.hanging
        carrier.onLookup(hanging.script)
        yield* TestClock.adjust(RECHECK_MS)
        const sleeps = makeSleepWatch()
        const pass = yield* Effect.forkChild(sleeps.watch(tick))
        assert.strictEqual(yield* Deferred.await(hanging.reached), a!)
        // the lookup's timer is set when it starts: the clock moves once it is seen running (it was ten turns of
        // the scheduler, a guess), and one turn more for it to reach the TestClock's list
        yield* waitUntil(
          "the lookup's deadline to be running on the Clock",
          Effect.sync(() => sleeps.sleeping(Reconciler.LOOKUP_TIMEOUT_MS) >= 1),
          { everyMs: 5, state: () => sleeps.snapshot() }
        )
        yield* Effect.yieldNow
        yield* TestClock.adjust(Reconciler.LOOKUP_TIMEOUT_MS)
        const ended = yield* TestClock.withLive(Fiber.join(pass).pipe(Effect.timeoutOption("10 seconds")))
        assert.isTrue(Option.isSome(ended), "the pass ended once the lookup timed out")
        const report = Option.getOrThrow(ended)
        assert.deepStrictEqual(report.reconciled, { ended: 0, ongoing: 0, notPlaced: 0, unanswered: 1 })
        // a lookup without an answer is not "no call": the task stays unknown and is not dialled again
        assert.strictEqual(report.claimed, 2)
        assert.deepStrictEqual(yield* statesOf(batch), ["unknown"])
        assert.strictEqual(carrier.dialsOf(a!), 1)
        yield* settle
        assert.deepStrictEqual(yield* statesOf(other), ["completed", "completed"])

        // at its next recheck it is asked again; the call is found and recorded, still without a redial
        carrier.onLookup(ScriptedDialer.answers.found)
        yield* TestClock.adjust(RECHECK_MS)
        const found = yield* tick
        assert.strictEqual(found.reconciled.ended, 1)
        assert.strictEqual(carrier.dialsOf(a!), 1)
        assert.deepStrictEqual(yield* callsOf(batch), [{ task_id: a!, svc_call_id: true }])
      })
    ))

  it.live("a call the lookup finds (ongoing, then ended) is recorded without a redial; a dial that dies counts as unknown", () =>
    scenario((carrier) =>
      Effect.gen(function*() {
        const orgId = yield* seedOrg(5)
        const batch = yield* createBatch(orgId, { count: 2 })
        // the first dial's carrier timed out after placing the call; the second adapter crashed (a defect)
        let n = 0
        carrier.onDial(() =>
          ++n === 1
            ? ScriptedDialer.answers.unavailable("timeout after placing")
            : Effect.die(new Error("socket hang up"))
        )
        assert.strictEqual((yield* tick).claimed, 2)
        yield* settle
        const [a, b] = yield* idsOf(batch)
        assert.deepStrictEqual(yield* statesOf(batch), ["unknown", "unknown"])

        carrier.onLookup((key) => ScriptedDialer.answers.ongoing(key, T0))
        yield* TestClock.adjust(RECHECK_MS)
        const ongoing = yield* tick
        assert.deepStrictEqual(ongoing.reconciled, { ended: 0, ongoing: 2, notPlaced: 0, unanswered: 0 })
        assert.strictEqual(ongoing.claimed, 0)
        assert.deepStrictEqual(yield* statesOf(batch), ["unknown", "unknown"])

        carrier.onLookup(ScriptedDialer.answers.found)
        yield* TestClock.adjust(RECHECK_MS)
        const ended = yield* tick
        assert.deepStrictEqual(ended.reconciled, { ended: 2, ongoing: 0, notPlaced: 0, unanswered: 0 })
        assert.strictEqual(ended.claimed, 0)
        assert.deepStrictEqual(yield* statesOf(batch), ["completed", "completed"])
        assert.deepStrictEqual([carrier.dialsOf(a!), carrier.dialsOf(b!)], [1, 1])
        assert.deepStrictEqual(
          yield* callsOf(batch),
          [a!, b!].sort().map((id) => ({ task_id: id, svc_call_id: true }))
        )
        assert.strictEqual((yield* batchRow(batch)).status, "completed")
      })
    ))
})
