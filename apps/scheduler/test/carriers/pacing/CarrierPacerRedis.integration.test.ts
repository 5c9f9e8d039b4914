// Carrier pacing shared through Redis (issue 14, "Carrier pacing"; decision 0610): two workers on two clients of
// one real redis-server (Debian's, started here on a free port) keep one account's pace together.
import { NodeRedis } from "@effect/platform-node"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Redis } from "effect/persistence"
import { TestClock } from "effect/testing"
import type { ChildProcess } from "node:child_process"
import * as CarrierPacerRedis from "../../../src/carriers/pacing/CarrierPacerRedis.ts"
import * as CarrierPacingConfig from "../../../src/carriers/pacing/CarrierPacingConfig.ts"
import * as Scenarios from "./PacingScenarios.ts"
import { redisWorker, redisWorkers, startRedis, stopRedis } from "./Workers.ts"

const at = (cps: number) => CarrierPacingConfig.defaults({ cps })

let redis: ChildProcess
let url: string

beforeAll(async () => {
  const started = await startRedis()
  redis = started.process
  url = started.url
})
afterAll(() => stopRedis(redis))

describe("carrier pacing in Redis", () => {
  it.live(
    "four acquirers on two workers at 5 calls/s for 2.4 s of the Clock: never above the pace, within 5 % of it",
    () =>
      Effect.gen(function*() {
        const workers = yield* redisWorkers(url, at(5))
        const { slots } = yield* Scenarios.pacesFourAcquirersOnTwoWorkers(workers, 5, 2_400).pipe(
          Effect.provide(TestClock.layer())
        )
        assert.isAtLeast(slots, 12)
      }).pipe(Effect.scoped),
    30_000
  )

  it.live("a backoff on one worker holds off both, those already waiting included", () =>
    Effect.gen(function*() {
      const workers = yield* redisWorkers(url, at(5))
      yield* Scenarios.backoffPausesEveryWorker(workers).pipe(Effect.provide(TestClock.layer()))
    }).pipe(Effect.scoped), 30_000)

  it.live(
    "a fractional rate: 0.5 calls/s is one slot every 2 s over both workers, no burst after idling",
    () =>
      Effect.gen(function*() {
        const workers = yield* redisWorkers(url, at(0.5))
        yield* Scenarios.fractionalRate(workers).pipe(Effect.provide(TestClock.layer()))
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "the store keeps slots exactly one rounded-up interval apart, per account, after pauses",
    () =>
      Effect.gen(function*() {
        const context = yield* Layer.build(NodeRedis.layer({ url, disableOfflineQueue: true }))
        const store = yield* CarrierPacerRedis.store.pipe(Effect.provideContext(context))
        yield* Scenarios.storeKeepsExactIntervals(store)
        const client = Context.get(context, Redis.Redis)
        // microseconds in full (not rounded to 14 digits), and an expiry so idle accounts go away
        assert.strictEqual(
          yield* client.send<string>("HGET", "svc:carrier-pacing:AC_three", "next_at"),
          String(Scenarios.T0 * 1_000 + 10 * 333_334)
        )
        assert.isAbove(yield* client.send<number>("PTTL", "svc:carrier-pacing:AC_three"), 0)
      }).pipe(Effect.scoped),
    30_000
  )

  // Last: it stops this file's Redis.
  it.live(
    "Redis gone: acquire fails with DialerUnavailable within a second of the Clock, backoff does not fail",
    () =>
      Effect.gen(function*() {
        const pacer = yield* redisWorker(url, at(5))
        // the client fails at once while disconnected; a sent command waits 1 s at most (decision 0610)
        yield* Scenarios.unavailableWhenStoreGone(pacer, "Redis", Effect.promise(() => stopRedis(redis)), 1_000).pipe(
          Effect.provide(TestClock.layer())
        )
      }).pipe(Effect.scoped),
    30_000
  )
})
