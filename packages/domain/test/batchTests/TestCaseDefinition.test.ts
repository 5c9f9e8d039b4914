import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import {
  CreateTestCaseDefinitionRequest,
  LlmModel,
  mergeUpdate,
  normalize,
  TestCaseDefinition
} from "../../src/batchTests/TestCaseDefinition.ts"
import { formatDecodeError } from "../../src/models/DecodeMessage.ts"
import { requestParseOptions } from "../../src/models/RequestDecoding.ts"

// as the HTTP edge decodes a body
const decode = (body: unknown) =>
  Schema.decodeUnknownResult(CreateTestCaseDefinitionRequest)(body, { ...requestParseOptions, reportInput: true })

const failure = (body: unknown): string => {
  const result = decode(body)
  if (Result.isSuccess(result)) return assert.fail("expected a decode failure")
  return formatDecodeError(result.failure, { input: body })
}

const engine = { type: "custom-llm", llm_websocket_url: "ws://127.0.0.1:8080/llm" }
const scripted = {
  type: "scripted",
  name: "refund",
  response_engine: engine,
  user_turns: ["Hi", "I want a refund"],
  assertions: [
    { type: "contains", value: "refund", turn: 2 },
    { type: "not_contains", value: "sorry" },
    { type: "regex", value: "order #\\d+" },
    { type: "tool_called", name: "lookup_order", arguments: { order_id: "42" } },
    { type: "ends_call" },
    { type: "max_latency_ms", value: 800 }
  ]
}

describe("CreateTestCaseDefinitionRequest", () => {
  it("accepts a scripted definition with each assertion kind of issue 32", () => {
    const result = decode(scripted)
    assert.isTrue(Result.isSuccess(result), Result.isFailure(result) ? formatDecodeError(result.failure) : "")
  })

  it("accepts the vendor's simulation shape without a type (the vendor SDK sends none)", () => {
    const body = {
      name: "sim",
      response_engine: { type: "svc-llm", llm_id: "llm_1" },
      user_prompt: "You are a caller",
      metrics: ["polite"]
    }
    const result = decode(body)
    assert.isTrue(Result.isSuccess(result))
    if (Result.isSuccess(result)) {
      const stored = normalize(result.success)
      assert.strictEqual(stored.type, "simulation")
      assert.strictEqual(stored.llm_model, "gpt-4.1")
      assert.deepStrictEqual(stored.dynamic_variables, {})
    }
  })

  it("names the field and rule of a regex that does not compile", () => {
    const message = failure({ ...scripted, assertions: [{ type: "regex", value: "(" }] })
    assert.match(message, /^assertions\[0\]\.value must be a valid JavaScript regular expression/)
  })

  it("refuses a turn past the script", () => {
    const message = failure({ ...scripted, assertions: [{ type: "contains", value: "x", turn: 3 }] })
    assert.match(message, /^assertions\[0\]\.turn must be at most 2/)
  })

  it("refuses a script with no user turn", () => {
    assert.match(failure({ ...scripted, user_turns: [] }), /^user_turns must be at least one user turn/)
  })

  it("refuses an unknown assertion type, naming the allowed ones", () => {
    const message = failure({ ...scripted, assertions: [{ type: "equals", value: "x" }] })
    assert.match(message, /^assertions\[0\]\.type must be one of/)
    assert.include(message, "\"max_latency_ms\"")
  })

  it("refuses a non-WebSocket URL for a custom LLM", () => {
    const message = failure({ ...scripted, response_engine: { type: "custom-llm", llm_websocket_url: "http://x" } })
    assert.match(message, /^response_engine\.llm_websocket_url must be a ws:\/\/ or wss:\/\/ URL/)
  })

  it("refuses a field the schema does not define", () => {
    assert.match(failure({ ...scripted, asserts: [] }), /asserts is not a known field/)
  })
})

describe("mergeUpdate", () => {
  it("overlays an update and keeps the kind's invariants through a second decode", () => {
    const created = Schema.decodeUnknownSync(CreateTestCaseDefinitionRequest)(scripted)
    const current = Schema.decodeUnknownSync(TestCaseDefinition)({
      ...normalize(created),
      test_case_definition_id: "tcd_1",
      creation_timestamp: 1,
      user_modified_timestamp: 1
    })
    const merged = mergeUpdate(current, { user_turns: ["only one"] })
    const result = decode(merged)
    // the stored assertion on turn 2 no longer fits a one-turn script
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) {
      assert.match(formatDecodeError(result.failure), /assertions\[0\]\.turn must be at most 1/)
    }
  })
})

describe("LlmModel", () => {
  // reference: vendor-calls-facts.md §4, "llm_model values", as it lists them (the OpenAPI enum's order)
  const vendorValues = (
    "gpt-4.1, gpt-4.1-mini, gpt-4.1-nano, gpt-5, gpt-5-mini, gpt-5-nano, gpt-5.1, gpt-5.2, gpt-5.4, gpt-5.4-mini, " +
    "gpt-5.4-nano, gpt-5.5, gpt-5.6-terra, gpt-5.6-luna, claude-4.5-sonnet, claude-4.6-sonnet, claude-5-sonnet, " +
    "claude-4.5-haiku, gemini-3.0-flash, gemini-3.1-flash-lite, gemini-3.5-flash, gemini-3.5-flash-lite, " +
    "gemini-3.6-flash"
  ).split(", ")

  it("accepts exactly the vendor's llm_model values", () => {
    assert.deepStrictEqual(LlmModel.literals, vendorValues)
    for (const model of vendorValues) assert.isTrue(Result.isSuccess(decode({ ...scripted, llm_model: model })))
    assert.isTrue(Result.isFailure(decode({ ...scripted, llm_model: "gpt-4o" })))
  })
})
