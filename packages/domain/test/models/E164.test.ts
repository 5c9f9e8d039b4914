import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { formatDecodeError } from "../../src/models/DecodeMessage.ts"
import { E164, isE164 } from "../../src/models/E164.ts"

describe("E164", () => {
  it("accepts + followed by 1 to 15 digits, the first 1-9", () => {
    for (const number of ["+1", "+14155550123", "+442071838750", "+123456789012345"]) {
      assert.isTrue(isE164(number), number)
      assert.isTrue(Result.isSuccess(Schema.decodeUnknownResult(E164)(number)), number)
    }
  })

  it("rejects numbers without +, with a leading 0, too long, or with separators", () => {
    for (const number of ["", "+", "14155550123", "+04155550123", "+1234567890123456", "+1 415 555 0123", "555-1234"]) {
      assert.isFalse(isE164(number), number)
    }
  })

  it("names the rule and shows the value", () => {
    const result = Schema.decodeUnknownResult(E164)("555-1234", { reportInput: true })
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) {
      assert.strictEqual(
        formatDecodeError(result.failure, { root: "phone_number" }),
        "phone_number must be an E.164 number like +14155550123 (got \"555-1234\")"
      )
    }
  })
})
