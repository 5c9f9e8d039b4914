// Which store paces (decision 0610): Redis when REDIS_URL is set, else PostgreSQL; a bad setting stops start-up.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Database from "@svc/store/db/Database.ts"
import { ConfigProvider, Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import type { ChildProcess } from "node:child_process"
import { execFileSync } from "node:child_process"
import { CarrierPacer } from "../../../src/carriers/pacing/CarrierPacer.ts"
import * as CarrierPacerLive from "../../../src/carriers/pacing/CarrierPacerLive.ts"
import { freshDatabase, startRedis, stopRedis } from "./Workers.ts"

let redis: ChildProcess
let url: string

/** 2026-01-01T00:00:00Z */
const T0 = 1_767_225_600_000

beforeAll(async () => {
  const started = await startRedis()
  redis = started.process
  url = started.url
})
afterAll(() => stopRedis(redis))

/** The pacer from `env`, over a fresh database; runs `f` with it and the database. */
const withPacer = <A, E>(env: Record<string, string>, f: Effect.Effect<A, E, CarrierPacer | SqlClient.SqlClient>) =>
  Effect.gen(function*() {
    const { url: databaseUrl } = yield* freshDatabase
    const database = Database.layerFromUrl(databaseUrl, { migrate: false, maxConnections: 2 })
    return yield* f.pipe(
      Effect.provide(CarrierPacerLive.layerFromEnv.pipe(Layer.provideMerge(database))),
      Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env)))
    )
  }).pipe(Effect.scoped)

const redisField = (key: string, field: string) =>
  execFileSync("/usr/bin/redis-cli", ["-u", url, "HGET", key, field], { encoding: "utf8" }).trim()

describe("CarrierPacerLive", () => {
  it.live("without REDIS_URL: the slots are kept in PostgreSQL", () =>
    withPacer(
      { SVC_CARRIER_CPS: "2" },
      Effect.gen(function*() {
        const pacer = yield* CarrierPacer
        // the acquire on a TestClock: the pacer passes its Clock's time to the store (decision 0610), so the row
        // can be checked to the microsecond instead of against the database's clock with slack for the machine
        yield* Effect.gen(function*() {
          yield* TestClock.setTime(T0)
          yield* pacer.acquire("AC_pg")
        }).pipe(Effect.provide(TestClock.layer()))
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ account: string; next_at: string }>`SELECT account, next_at::text FROM carrier_pacing`
        assert.deepStrictEqual(rows.map((r) => r.account), ["AC_pg"])
        // the next slot is one interval (500 ms at 2/s) after the acquire's
        assert.strictEqual(rows[0]!.next_at, String(T0 * 1_000 + 500_000))
        assert.strictEqual(redisField("svc:carrier-pacing:AC_pg", "next_at"), "")
      })
    ), 30_000)

  it.live("with REDIS_URL: the slots are kept in Redis, and nothing in PostgreSQL", () =>
    withPacer(
      { SVC_CARRIER_CPS: "2", REDIS_URL: url },
      Effect.gen(function*() {
        const pacer = yield* CarrierPacer
        yield* pacer.acquire("AC_redis")
        yield* pacer.backoff("AC_redis", 10_000)
        const sql = yield* SqlClient.SqlClient
        assert.deepStrictEqual(yield* sql`SELECT account FROM carrier_pacing`, [])
        assert.match(redisField("svc:carrier-pacing:AC_redis", "next_at"), /^\d{16}$/)
        assert.match(redisField("svc:carrier-pacing:AC_redis", "paused_until"), /^\d{16}$/)
      })
    ), 30_000)

  it.live("a bad SVC_CARRIER_CPS stops start-up with the variable named", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        withPacer({ SVC_CARRIER_CPS: "-3" }, Effect.asVoid(Effect.flatMap(CarrierPacer, (p) => p.acquire("AC_start"))))
      )
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(exit), "SVC_CARRIER_CPS must be a positive number")
    }), 30_000)

  it.live("a REDIS_URL nobody answers stops start-up (no silent fallback to PostgreSQL)", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        withPacer(
          { REDIS_URL: "redis://127.0.0.1:1" },
          Effect.asVoid(Effect.flatMap(CarrierPacer, (p) => p.acquire("AC_start")))
        ).pipe(Effect.timeout("10 seconds"))
      )
      assert.isTrue(Exit.isFailure(exit))
      assert.notInclude(String(exit), "TimeoutError")
    }), 30_000)
})
