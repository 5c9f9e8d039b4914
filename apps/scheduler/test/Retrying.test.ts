import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Logger } from "effect"
import { TestClock } from "effect/testing"
import * as Retrying from "../src/Retrying.ts"

describe("Retrying.forever", () => {
  it.effect("logs a failed round with its cause, waits 1 s, and goes round again", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      let rounds = 0
      const round = Effect.suspend(() => ++rounds === 1 ? Effect.fail("connection lost") : Effect.sleep(10_000))
      const fiber = yield* round.pipe(
        Retrying.forever("feeding"),
        Effect.provide(Logger.layer([Logger.make(({ message }) => lines.push(String(message)))])),
        Effect.forkChild
      )
      yield* TestClock.adjust(999)
      assert.strictEqual(rounds, 1, "no second round before the pause has passed")
      assert.deepStrictEqual(lines, ["feeding failed; trying again in 1 s"])
      yield* TestClock.adjust(1)
      assert.strictEqual(rounds, 2)
      yield* TestClock.adjust(10_000)
      assert.strictEqual(rounds, 3, "a round that succeeds is followed by the next one at once")
      yield* Fiber.interrupt(fiber)
    }))
})
