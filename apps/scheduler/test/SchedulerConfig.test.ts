import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as SchedulerConfig from "../src/SchedulerConfig.ts"

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
