// Issue 16, item 10: the failure paths of the exactly-once rules (docs/dialer.md, rules 3 and 4) had no test.
// A dial failing with DialerUnavailable leaves its task `unknown`; nothing dials it again until `lookup` answers
// `None` for its key, however often lookup fails or goes unanswered meanwhile; `None` brings exactly one redial,
// and a call that `lookup` finds is recorded without any. The dialer here is a scripted adapter behind the real
// port; the database, the dispatcher and the reconciler are the real ones.
import { assert, describe, it } from "@effect/vitest"
import { type CallEnded, type CallLookup, Dialer, DialerUnavailable } from "@svc/domain/ports/Dialer.ts"
import { makeSleepWatch, waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import { Effect, Fiber, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { Dispatcher } from "../../src/dispatch/Dispatcher.ts"
import { LOOKUP_TIMEOUT_MS } from "../../src/dispatch/Reconciler.ts"
import * as SchedulerConfig from "../../src/runtime/SchedulerConfig.ts"
import { batchRow, createBatch, isolated, seedOrg, stateCounts } from "../fixtures/Fixtures.ts"

type LookupMode = "fails" | "hangs" | "none" | "ended"

/** A scripted carrier: the first dial of each key fails as unavailable; later ones end answered at once. */
const scripted = () => {
  const dials = new Map<string, number>()
  const lookups = new Map<string, number>()
  const state = { lookup: "fails" as LookupMode }
  const ended = (key: string, now: number): CallEnded => ({
    _tag: "CallEnded",
    idempotency_key: key,
    call_id: `call_${key}`,
    outcome: "answered",
    start_timestamp: now,
    end_timestamp: now,
    duration_ms: 0,
    disconnection_reason: "user_hangup",
    analysis: {}
  })
  const dialer = Dialer.of({
    dial: (request) =>
      Effect.gen(function*() {
        const n = (dials.get(request.idempotency_key) ?? 0) + 1
        dials.set(request.idempotency_key, n)
        if (n === 1) {
          return yield* new DialerUnavailable({ message: "carrier timed out; the call may or may not exist" })
        }
        return ended(request.idempotency_key, Date.UTC(2026, 4, 4, 15, 0))
      }),
    lookup: (key) =>
      Effect.suspend((): Effect.Effect<Option.Option<CallLookup>, DialerUnavailable> => {
        lookups.set(key, (lookups.get(key) ?? 0) + 1)
        switch (state.lookup) {
          case "fails":
            return Effect.fail(new DialerUnavailable({ message: "carrier unreachable" }))
          case "hangs":
            return Effect.never
          case "none":
            return Effect.succeed(Option.none())
          case "ended":
            return Effect.succeed(Option.some(ended(key, Date.UTC(2026, 4, 4, 15, 0))))
        }
      })
  })
  return { dials, lookups, state, layer: Layer.succeed(Dialer, dialer) }
}

const RECHECK = 5_000
const settings = SchedulerConfig.defaults({ reconcileRecheckMs: RECHECK })

describe("exactly once when the dialer cannot tell", () => {
  it.live("DialerUnavailable: no redial while lookup fails or hangs; one redial after None", () => {
    const carrier = scripted()
    return Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 4, 4, 15, 0))
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, { count: 3 })
      const dispatcher = yield* Dispatcher.make(settings)
      const first = yield* dispatcher.tick
      assert.strictEqual(first.claimed, 3)
      yield* dispatcher.settle
      assert.deepStrictEqual(yield* stateCounts(batch), { unknown: 3 }, "the dial's outcome is unknown")
      assert.deepStrictEqual([...carrier.dials.values()], [1, 1, 1])

      // lookup fails: several passes, each asks again after the recheck time; nothing is dialled
      for (let pass = 0; pass < 3; pass++) {
        yield* TestClock.adjust(RECHECK + 1)
        const report = yield* dispatcher.tick
        assert.strictEqual(report.reconciled.unanswered, 3, `pass ${pass}`)
        assert.strictEqual(report.claimed, 0, `pass ${pass}: no claim while the key's fate is unknown`)
        yield* dispatcher.settle
      }
      assert.deepStrictEqual([...carrier.dials.values()], [1, 1, 1])
      assert.deepStrictEqual(yield* stateCounts(batch), { unknown: 3 })

      // lookup never answers: the pass gives up on it after LOOKUP_TIMEOUT_MS instead of stalling the worker
      carrier.state.lookup = "hangs"
      yield* TestClock.adjust(RECHECK + 1)
      const lookedUp = () => [...carrier.lookups.values()].reduce((a, b) => a + b, 0)
      const asked = lookedUp()
      const sleeps = makeSleepWatch()
      const hanging = yield* Effect.forkChild(sleeps.watch(dispatcher.tick))
      // the pass reaches the lookups over real database round trips; then its deadline waits on the TestClock (the
      // clock moves once that sleep has begun, not after a fixed 20 ms)
      yield* waitUntil(
        "the pass's three lookups to hang with their deadline running on the Clock",
        Effect.sync(() => lookedUp() >= asked + 3 && sleeps.sleeping(LOOKUP_TIMEOUT_MS) >= 1),
        { everyMs: 5, state: () => ({ lookups: lookedUp() - asked, sleeping: sleeps.snapshot() }) }
      )
      // the sleep was counted as it began: one turn for it to reach the TestClock's list
      yield* Effect.yieldNow
      yield* TestClock.adjust(LOOKUP_TIMEOUT_MS + 1)
      const report = yield* Fiber.join(hanging)
      assert.strictEqual(report.reconciled.unanswered, 3)
      assert.strictEqual(report.claimed, 0)
      assert.deepStrictEqual([...carrier.dials.values()], [1, 1, 1], "an unanswered lookup is not a None")

      // lookup says no call was ever placed: each task is dialled again, once
      carrier.state.lookup = "none"
      yield* TestClock.adjust(RECHECK + 1)
      const redial = yield* dispatcher.tick
      assert.strictEqual(redial.reconciled.notPlaced, 3)
      assert.strictEqual(redial.claimed, 3)
      yield* dispatcher.settle
      assert.deepStrictEqual(yield* stateCounts(batch), { completed: 3 })
      for (let pass = 0; pass < 3; pass++) {
        yield* TestClock.adjust(RECHECK + 1)
        yield* dispatcher.tick
        yield* dispatcher.settle
      }
      assert.deepStrictEqual([...carrier.dials.values()], [2, 2, 2], "exactly one redial per key")
      assert.strictEqual((yield* batchRow(batch)).status, "completed")
    }).pipe(Effect.provide(carrier.layer), isolated)
  })

  it.live("DialerUnavailable, then lookup finds the call: recorded without a redial", () => {
    const carrier = scripted()
    return Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 4, 4, 15, 0))
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, { count: 2 })
      const dispatcher = yield* Dispatcher.make(settings)
      yield* dispatcher.tick
      yield* dispatcher.settle
      assert.deepStrictEqual(yield* stateCounts(batch), { unknown: 2 })
      carrier.state.lookup = "ended"
      yield* TestClock.adjust(RECHECK + 1)
      const report = yield* dispatcher.tick
      assert.strictEqual(report.reconciled.ended, 2)
      assert.strictEqual(report.claimed, 0)
      yield* dispatcher.settle
      assert.deepStrictEqual(yield* stateCounts(batch), { completed: 2 })
      assert.deepStrictEqual([...carrier.dials.values()], [1, 1], "no redial")
      const sql = yield* SqlClient.SqlClient
      const calls = yield* sql<{ call_id: string }>`
        SELECT call_id FROM calls WHERE batch_call_id = ${batch} ORDER BY call_id`
      assert.strictEqual(calls.length, 2)
      assert.isTrue(calls.every((c) => c.call_id.startsWith("call_")), "the call lookup found is the one recorded")
    }).pipe(Effect.provide(carrier.layer), isolated)
  })
})
