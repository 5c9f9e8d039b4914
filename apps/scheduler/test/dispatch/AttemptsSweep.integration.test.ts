// The dispatcher's sweep of attempt records (decision 0624): the caps count a number's claims over a rolling 24 h,
// and the claim drops a number's older records only when it dials that number again; the records of numbers never
// dialled again are deleted by the worker's maintenance, at its first pass and then hourly.
import { assert, describe, it } from "@effect/vitest"
import { ATTEMPTS_KEPT_MS } from "@svc/store/dispatch/DispatchRepo.ts"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as SimulatedDialer from "../../src/carriers/simulated/SimulatedDialer.ts"
import { ATTEMPTS_SWEEP_EVERY_MS, Dispatcher } from "../../src/dispatch/Dispatcher.ts"
import * as SchedulerConfig from "../../src/runtime/SchedulerConfig.ts"
import { dialerSettings, isolated, seedOrg } from "../fixtures/Fixtures.ts"

const scenario = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const dispatcher = yield* Dispatcher.make(SchedulerConfig.defaults())
    return yield* body.pipe(Effect.provideService(Dispatcher, dispatcher))
  }).pipe(Effect.provide(SimulatedDialer.layerMemory(dialerSettings())), isolated)

describe("the dispatcher's sweep of attempt records", () => {
  it.live("deletes records past the caps' window at its first pass, then at most hourly", () =>
    scenario(Effect.gen(function*() {
      const t0 = Date.UTC(2026, 11, 1, 15, 0)
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg()
      let task = 0
      const attemptAt = (at: number) =>
        sql`INSERT INTO number_attempts (org_id, to_number, attempted_at, task_id)
            VALUES (${orgId}, '+13055550100', ${at}, ${++task})`
      const left = Effect.map(
        sql<{ attempted_at: number }>`
          SELECT attempted_at::float8 AS attempted_at FROM number_attempts WHERE org_id = ${orgId} ORDER BY 1`,
        (rows) => rows.map((r) => r.attempted_at)
      )
      const passAt = (at: number) =>
        Effect.gen(function*() {
          yield* TestClock.setTime(at)
          yield* (yield* Dispatcher).tick
        })

      yield* attemptAt(t0 - ATTEMPTS_KEPT_MS - 1)
      yield* attemptAt(t0 - 3_600_000)
      yield* passAt(t0)
      assert.deepStrictEqual(yield* left, [t0 - 3_600_000])

      // another record falls out of the window: not swept by passes within the hour, swept by the first after it
      const expired = t0 + 10 * 60_000 - ATTEMPTS_KEPT_MS - 1
      yield* attemptAt(expired)
      yield* passAt(t0 + 10 * 60_000)
      yield* passAt(t0 + ATTEMPTS_SWEEP_EVERY_MS - 5_000)
      assert.deepStrictEqual(yield* left, [expired, t0 - 3_600_000])
      yield* passAt(t0 + ATTEMPTS_SWEEP_EVERY_MS)
      assert.deepStrictEqual(yield* left, [t0 - 3_600_000])
    })))
})
