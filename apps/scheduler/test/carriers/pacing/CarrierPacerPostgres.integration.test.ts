// Carrier pacing shared through PostgreSQL (issue 14, "Carrier pacing"; decision 0610): two workers on two pools
// over one real database keep one account's pace together.
import { assert, describe, it } from "@effect/vitest"
import * as Database from "@svc/store/db/Database.ts"
import * as DatabaseAdmin from "@svc/store/db/DatabaseAdmin.ts"
import { Effect, Fiber, Layer, Metric, Option } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as CarrierPacerPostgres from "../../../src/carriers/pacing/CarrierPacerPostgres.ts"
import * as CarrierPacingConfig from "../../../src/carriers/pacing/CarrierPacingConfig.ts"
import * as CarrierPacingMetrics from "../../../src/carriers/pacing/CarrierPacingMetrics.ts"
import * as SlotPacer from "../../../src/carriers/pacing/SlotPacer.ts"
import type { SlotStore } from "../../../src/carriers/pacing/SlotPacer.ts"
import * as Scenarios from "./PacingScenarios.ts"
import { countedSleeps, settle, slowed, watched } from "./StoreWatch.ts"
import { freshDatabase, postgresWorker, postgresWorkers } from "./Workers.ts"

const at = (cps: number) => CarrierPacingConfig.defaults({ cps })

describe("carrier pacing in PostgreSQL", () => {
  it.live(
    "four acquirers on two workers at 5 calls/s for 2.4 s of the Clock: never above the pace, within 5 % of it",
    () =>
      Effect.gen(function*() {
        const workers = yield* postgresWorkers(at(5))
        const { slots } = yield* Scenarios.pacesFourAcquirersOnTwoWorkers(workers, 5, 2_400).pipe(
          Effect.provide(TestClock.layer())
        )
        assert.isAtLeast(slots, 12)
      }).pipe(Effect.scoped),
    30_000
  )

  it.live("a backoff on one worker holds off both, those already waiting included", () =>
    Effect.gen(function*() {
      const workers = yield* postgresWorkers(at(5))
      yield* Scenarios.backoffPausesEveryWorker(workers).pipe(Effect.provide(TestClock.layer()))
    }).pipe(Effect.scoped), 30_000)

  it.live(
    "the backoff rules hold with a store 400 ms a round trip away (the scenarios wait for it, not a fixed time)",
    () =>
      Effect.gen(function*() {
        const workers = yield* postgresWorkers(at(5), (store) => slowed(store, 400))
        yield* Scenarios.backoffPausesEveryWorker(workers).pipe(Effect.provide(TestClock.layer()))
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "a fractional rate: 0.5 calls/s is one slot every 2 s over both workers, no burst after idling",
    () =>
      Effect.gen(function*() {
        const workers = yield* postgresWorkers(at(0.5))
        yield* Scenarios.fractionalRate(workers).pipe(Effect.provide(TestClock.layer()))
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "the store keeps slots exactly one rounded-up interval apart, per account, after pauses",
    () =>
      Effect.gen(function*() {
        const { url } = yield* freshDatabase
        const context = yield* Layer.build(Database.layerFromUrl(url, { migrate: false, maxConnections: 1 }))
        const store = yield* CarrierPacerPostgres.store.pipe(Effect.provideContext(context))
        yield* Scenarios.storeKeepsExactIntervals(store)
        // one row per account, in microseconds
        const rows = yield* Effect.provideContext(
          Effect.flatMap(
            SqlClient.SqlClient,
            (sql) =>
              sql<{ account: string; next_at: string }>`SELECT account, next_at::text FROM carrier_pacing ORDER BY 1`
          ),
          context
        )
        assert.deepStrictEqual(rows.map((r) => r.account), ["AC_other", "AC_past", "AC_three", "AC_two_and_a_half"])
        assert.strictEqual(rows[2]!.next_at, String(Scenarios.T0 * 1_000 + 10 * 333_334))
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "the database gone: acquire fails with DialerUnavailable (no slot, no call), backoff does not fail",
    () =>
      Effect.gen(function*() {
        const { admin, name, url } = yield* freshDatabase
        const pacer = yield* postgresWorker(url, at(5))
        // within the statement timeout of decision 0610 (5 s), on the product's clock
        yield* Scenarios.unavailableWhenStoreGone(
          pacer,
          "PostgreSQL",
          Effect.orDie(DatabaseAdmin.dropDatabase(admin, name)),
          5_000
        ).pipe(Effect.provide(TestClock.layer()))
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "a start tolerance gives up a slot whose start would be late, and fails after five in a row",
    () =>
      Effect.gen(function*() {
        const { url } = yield* freshDatabase
        const context = yield* Layer.build(Database.layerFromUrl(url, { migrate: false, maxConnections: 2 }))
        const real = yield* CarrierPacerPostgres.store.pipe(Effect.provideContext(context))
        // the worker wakes `delays[i]` ms late (a starved timer), simulated by moving the TestClock in the round trip
        const delays: Array<number> = []
        const store: SlotStore = {
          ...real,
          pausedUntil: (account) => Effect.tap(real.pausedUntil(account), () => TestClock.adjust(delays.shift() ?? 0))
        }
        const settings = CarrierPacingConfig.defaults({ cps: 5, startToleranceMs: Option.some(10) })
        const pacer = SlotPacer.make(watched(store), settings)
        yield* countedSleeps(Effect.gen(function*() {
          yield* TestClock.setTime(Scenarios.T0)
          const lateBefore = (yield* Metric.value(CarrierPacingMetrics.late)).count
          // 5/s with 10 ms of tolerance: slots 202 ms apart
          assert.strictEqual(yield* pacer.acquireSlot("AC_late"), Scenarios.T0 * 1_000)
          delays.push(30)
          const second = yield* Effect.forkChild(pacer.acquireSlot("AC_late"))
          yield* settle([second])
          yield* TestClock.adjust(202)
          yield* settle([second])
          // woke 30 ms late: slot +202 given up, +404 taken
          assert.isUndefined(second.pollUnsafe())
          yield* TestClock.adjust(172)
          assert.strictEqual(yield* Fiber.join(second), (Scenarios.T0 + 404) * 1_000)
          assert.strictEqual((yield* Metric.value(CarrierPacingMetrics.late)).count, lateBefore + 1)
          // late every time: five slots given up, then DialerUnavailable naming the setting
          delays.push(30, 30, 30, 30, 30)
          const third = yield* Effect.forkChild(Effect.flip(pacer.acquireSlot("AC_late")))
          for (let i = 0; i < 5; i++) {
            yield* settle([third])
            yield* TestClock.adjust(202)
          }
          const error = yield* Fiber.join(third)
          assert.strictEqual(error._tag, "DialerUnavailable")
          assert.include(error.message, "SVC_CARRIER_START_TOLERANCE_MS")
          assert.strictEqual((yield* Metric.value(CarrierPacingMetrics.late)).count, lateBefore + 6)
        })).pipe(Effect.provide(TestClock.layer()))
      }).pipe(Effect.scoped),
    30_000
  )
})
