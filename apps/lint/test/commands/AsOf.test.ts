import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import * as AsOf from "../../src/commands/AsOf.ts"

describe("AsOf", () => {
  it.effect("defaults to today's date in UTC from the Clock", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-07-30T23:59:59Z"))
      assert.deepStrictEqual(yield* AsOf.resolve(Option.none()), {
        date: "2026-07-30",
        at: Date.parse("2026-07-30T00:00:00Z")
      })
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* AsOf.resolve(Option.none())).date, "2026-07-31")
    }))

  it.effect("uses the given date at 00:00 UTC", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* AsOf.resolve(Option.some("2026-09-30"))).at, Date.parse("2026-09-30T00:00:00Z"))
    }))
})
