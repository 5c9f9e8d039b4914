import { assert, describe, it } from "@effect/vitest"
import { Cause, ConfigProvider, Effect, Schema } from "effect"
import * as Logging from "../src/Logging.ts"
import * as Main from "../src/Main.ts"

class PortTaken extends Schema.TaggedError<PortTaken>()("PortTaken", { message: Schema.String }) {}

describe("Main.describeCause", () => {
  it("uses the message of a failure, a defect or a tagged error", () => {
    assert.strictEqual(
      Main.describeCause(Cause.fail(new Error("PORT 8080 is already in use"))),
      "PORT 8080 is already in use"
    )
    assert.strictEqual(Main.describeCause(Cause.die(new TypeError("boom"))), "boom")
    assert.strictEqual(Main.describeCause(Cause.fail(new PortTaken({ message: "taken" }))), "taken")
    assert.strictEqual(Main.describeCause(Cause.fail("plain")), "plain")
  })
})

describe("Logging.logLevel", () => {
  const read = (env: Record<string, string>) =>
    Logging.logLevel.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))

  it.effect("defaults to Info and reads LOG_LEVEL", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* read({}), "Info")
      assert.strictEqual(yield* read({ LOG_LEVEL: "Debug" }), "Debug")
    }))

  it.effect("rejects an unknown level", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(read({ LOG_LEVEL: "loud" }))
      assert.include(String(error), "LOG_LEVEL")
    }))
})
