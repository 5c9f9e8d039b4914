import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Result, Schema } from "effect"
import { formatDecodeError } from "../../src/models/DecodeMessage.ts"
import { ConversationFlowId, LlmId } from "../../src/models/Ids.ts"
import { ListBatchTestsQuery, ListBatchTestsResponse } from "../../src/models/ListBatchTests.ts"
import { requestParseOptions } from "../../src/models/RequestDecoding.ts"

// as the HTTP edge decodes it
const decode = (query: Record<string, string>) =>
  Schema.decodeUnknownResult(ListBatchTestsQuery)(query, { ...requestParseOptions, reportInput: true })

const decoded = (query: Record<string, string>): ListBatchTestsQuery => {
  const result = decode(query)
  if (Result.isFailure(result)) {
    return assert.fail(formatDecodeError(result.failure, { root: "query", parameters: "query" }))
  }
  return result.success
}

const failure = (query: Record<string, string>): string => {
  const result = decode(query)
  if (Result.isSuccess(result)) return assert.fail("expected a decode failure")
  return formatDecodeError(result.failure, { root: "query", parameters: "query" })
}

describe("ListBatchTestsQuery", () => {
  it("decodes an svc-llm query from strings, defaulting limit to 50", () => {
    const query = decoded({ type: "svc-llm", llm_id: "llm_1" })
    assert.instanceOf(query, ListBatchTestsQuery)
    assert.strictEqual(query.type, "svc-llm")
    assert.strictEqual(query.llm_id, "llm_1")
    assert.strictEqual(query.limit, 50)
    assert.isUndefined(query.version)
  })

  it("parses version and limit from decimal strings", () => {
    const query = decoded({ type: "conversation-flow", conversation_flow_id: "cf_1", version: "2", limit: "1000" })
    assert.strictEqual(query.version, 2)
    assert.strictEqual(query.limit, 1000)
    assert.strictEqual(decoded({ type: "svc-llm", llm_id: "l", version: "0", limit: "1" }).limit, 1)
  })

  it("treats empty values as absent", () => {
    const query = decoded({ type: "svc-llm", llm_id: "llm_1", version: "", limit: "", pagination_key: "" })
    assert.isUndefined(query.version)
    assert.strictEqual(query.limit, 50)
    assert.isUndefined(query.pagination_key)
    assert.strictEqual(
      failure({ type: "svc-llm", llm_id: "" }),
      "query parameter llm_id is required when type is svc-llm"
    )
  })

  it("requires type, and only svc-llm or conversation-flow", () => {
    assert.strictEqual(failure({ llm_id: "llm_1" }), "query parameter type is required")
    assert.strictEqual(
      failure({ type: "custom-llm" }),
      "query parameter type must be one of \"svc-llm\", \"conversation-flow\" (got \"custom-llm\")"
    )
    assert.strictEqual(
      failure({ type: "retell-llm", llm_id: "x" }),
      "query parameter type must be one of \"svc-llm\", \"conversation-flow\" (got \"retell-llm\")"
    )
  })

  it("refuses a parameter it does not define, naming it (decision 0105)", () => {
    assert.strictEqual(
      failure({ type: "svc-llm", llm_id: "llm_1", sort_order: "asc" }),
      "query parameter sort_order is not a known parameter of this endpoint (got \"asc\")"
    )
  })

  it("bounds ids at 255 characters and pagination_key at 1024 (decision 0105)", () => {
    assert.strictEqual(decoded({ type: "svc-llm", llm_id: "l".repeat(255) }).llm_id?.length, 255)
    assert.include(
      failure({ type: "svc-llm", llm_id: "l".repeat(256) }),
      "query parameter llm_id must be at most 255 characters long"
    )
    assert.include(
      failure({ type: "conversation-flow", conversation_flow_id: "c".repeat(256) }),
      "query parameter conversation_flow_id must be at most 255 characters long"
    )
    assert.include(
      failure({ type: "svc-llm", llm_id: "l", pagination_key: "k".repeat(1025) }),
      "query parameter pagination_key must be a pagination_key from a previous response (at most 1024 characters)"
    )
  })

  it("requires the id that matches the type", () => {
    assert.strictEqual(failure({ type: "svc-llm" }), "query parameter llm_id is required when type is svc-llm")
    assert.strictEqual(
      failure({ type: "conversation-flow", llm_id: "llm_1" }),
      "query parameter conversation_flow_id is required when type is conversation-flow"
    )
  })

  it("accepts limit from 1 to 1000", () => {
    assert.strictEqual(
      failure({ type: "svc-llm", llm_id: "l", limit: "0" }),
      "query parameter limit must be an integer from 1 to 1000 (got 0)"
    )
    assert.strictEqual(
      failure({ type: "svc-llm", llm_id: "l", limit: "1001" }),
      "query parameter limit must be an integer from 1 to 1000 (got 1001)"
    )
    assert.strictEqual(
      failure({ type: "svc-llm", llm_id: "l", limit: "ten" }),
      "query parameter limit must be a whole number written in digits (got \"ten\")"
    )
    assert.strictEqual(
      failure({ type: "svc-llm", llm_id: "l", limit: "-5" }),
      "query parameter limit must be a whole number written in digits (got \"-5\")"
    )
  })

  it("requires version to be a whole number", () => {
    assert.strictEqual(
      failure({ type: "svc-llm", llm_id: "l", version: "1.5" }),
      "query parameter version must be a whole number written in digits (got \"1.5\")"
    )
    assert.strictEqual(
      failure({ type: "svc-llm", llm_id: "l", version: "latest" }),
      "query parameter version must be a whole number written in digits (got \"latest\")"
    )
  })

  it("encodes back to strings", () => {
    const query = decoded({ type: "svc-llm", llm_id: "llm_1", version: "3" })
    assert.deepStrictEqual<unknown>(Schema.encodeSync(ListBatchTestsQuery)(query), {
      type: "svc-llm",
      llm_id: "llm_1",
      version: "3",
      limit: "50"
    })
  })

  // Generated without the cross-field rule (which would discard most candidates), then completed to satisfy it.
  const queries = Arbitrary.map(
    Arbitrary.schema(Schema.Struct(ListBatchTestsQuery.fields)),
    (fields) =>
      new ListBatchTestsQuery(
        fields.type === "svc-llm"
          ? { ...fields, llm_id: fields.llm_id ?? LlmId.make("llm_1") }
          : { ...fields, conversation_flow_id: fields.conversation_flow_id ?? ConversationFlowId.make("cf_1") }
      )
  )

  it.prop("keeps its wire form through decode and encode", [queries], ([query]) => {
    const wire = Schema.encodeSync(ListBatchTestsQuery)(query)
    assert.deepStrictEqual<unknown>(
      Schema.encodeSync(ListBatchTestsQuery)(Schema.decodeUnknownSync(ListBatchTestsQuery)(wire)),
      wire
    )
  })
})

describe("ListBatchTestsResponse", () => {
  it("round-trips a page of jobs", () => {
    const page = {
      has_more: true,
      items: [
        {
          test_case_batch_job_id: "tcbj_1",
          status: "complete",
          response_engine: { type: "conversation-flow", conversation_flow_id: "cf_1", version: 2 },
          pass_count: 1,
          fail_count: 1,
          error_count: 0,
          total_count: 2,
          creation_timestamp: 1,
          user_modified_timestamp: 2
        }
      ],
      pagination_key: "next"
    }
    const decodedPage = Schema.decodeUnknownSync(ListBatchTestsResponse)(page)
    assert.deepStrictEqual<unknown>(Schema.encodeSync(ListBatchTestsResponse)(decodedPage), page)
  })
})
