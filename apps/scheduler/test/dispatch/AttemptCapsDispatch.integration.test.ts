import { assert, describe, it } from "@effect/vitest"
import { SchedulerSimulatedCarrier } from "@svc/store/carriers/simulated/SchedulerSimulatedCarrier.ts"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as SimulatedDialer from "../../src/carriers/simulated/SimulatedDialer.ts"
import { Dispatcher } from "../../src/dispatch/Dispatcher.ts"
import * as SchedulerConfig from "../../src/runtime/SchedulerConfig.ts"
import { batchRow, createBatch, dialerSettings, isolated, seedOrg, taskStates } from "../fixtures/Fixtures.ts"

// Attempt caps in dispatch (issue 15 item 4, decision 0624): a Florida number is dialled at most 3 times in a
// rolling 24 h by an org, across its batches; the 4th attempt waits, with its reason, until exactly 24 h after the
// first, and its batch sleeps until then. Numbers without a cap (New York) are not affected. Tuesday 2026-12-01,
// EST (UTC-5): Miami and New York are legal from 13:00Z (08:00) to 01:00Z / 02:00Z.

const at = (iso: string) => Date.parse(iso)

const MIAMI = "+13055550100"
const NEW_YORK = "+12125550100"

const scenario = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const dispatcher = yield* Dispatcher.make(SchedulerConfig.defaults())
    return yield* body.pipe(Effect.provideService(Dispatcher, dispatcher))
  }).pipe(Effect.provide(SimulatedDialer.layerMemory(dialerSettings())), isolated)

/** The numbers dialled (any batch), with when. */
const dials = Effect.gen(function*() {
  const carrier = yield* SchedulerSimulatedCarrier
  const attempts = yield* Effect.orDie(carrier.attempts)
  return attempts.map((a) => ({ to: a.request.to_number, at: a.attemptedAt, key: a.request.idempotency_key }))
})

/** One pass at `iso`, its dials settled; returns the pass's report and the numbers it dialled. */
const passAt = (iso: string) =>
  Effect.gen(function*() {
    const dispatcher = yield* Dispatcher
    yield* TestClock.setTime(at(iso))
    const before = (yield* dials).length
    const report = yield* dispatcher.tick
    yield* dispatcher.settle
    const dialled = (yield* dials).slice(before).map((d) => d.to).sort()
    return { report, dialled }
  })

describe("Dispatcher with attempt caps", () => {
  it.live("4 tasks to one FL number across two batches: 3 dialled, the 4th exactly 24 h after the first", () =>
    scenario(Effect.gen(function*() {
      yield* TestClock.setTime(at("2026-12-01T14:00:00Z"))
      const orgId = yield* seedOrg()
      const first = yield* createBatch(orgId, { tasks: [{ to_number: MIAMI }, { to_number: NEW_YORK }] })
      const morning = yield* passAt("2026-12-01T14:00:00Z")
      assert.deepStrictEqual(morning.dialled, [MIAMI, NEW_YORK].sort())
      assert.strictEqual(morning.report.deferred, 0)

      // half an hour later a second batch: three more to Miami, three to New York
      yield* TestClock.setTime(at("2026-12-01T14:30:00Z"))
      const second = yield* createBatch(orgId, {
        tasks: [MIAMI, NEW_YORK, MIAMI, NEW_YORK, MIAMI, NEW_YORK].map((to_number) => ({ to_number }))
      })
      const later = yield* passAt("2026-12-01T14:30:00Z")
      // Miami's 2nd and 3rd attempts; every New York task (no cap there)
      assert.deepStrictEqual(later.dialled, [MIAMI, MIAMI, NEW_YORK, NEW_YORK, NEW_YORK].sort())
      assert.strictEqual(later.report.deferred, 1)
      const waiting = (yield* taskStates(second)).filter((t) => t.state === "pending")
      assert.deepStrictEqual(waiting.map((t) => [t.to_number, t.state_reason]), [
        [MIAMI, "attempt_cap: FL 3 per 24h until 2026-12-02T14:00:00Z"]
      ])
      // the batch sleeps until the first attempt leaves the window, and the pass says so
      assert.strictEqual((yield* batchRow(second)).next_dispatch_at, at("2026-12-02T14:00:00Z"))
      assert.strictEqual(later.report.nextAt, at("2026-12-02T14:00:00Z"))
      assert.strictEqual((yield* batchRow(second)).status, "in_progress")
      assert.strictEqual((yield* batchRow(first)).status, "completed")

      // a second before: not due, nothing dialled
      const before = yield* passAt("2026-12-02T13:59:59Z")
      assert.deepStrictEqual(before.dialled, [])
      // at that instant the 4th attempt is made: 2 attempts in the window (14:30Z), 1 free
      const after = yield* passAt("2026-12-02T14:00:00Z")
      assert.deepStrictEqual(after.dialled, [MIAMI])
      assert.strictEqual((yield* batchRow(second)).status, "completed")
      const states = yield* taskStates(second)
      // every task finished (its outcome is its reason now); the cap's reason went with the claim
      assert.isTrue(states.every((s) => s.state !== "pending" && s.state !== "dialling"))
      assert.isFalse(states.some((s) => s.state_reason?.startsWith("attempt_cap") === true))

      // never more than 3 attempts to the Miami number in any 24 h
      const miami = (yield* dials).filter((d) => d.to === MIAMI).map((d) => d.at)
      assert.deepStrictEqual(miami, [
        at("2026-12-01T14:00:00Z"),
        at("2026-12-01T14:30:00Z"),
        at("2026-12-01T14:30:00Z"),
        at("2026-12-02T14:00:00Z")
      ])
      for (const start of miami) {
        assert.isAtMost(miami.filter((t) => t >= start && t < start + 86_400_000).length, 3)
      }
    })))

  it.live("two workers racing over batches to one FL number never make a 4th attempt", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(at("2026-12-01T15:00:00Z"))
      const orgId = yield* seedOrg()
      const batches: Array<string> = []
      for (let i = 0; i < 6; i++) batches.push(yield* createBatch(orgId, { tasks: [{ to_number: MIAMI }] }))
      const a = yield* Dispatcher.make(SchedulerConfig.defaults({ workerId: "worker-a" }))
      const b = yield* Dispatcher.make(SchedulerConfig.defaults({ workerId: "worker-b" }))
      const [ra, rb] = yield* Effect.all([a.tick, b.tick], { concurrency: "unbounded" })
      yield* Effect.all([a.settle, b.settle], { concurrency: "unbounded" })
      assert.strictEqual(ra.claimed + rb.claimed, 3)
      assert.strictEqual((yield* dials).length, 3)
      const pending = []
      for (const batch of batches) pending.push(...(yield* taskStates(batch)).filter((t) => t.state === "pending"))
      assert.strictEqual(pending.length, 3)
      // another pass later that day changes nothing; the next day the three wait no more
      const again = yield* Effect.gen(function*() {
        yield* TestClock.setTime(at("2026-12-01T20:00:00Z"))
        return yield* a.tick
      })
      assert.strictEqual(again.claimed, 0)
      yield* TestClock.setTime(at("2026-12-02T15:00:00Z"))
      const next = yield* a.tick
      yield* a.settle
      assert.strictEqual(next.claimed, 3)
    }).pipe(Effect.provide(SimulatedDialer.layerMemory(dialerSettings())), isolated))
})
