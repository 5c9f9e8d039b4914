import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Result, Schema } from "effect"
import { formatDecodeError } from "../../src/models/DecodeMessage.ts"
import { ResponseEngine } from "../../src/models/ResponseEngine.ts"
import { TestCaseBatchJob } from "../../src/models/TestCaseBatchJob.ts"

const decode = (input: unknown) => Schema.decodeUnknownResult(TestCaseBatchJob)(input, { reportInput: true })

const failure = (input: unknown): string => {
  const result = decode(input)
  if (Result.isSuccess(result)) return assert.fail("expected a decode failure")
  return formatDecodeError(result.failure)
}

const sample = {
  test_case_batch_job_id: "tcbj_1",
  status: "in_progress",
  response_engine: { type: "svc-llm", llm_id: "llm_234sdertfsdsfsdf", version: 0 },
  pass_count: 3,
  fail_count: 1,
  error_count: 0,
  total_count: 5,
  creation_timestamp: 1735718400000,
  user_modified_timestamp: 1735718460000
}

describe("ResponseEngine", () => {
  const decodeEngine = (input: unknown) => Schema.decodeUnknownResult(ResponseEngine)(input, { reportInput: true })

  it("decodes the three variants", () => {
    for (
      const engine of [
        { type: "svc-llm", llm_id: "llm_1" },
        { type: "svc-llm", llm_id: "llm_1", version: null },
        { type: "svc-llm", llm_id: "llm_1", version: 3 },
        { type: "custom-llm", llm_websocket_url: "wss://example.com/llm" },
        { type: "conversation-flow", conversation_flow_id: "cf_1" },
        { type: "conversation-flow", conversation_flow_id: "cf_1", version: null }
      ]
    ) {
      const result = decodeEngine(engine)
      assert.isTrue(Result.isSuccess(result), JSON.stringify(engine))
      if (Result.isSuccess(result)) assert.deepStrictEqual<unknown>(result.success, engine)
    }
  })

  it("rejects an unknown type, naming the discriminator", () => {
    const result = decodeEngine({ type: "retell-llm", llm_id: "llm_1" })
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) {
      assert.strictEqual(
        formatDecodeError(result.failure, { root: "response_engine" }),
        "type must be one of \"svc-llm\", \"custom-llm\", \"conversation-flow\" (got \"retell-llm\")"
      )
    }
  })

  it("requires the id of the chosen variant", () => {
    const result = decodeEngine({ type: "conversation-flow", llm_id: "llm_1" })
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) {
      assert.strictEqual(formatDecodeError(result.failure), "conversation_flow_id is required")
    }
  })

  it("drops fields of other variants", () => {
    const result = decodeEngine({ type: "custom-llm", llm_websocket_url: "wss://x", llm_id: "llm_1" })
    assert.isTrue(Result.isSuccess(result))
    if (Result.isSuccess(result)) {
      assert.deepStrictEqual<unknown>(result.success, { type: "custom-llm", llm_websocket_url: "wss://x" })
    }
  })
})

describe("TestCaseBatchJob", () => {
  it("decodes the vendor's sample and encodes it back unchanged", () => {
    const result = decode(sample)
    assert.isTrue(Result.isSuccess(result))
    if (Result.isSuccess(result)) {
      assert.instanceOf(result.success, TestCaseBatchJob)
      assert.deepStrictEqual<unknown>(Schema.encodeSync(TestCaseBatchJob)(result.success), sample)
    }
  })

  it("requires every field", () => {
    for (const key of Object.keys(sample)) {
      const { [key]: _omitted, ...rest } = sample as Record<string, unknown>
      assert.strictEqual(failure(rest), `${key} is required`)
    }
  })

  it("accepts only in_progress and complete", () => {
    assert.isTrue(Result.isSuccess(decode({ ...sample, status: "complete", error_count: 1 })))
    assert.strictEqual(
      failure({ ...sample, status: "done" }),
      "status must be one of \"in_progress\", \"complete\" (got \"done\")"
    )
  })

  it("rejects negative and fractional counts", () => {
    for (const key of ["pass_count", "fail_count", "error_count", "total_count"]) {
      assert.strictEqual(failure({ ...sample, [key]: -1 }), `${key} must be an integer >= 0 (got -1)`)
      assert.strictEqual(failure({ ...sample, [key]: 0.5 }), `${key} must be an integer (got 0.5)`)
    }
  })

  it("rejects results that outnumber the test cases", () => {
    assert.strictEqual(
      failure({ ...sample, pass_count: 5 }),
      "total_count must be at least pass_count + fail_count + error_count (got 5)"
    )
  })

  it("drops unknown fields on decode and never encodes them", () => {
    const result = decode({ ...sample, secret: "x", response_engine: { ...sample.response_engine, extra: 1 } })
    assert.isTrue(Result.isSuccess(result))
    if (Result.isSuccess(result)) {
      assert.deepStrictEqual<unknown>(Schema.encodeSync(TestCaseBatchJob)(result.success), sample)
    }
  })

  const jobs = Arbitrary.map(
    Arbitrary.schema(Schema.Struct(TestCaseBatchJob.fields)),
    (job) => {
      const pass_count = job.pass_count % 1000
      const fail_count = job.fail_count % 1000
      const error_count = job.error_count % 1000
      const total_count = pass_count + fail_count + error_count + (job.total_count % 1000)
      return new TestCaseBatchJob({ ...job, pass_count, fail_count, error_count, total_count })
    }
  )

  it.prop("keeps its wire form through decode and encode", [jobs], ([job]) => {
    const wire = JSON.parse(JSON.stringify(Schema.encodeSync(TestCaseBatchJob)(job)))
    const decoded = Schema.decodeUnknownSync(TestCaseBatchJob)(wire)
    assert.instanceOf(decoded, TestCaseBatchJob)
    assert.deepStrictEqual<unknown>(JSON.parse(JSON.stringify(Schema.encodeSync(TestCaseBatchJob)(decoded))), wire)
  })
})
