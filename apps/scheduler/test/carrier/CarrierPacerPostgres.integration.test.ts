// Carrier pacing shared through PostgreSQL (issue 14, "Carrier pacing"; decision 0610): two workers on two pools
// over one real database keep one account's pace together.
import { assert, describe, it } from "@effect/vitest"
import * as Database from "@svc/store/Database.ts"
import * as DatabaseAdmin from "@svc/store/DatabaseAdmin.ts"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as CarrierPacerPostgres from "../../src/carrier/CarrierPacerPostgres.ts"
import * as CarrierPacingConfig from "../../src/carrier/CarrierPacingConfig.ts"
import * as Scenarios from "./PacingScenarios.ts"
import { freshDatabase, postgresWorker, postgresWorkers } from "./Workers.ts"

const at = (cps: number) => CarrierPacingConfig.defaults({ cps })

describe("carrier pacing in PostgreSQL", () => {
  it.live(
    "four acquirers on two workers at 5 calls/s for 2.4 s: never above the pace, within 5 % of it",
    () =>
      Effect.gen(function*() {
        const workers = yield* postgresWorkers(at(5))
        const { slots } = yield* Scenarios.pacesFourAcquirersOnTwoWorkers(workers, 5, 2_400)
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
        yield* Scenarios.unavailableWhenStoreGone(
          pacer,
          "PostgreSQL",
          Effect.orDie(DatabaseAdmin.dropDatabase(admin, name)),
          6_000
        )
      }).pipe(Effect.scoped),
    30_000
  )
})
