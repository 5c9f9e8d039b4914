import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import * as RetentionConfig from "../../src/retention/RetentionConfig.ts"

const load = (env: Record<string, string>) =>
  RetentionConfig.load.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env))))

// the rules are the ("default: keep everything") and docs/operations.md's table of SVC_RETENTION_*
describe("RetentionConfig", () => {
  it.effect("unset: every call is kept; months two ahead, a round an hour", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* load({}), {
        callsMs: undefined,
        aheadMonths: 2,
        everyMs: 3_600_000,
        lockTimeoutMs: 2_000
      })
    }))

  it.effect("SVC_RETENTION_CALLS_DAYS is days, whole or not", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* load({ SVC_RETENTION_CALLS_DAYS: "90" })).callsMs, 90 * 86_400_000)
      assert.strictEqual((yield* load({ SVC_RETENTION_CALLS_DAYS: "1.5" })).callsMs, 1.5 * 86_400_000)
      assert.strictEqual((yield* load({ SVC_RETENTION_EVERY_MINUTES: "5" })).everyMs, 300_000)
      assert.strictEqual((yield* load({ SVC_RETENTION_AHEAD_MONTHS: "6" })).aheadMonths, 6)
    }))

  it.effect("a retention under a day, no month ahead or a round interval out of range fails, naming the variable", () =>
    Effect.gen(function*() {
      for (
        const [env, name] of [
          [{ SVC_RETENTION_CALLS_DAYS: "0" }, "SVC_RETENTION_CALLS_DAYS"],
          [{ SVC_RETENTION_CALLS_DAYS: "0.5" }, "SVC_RETENTION_CALLS_DAYS"],
          [{ SVC_RETENTION_CALLS_DAYS: "-3" }, "SVC_RETENTION_CALLS_DAYS"],
          [{ SVC_RETENTION_AHEAD_MONTHS: "0" }, "SVC_RETENTION_AHEAD_MONTHS"],
          [{ SVC_RETENTION_EVERY_MINUTES: "0" }, "SVC_RETENTION_EVERY_MINUTES"],
          [{ SVC_RETENTION_EVERY_MINUTES: "2000" }, "SVC_RETENTION_EVERY_MINUTES"]
        ] as const
      ) {
        const error = yield* Effect.flip(load(env))
        assert.strictEqual(error._tag, "InvalidRetentionConfig", JSON.stringify(env))
        assert.include(error.message, name)
      }
      // not a number at all: the config error names the variable
      const garbled = yield* Effect.flip(load({ SVC_RETENTION_CALLS_DAYS: "ninety" }))
      assert.include(String(garbled), "SVC_RETENTION_CALLS_DAYS")
    }))
})
