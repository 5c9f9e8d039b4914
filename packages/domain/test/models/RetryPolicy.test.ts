import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { CreateBatchCallRequest } from "../../src/models/BatchCall.ts"
import { formatDecodeError } from "../../src/models/DecodeMessage.ts"
import { requestParseOptions } from "../../src/models/RequestDecoding.ts"
import { attemptKey, retryReasonOf } from "../../src/models/RetryPolicy.ts"

// create-batch-call's retry_policy (svc extension; issue 15 item 4, decision 0625), decoded as the HTTP edge does
const decode = (retry_policy: unknown) =>
  Schema.decodeUnknownResult(CreateBatchCallRequest)(
    { from_number: "+14157774444", tasks: [{ to_number: "+12137774445" }], retry_policy },
    { ...requestParseOptions, reportInput: true }
  )

const failure = (retry_policy: unknown): string => {
  const result = decode(retry_policy)
  if (Result.isSuccess(result)) return assert.fail("expected a decode failure")
  return formatDecodeError(result.failure)
}

describe("RetryPolicy", () => {
  it("accepts a policy within its bounds; spacing may be left out", () => {
    const full = decode({ max_retries: 10, retry_on: ["no_answer", "busy", "voicemail"], min_spacing_ms: 60_000 })
    assert.isTrue(Result.isSuccess(full))
    const bare = decode({ max_retries: 0, retry_on: ["busy"] })
    assert.isTrue(Result.isSuccess(bare))
    if (Result.isSuccess(bare)) {
      assert.deepStrictEqual(bare.success.retry_policy, { max_retries: 0, retry_on: ["busy"] })
    }
  })

  it("refuses bad members with a message naming the field and the rule", () => {
    const cases: ReadonlyArray<[unknown, string]> = [
      [{ max_retries: 11, retry_on: ["busy"] }, "retry_policy.max_retries"],
      [{ max_retries: -1, retry_on: ["busy"] }, "retry_policy.max_retries"],
      [{ max_retries: 1.5, retry_on: ["busy"] }, "retry_policy.max_retries"],
      [{ retry_on: ["busy"] }, "retry_policy.max_retries"],
      [{ max_retries: 1, retry_on: [] }, "retry_policy.retry_on"],
      [{ max_retries: 1, retry_on: ["answered"] }, "retry_policy.retry_on[0]"],
      [{ max_retries: 1 }, "retry_policy.retry_on"],
      [{ max_retries: 1, retry_on: ["busy"], min_spacing_ms: 59_999 }, "retry_policy.min_spacing_ms"],
      [{ max_retries: 1, retry_on: ["busy"], min_spacing_ms: 7 * 86_400_000 + 1 }, "retry_policy.min_spacing_ms"],
      [{ max_retries: 1, retry_on: ["busy"], min_spacing_ms: "60000" }, "retry_policy.min_spacing_ms"],
      [5, "retry_policy"]
    ]
    for (const [policy, field] of cases) {
      const message = failure(policy)
      assert.include(message, field, message)
    }
    assert.include(failure({ max_retries: 11, retry_on: ["busy"] }), "an integer from 0 to 10")
    assert.include(failure({ max_retries: 1, retry_on: ["answered"] }), "\"no_answer\", \"busy\", \"voicemail\"")
    assert.include(failure({ max_retries: 1, retry_on: ["busy"], min_spacing_ms: 1 }), "an integer from 60000")
  })

  it("refuses an unknown member (decision 0105)", () => {
    const message = failure({ max_retries: 1, retry_on: ["busy"], spacing: 60_000 })
    assert.include(message, "retry_policy.spacing", message)
  })

  it("maps a call's outcome to a retry reason: voicemail by its disconnection reason, busy and no answer", () => {
    assert.strictEqual(retryReasonOf("no_answer", "dial_no_answer"), "no_answer")
    assert.strictEqual(retryReasonOf("busy", "dial_busy"), "busy")
    assert.strictEqual(retryReasonOf("answered", "voicemail_reached"), "voicemail")
    assert.strictEqual(retryReasonOf("answered", "user_hangup"), undefined)
    assert.strictEqual(retryReasonOf("failed", "dial_failed"), undefined)
    assert.strictEqual(retryReasonOf(undefined, undefined), undefined)
  })

  it("keys the first attempt by the task id, as before retries, and later ones by task id and attempt", () => {
    assert.strictEqual(attemptKey("42", 1), "42")
    assert.strictEqual(attemptKey("42", 2), "42:2")
    assert.strictEqual(attemptKey("42", 11), "42:11")
  })
})
