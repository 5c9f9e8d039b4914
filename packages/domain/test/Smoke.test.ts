import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"

describe("toolchain", () => {
  it.effect("runs effects", () => Effect.sync(() => assert.strictEqual(1 + 1, 2)))
})
