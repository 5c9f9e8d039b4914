import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Logger } from "effect"
import { SqlError } from "effect/sql"
import { TestClock } from "effect/testing"
import { DatabaseHealth } from "../../src/runtime/DatabaseHealth.ts"
import * as Retrying from "../../src/runtime/Retrying.ts"

const capture = (lines: Array<string>) => Logger.layer([Logger.make(({ message }) => lines.push(String(message)))])

const connectionLost = new SqlError.SqlError({
  reason: new SqlError.ConnectionError({ cause: new Error("Connection is closed"), message: "PgConnection: closed" })
})

describe("Retrying.forever", () => {
  it.effect("logs a failed round with its cause, waits 1 s, and goes round again", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      let rounds = 0
      const round = Effect.suspend(() => ++rounds === 1 ? Effect.fail("constraint violated") : Effect.sleep(10_000))
      const fiber = yield* round.pipe(
        Retrying.forever("feeding"),
        Effect.provide(DatabaseHealth.layer),
        Effect.provide(capture(lines)),
        Effect.forkChild
      )
      yield* TestClock.adjust(999)
      assert.strictEqual(rounds, 1, "no second round before the pause has passed")
      assert.deepStrictEqual(lines, ["feeding failed; trying again"])
      yield* TestClock.adjust(1)
      assert.strictEqual(rounds, 2)
      yield* TestClock.adjust(10_000)
      assert.strictEqual(rounds, 3, "a round that succeeds is followed by the next one at once")
      yield* Fiber.interrupt(fiber)
    }))

  it.effect("an outage of 20 s is two lines (unavailable, available again), a round a second meanwhile", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      let rounds = 0
      let down = true
      const round = Effect.suspend(() => {
        rounds++
        // a round that reaches the database, then pauses (as the contact feed does when its outbox is empty)
        return down ? Effect.die(connectionLost) : Effect.sleep(500)
      })
      const fiber = yield* round.pipe(
        Retrying.forever("feeding"),
        Effect.provide(DatabaseHealth.layer),
        Effect.provide(capture(lines)),
        Effect.forkChild
      )
      for (let s = 0; s < 20; s++) yield* TestClock.adjust(1_000)
      assert.strictEqual(rounds, 21, "one round a second: no spinning")
      assert.deepStrictEqual(lines, ["database unavailable"])
      down = false
      // the next round starts at 21 s and gets through at 21.5 s
      yield* TestClock.adjust(1_000)
      assert.deepStrictEqual(lines, ["database unavailable"])
      // through at 21.5 s: the outage's first success; the rounds after it (at once, each 500 ms) confirm it at
      // 22.5 s (DatabaseHealth.CONFIRM_MS), and the line counts to the first
      yield* TestClock.adjust(500)
      assert.deepStrictEqual(lines, ["database unavailable"])
      yield* TestClock.adjust(1_000)
      assert.deepStrictEqual(lines, ["database unavailable", "database available again after 21.5 s"])
      yield* TestClock.adjust(60_000)
      assert.strictEqual(lines.length, 2)
      yield* Fiber.interrupt(fiber)
    }))
})

describe("Retrying.untilDone", () => {
  it.effect("tries a round again every second until it goes through, and returns its value", () =>
    Effect.gen(function*() {
      let attempts = 0
      const fiber = yield* Effect.suspend(() => ++attempts < 4 ? Effect.die(connectionLost) : Effect.succeed("ran"))
        .pipe(
          Retrying.untilDone("cron tick"),
          Effect.provide(DatabaseHealth.layer),
          Effect.provide(capture([])),
          Effect.forkChild
        )
      yield* TestClock.adjust(2_999)
      assert.strictEqual(attempts, 3)
      yield* TestClock.adjust(1)
      assert.strictEqual(yield* Fiber.join(fiber), "ran")
    }))
})
