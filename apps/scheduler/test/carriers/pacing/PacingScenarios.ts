/**
 * The pacing rules (decision 0610), written once and run against both stores (PostgreSQL and Redis) by the
 * integration tests beside this file. Each scenario takes two workers that share one store through their own
 * connections.
 */
import { assert } from "@effect/vitest"
import { waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import { Clock, Effect, Fiber, Metric } from "effect"
import { TestClock } from "effect/testing"
import * as CarrierPacingConfig from "../../../src/carriers/pacing/CarrierPacingConfig.ts"
import * as CarrierPacingMetrics from "../../../src/carriers/pacing/CarrierPacingMetrics.ts"
import type { SlotPacer, SlotStore } from "../../../src/carriers/pacing/SlotPacer.ts"
import { countedSleeps, doneOrTimingOut, settle } from "./StoreWatch.ts"

export type Workers = readonly [SlotPacer, SlotPacer]

/** 2026-01-01T00:00:00Z, where the TestClock scenarios start. */
export const T0 = 1_767_225_600_000

/** Most slot starts in any window `[s, s + 1 s)`. */
export const mostInOneSecond = (slotsUs: ReadonlyArray<number>): number => {
  const sorted = [...slotsUs].sort((a, b) => a - b)
  let most = 0
  let first = 0
  for (let last = 0; last < sorted.length; last++) {
    while (sorted[last]! - sorted[first]! >= 1_000_000) first++
    most = Math.max(most, last - first + 1)
  }
  return most
}

/**
 * Four acquirers (two per worker) take slots on one account as fast as the pace lets them for `runMs` of the
 * product's Clock (a TestClock the scenario moves in steps shorter than the interval, once every acquirer is asleep
 * until its slot): no two slots closer than the interval, never more than ceil(cps) in one second, nobody starts
 * before its slot, and the achieved rate within 5 % of `cps`. The rate is counted over the events themselves: the
 * slots granted and the instants, on the product's Clock, at which each acquire returned. (It was once measured
 * over 2.4 s of real time, which a loaded machine's late timers and round trips turned into a verdict on the
 * machine.) Runs on the TestClock (`TestClock.layer()` provided by the caller).
 */
export const pacesFourAcquirersOnTwoWorkers = (workers: Workers, cps: number, runMs: number) =>
  countedSleeps(Effect.gen(function*() {
    const account = `AC_paced_${Math.random().toString(36).slice(2)}`
    yield* TestClock.setTime(T0)
    const taken: Array<{ readonly acquirer: number; readonly slotUs: number; readonly atMs: number }> = []
    const acquirer = (worker: SlotPacer, id: number) =>
      Effect.gen(function*() {
        while ((yield* Clock.currentTimeMillis) < T0 + runMs) {
          const slotUs = yield* worker.acquireSlot(account)
          taken.push({ acquirer: id, slotUs, atMs: yield* Clock.currentTimeMillis })
        }
      })
    const fibers = yield* Effect.forEach([0, 1, 2, 3], (id) => Effect.forkChild(acquirer(workers[id % 2]!, id)))
    // 30 ms steps: shorter than the interval and not a divisor of it, so a slot falls inside a step (the TestClock
    // stops at each sleeper's instant) as often as at its end. The last acquirer ends within four intervals of
    // runMs (four acquirers queue at most four slots ahead).
    const interval = CarrierPacingConfig.intervalMicros(cps)
    const maxMoves = Math.ceil((runMs + 5 * interval / 1_000) / 30)
    const running = () => fibers.some((fiber) => fiber.pollUnsafe() === undefined)
    for (let moves = 0; running(); moves++) {
      yield* settle(fibers)
      if (!running()) break
      assert.isBelow(moves, maxMoves, `acquirers still running at +${moves * 30} ms of the product clock`)
      yield* TestClock.adjust(30)
    }
    for (const fiber of fibers) yield* Fiber.join(fiber)

    const slots = taken.map((t) => t.slotUs).sort((a, b) => a - b)
    assert.isAtLeast(slots.length, Math.floor((runMs / 1_000) * cps))
    for (let i = 1; i < slots.length; i++) assert.isAtLeast(slots[i]! - slots[i - 1]!, interval, `slot ${i}`)
    assert.isAtMost(mostInOneSecond(slots), Math.ceil(cps))
    // every acquirer got slots, on both workers: the pace is shared, not split
    assert.deepStrictEqual(new Set(taken.map((t) => t.acquirer)).size, 4)
    // a call creation never starts before its slot (1 ms: Clock's whole milliseconds against microsecond slots)
    for (const t of taken) assert.isAtLeast(t.atMs * 1_000, t.slotUs - 1_000)
    const returns = taken.map((t) => t.atMs).sort((a, b) => a - b)
    const achieved = (returns.length - 1) / ((returns[returns.length - 1]! - returns[0]!) / 1_000)
    assert.approximately(achieved, cps, cps * 0.05, `achieved ${achieved.toFixed(3)} calls/s`)
    return { slots: slots.length, achieved }
  }))

/**
 * A backoff on one worker holds off both: an acquirer already waiting for a slot inside the pause gives it up and
 * takes one after, a new acquirer's first slot is the pause's end, and the pace resumes one interval apart.
 * Runs on the TestClock (`TestClock.layer()` provided by the caller).
 */
export const backoffPausesEveryWorker = (workers: Workers) =>
  countedSleeps(Effect.gen(function*() {
    const [a, b] = workers
    const account = "AC_backoff"
    yield* TestClock.setTime(T0)
    const backoffsBefore = (yield* Metric.value(CarrierPacingMetrics.backoffs)).count
    // cps 5: slots 200 ms apart
    assert.strictEqual(yield* a.acquireSlot(account), T0 * 1_000)
    const done: Array<readonly [string, number, number]> = []
    const track = (name: string, worker: SlotPacer) =>
      Effect.forkChild(
        Effect.tap(
          worker.acquireSlot(account),
          (slot) => Effect.map(Clock.currentTimeMillis, (now) => done.push([name, slot / 1_000, now]))
        )
      )
    const waiting = yield* track("waiting", b)
    yield* settle([waiting])
    // the carrier answered 429: every worker holds off for 1 s
    yield* a.backoff(account, 1_000)
    const fresh = yield* track("fresh", a)
    const both = [waiting, fresh]
    yield* settle(both)
    yield* TestClock.adjust(200)
    yield* settle(both)
    assert.deepStrictEqual(done, [], "the slot at +200 ms lies inside the pause: nobody starts")
    yield* TestClock.adjust(799)
    yield* settle(both)
    assert.deepStrictEqual(done, [], "still paused at +999 ms")
    yield* TestClock.adjust(1)
    yield* settle(both)
    assert.deepStrictEqual(done, [["fresh", T0 + 1_000, T0 + 1_000]])
    yield* TestClock.adjust(200)
    yield* settle(both)
    assert.deepStrictEqual(done, [["fresh", T0 + 1_000, T0 + 1_000], ["waiting", T0 + 1_200, T0 + 1_200]])
    yield* Fiber.join(waiting)
    yield* Fiber.join(fresh)
    // a shorter backoff does not cut a longer one short
    yield* b.backoff(account, 5_000)
    yield* a.backoff(account, 1_000)
    const later = yield* track("later", a)
    yield* settle([later])
    yield* TestClock.adjust(4_999)
    yield* settle([later])
    assert.strictEqual(done.length, 2)
    yield* TestClock.adjust(1)
    yield* settle([later])
    assert.deepStrictEqual(done[2], ["later", T0 + 6_200, T0 + 6_200])
    yield* Fiber.join(later)
    assert.strictEqual((yield* Metric.value(CarrierPacingMetrics.backoffs)).count, backoffsBefore + 3)
  }))

/**
 * cps 0.5: one slot every 2 s, shared by both workers; after a long idle spell the next slot is at once and the
 * one after 2 s later (no burst is saved up). Runs on the TestClock.
 */
export const fractionalRate = (workers: Workers) =>
  countedSleeps(Effect.gen(function*() {
    const [a, b] = workers
    const account = "AC_half"
    yield* TestClock.setTime(T0)
    const waitsBefore = (yield* Metric.value(CarrierPacingMetrics.waits)).count
    assert.strictEqual(yield* a.acquireSlot(account), T0 * 1_000)
    const second = yield* Effect.forkChild(b.acquireSlot(account))
    yield* settle([second])
    yield* TestClock.adjust(1_999)
    yield* settle([second])
    assert.isUndefined(second.pollUnsafe(), "not before 2 s")
    yield* TestClock.adjust(1)
    assert.strictEqual(yield* Fiber.join(second), (T0 + 2_000) * 1_000)
    assert.strictEqual((yield* Metric.value(CarrierPacingMetrics.waits)).count, waitsBefore + 1)
    // idle for a minute: the next slot is now, the one after it 2 s later, not a burst of 30
    yield* TestClock.adjust(60_000)
    const now = T0 + 62_000
    assert.strictEqual(yield* b.acquireSlot(account), now * 1_000)
    const fourth = yield* Effect.forkChild(a.acquireSlot(account))
    yield* settle([fourth])
    yield* TestClock.adjust(2_000)
    assert.strictEqual(yield* Fiber.join(fourth), (now + 2_000) * 1_000)
  }))

/**
 * The store's schedule on its own (no sleeping): at 3 and 2.5 calls/s the slots are exactly one rounded-up
 * interval apart (333,334 us; 400,000 us), so never ceil(cps) + 1 in one second, and accounts do not share a pace.
 */
export const storeKeepsExactIntervals = (store: SlotStore) =>
  Effect.gen(function*() {
    const now = T0 * 1_000
    for (const [account, cps] of [["AC_three", 3], ["AC_two_and_a_half", 2.5]] as const) {
      const interval = CarrierPacingConfig.intervalMicros(cps)
      const slots: Array<number> = []
      for (let i = 0; i < 10; i++) slots.push(yield* store.take(account, now, interval))
      assert.deepStrictEqual(slots, slots.map((_, i) => now + i * interval))
      assert.strictEqual(mostInOneSecond(slots), Math.ceil(cps))
    }
    // another account starts at once, whatever the others' queues
    assert.strictEqual(yield* store.take("AC_other", now, 1_000_000), now)
    // a pause moves the next slot to its end; a stale pause (in the past) moves nothing
    yield* store.pause("AC_other", now, now + 5_000_000)
    assert.strictEqual(yield* store.pausedUntil("AC_other"), now + 5_000_000)
    assert.strictEqual(yield* store.take("AC_other", now, 1_000_000), now + 5_000_000)
    assert.strictEqual(yield* store.pausedUntil("AC_never"), 0)
    yield* store.pause("AC_past", now, now - 10_000_000)
    assert.strictEqual(yield* store.take("AC_past", now, 1_000_000), now)
  })

/**
 * The store gone (the caller stops it in `stop`): acquire fails with `DialerUnavailable` naming the store and the
 * account, and is counted; backoff does not fail. "Gone" may show at once (a refused connection) or as no answer,
 * which the store's timeout of decision 0610 (`timeoutMs`: 5 s for PostgreSQL, 1 s for Redis) must end: the
 * clock is moved by exactly that much once the acquire is done or its timeout is running, and the acquire must be
 * over then. Counted on the product's Clock, so a slow machine cannot fail it, and a missing timeout cannot pass.
 * Runs on the TestClock (`TestClock.layer()` provided by the caller).
 */
export const unavailableWhenStoreGone = (
  pacer: SlotPacer,
  store: string,
  stop: Effect.Effect<void>,
  timeoutMs: number
) =>
  countedSleeps(Effect.gen(function*() {
    yield* TestClock.setTime(T0)
    yield* pacer.acquireSlot("AC_down")
    yield* stop
    const before = (yield* Metric.value(CarrierPacingMetrics.unavailable)).count
    const acquire = yield* Effect.forkChild(Effect.flip(pacer.acquireSlot("AC_down")))
    yield* doneOrTimingOut(acquire)
    yield* TestClock.adjust(timeoutMs)
    yield* waitUntil(
      `the acquire to have ended ${timeoutMs} ms (product clock) after the store went`,
      Effect.sync(() => acquire.pollUnsafe() !== undefined),
      { timeoutMs: 10_000, everyMs: 5 }
    )
    const error = yield* Fiber.join(acquire)
    assert.strictEqual(error._tag, "DialerUnavailable")
    assert.include(error.message, store)
    assert.include(error.message, "AC_down")
    assert.strictEqual((yield* Metric.value(CarrierPacingMetrics.unavailable)).count, before + 1)
    yield* pacer.backoff("AC_down", 1_000)
  }))
