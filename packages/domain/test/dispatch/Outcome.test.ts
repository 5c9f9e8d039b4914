import { assert, describe, it } from "@effect/vitest"
import { failureOf, finishOf } from "../../src/dispatch/Outcome.ts"

describe("Outcome", () => {
  it("answered, busy and no_answer complete the task with the outcome as state_reason (dialer.md rule 6)", () => {
    for (const outcome of ["answered", "busy", "no_answer"] as const) {
      assert.deepStrictEqual(finishOf({ outcome, disconnection_reason: "user_hangup" }), {
        state: "completed",
        reason: outcome
      })
    }
  })

  it("a call placed and failed on the way fails the task with its disconnection reason (dialer.md rule 4)", () => {
    assert.deepStrictEqual(finishOf({ outcome: "failed", disconnection_reason: "error_unknown" }), {
      state: "failed",
      reason: "failed: error_unknown"
    })
    assert.deepStrictEqual(finishOf({ outcome: "failed", disconnection_reason: "dial_failed" }), {
      state: "failed",
      reason: "failed: dial_failed"
    })
  })

  it("a refused dial fails the task with `rejected: <reason>` (dialer.md rule 4)", () => {
    assert.deepStrictEqual(failureOf({ _tag: "DialRejected", reason: "invalid_destination" }), {
      state: "failed",
      reason: "rejected: invalid_destination"
    })
  })

  it("a dial in doubt (DialerUnavailable, a defect) decides nothing: the task becomes unknown (rule 4, 0402)", () => {
    assert.strictEqual(failureOf({ _tag: "DialerUnavailable" }), undefined)
    assert.strictEqual(failureOf(undefined), undefined)
  })
})
