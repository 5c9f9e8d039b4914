import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import * as SchedulerConfig from "../../src/runtime/SchedulerConfig.ts"

describe("SchedulerConfig", () => {
  it("parses outcome weights, missing outcomes weighing 0", () => {
    const parsed = SchedulerConfig.parseOutcomes("answered=3, busy=1")
    assert.deepStrictEqual(parsed._tag === "Success" ? parsed.success : undefined, {
      answered: 3,
      busy: 1,
      no_answer: 0,
      failed: 0
    })
  })

  it("rejects unknown outcomes and an all-zero total", () => {
    assert.strictEqual(SchedulerConfig.parseOutcomes("ringing=3")._tag, "Failure")
    assert.strictEqual(SchedulerConfig.parseOutcomes("answered=0")._tag, "Failure")
  })

  it.effect("defaults: a unique worker id, no cron and no metrics port", () =>
    Effect.sync(() => {
      const a = SchedulerConfig.defaults()
      const b = SchedulerConfig.defaults()
      assert.notStrictEqual(a.workerId, b.workerId)
      assert.isTrue(a.backfillCron._tag === "None")
      assert.isTrue(a.metricsPort._tag === "None")
    }))
})

describe("SchedulerConfig SVC_DIALER", () => {
  const loadWith = (env: Record<string, string>) =>
    SchedulerConfig.load.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))))

  it.effect("defaults to the simulated dialer; twilio is accepted", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* loadWith({})).dialerKind, "simulated")
      assert.strictEqual((yield* loadWith({ SVC_DIALER: "twilio" })).dialerKind, "twilio")
    }))

  it.effect("an unknown dialer is an error naming SVC_DIALER", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(loadWith({ SVC_DIALER: "sip" }))
      assert.strictEqual(error._tag, "InvalidSchedulerConfig")
      assert.include(error.message, "SVC_DIALER")
      assert.include(error.message, "\"sip\"")
    }))
})
