import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { formatDecodeError } from "../../src/models/DecodeMessage.ts"
import { AgentId, ContactId, IdText, maxIdLength, TestCaseBatchJobId } from "../../src/models/Ids.ts"

const failure = (schema: Schema.Decoder<unknown>, input: unknown): string => {
  const result = Schema.decodeUnknownResult(schema)(input, { reportInput: true })
  if (Result.isSuccess(result)) return assert.fail("expected a decode failure")
  return formatDecodeError(result.failure, { root: "id" })
}

describe("ids", () => {
  it("are 1 to 255 characters, counted as the caller wrote them (decision 0105)", () => {
    assert.strictEqual(maxIdLength, 255)
    for (const schema of [IdText, ContactId, TestCaseBatchJobId, AgentId]) {
      assert.isTrue(Result.isSuccess(Schema.decodeUnknownResult(schema)("x".repeat(255))))
      assert.isTrue(Result.isSuccess(Schema.decodeUnknownResult(schema)("é".repeat(255))))
      assert.strictEqual(failure(schema, ""), "id must be a non-empty string (got \"\")")
      assert.include(failure(schema, "x".repeat(256)), "id must be at most 255 characters long")
    }
  })
})
