import { assert, describe, it } from "@effect/vitest"
import { parseServerFrame, responseRequired, rules } from "../../src/batchTests/Protocol.ts"

const violation = (text: string): string => {
  const parsed = parseServerFrame(text)
  return parsed.ok ? assert.fail(`expected a violation for ${text}`) : parsed.violation
}

describe("parseServerFrame (custom-llm-protocol.md)", () => {
  it("treats a frame without response_type as a response (doc)", () => {
    const parsed = parseServerFrame(JSON.stringify({ response_id: 1, content: "Hi", content_complete: true }))
    assert.deepStrictEqual(parsed, {
      ok: true,
      frame: {
        kind: "response",
        response_id: 1,
        content: "Hi",
        content_complete: true,
        end_call: false,
        transfer_number: undefined
      }
    })
  })

  it("refuses content_complete sent as the string \"true\", naming the rule", () => {
    const message = violation(
      JSON.stringify({ response_type: "response", response_id: 1, content: "", content_complete: "true" })
    )
    assert.include(message, "content_complete must be a boolean, got \"true\"")
    assert.include(message, rules.contentComplete)
  })

  it("refuses malformed JSON, naming the rule", () => {
    assert.include(violation("{\"response_type\": \"response\""), rules.json)
  })

  it("refuses a tool call whose arguments are not a JSON string", () => {
    const message = violation(
      JSON.stringify({ response_type: "tool_call_invocation", tool_call_id: "t", name: "f", arguments: { a: 1 } })
    )
    assert.include(message, rules.toolCall)
  })

  it("reads the config the server asks for", () => {
    const parsed = parseServerFrame(
      JSON.stringify({ response_type: "config", config: { call_details: true, auto_reconnect: true } })
    )
    assert.deepStrictEqual(parsed, {
      ok: true,
      frame: { kind: "config", config: { auto_reconnect: true, call_details: true, transcript_with_tool_calls: false } }
    })
  })

  it("refuses a negative or fractional response_id", () => {
    assert.include(
      violation(JSON.stringify({ response_id: -1, content: "", content_complete: true })),
      rules.responseId
    )
    assert.include(
      violation(JSON.stringify({ response_id: 1.5, content: "", content_complete: true })),
      rules.responseId
    )
  })
})

describe("responseRequired", () => {
  it("sends transcript_with_tool_calls only when the server asked for it", () => {
    const plain = JSON.parse(responseRequired(2, [{ role: "user", content: "Hi" }], undefined))
    assert.deepStrictEqual(plain, {
      interaction_type: "response_required",
      response_id: 2,
      transcript: [{ role: "user", content: "Hi" }]
    })
    const withTools = JSON.parse(responseRequired(2, [], []))
    assert.deepStrictEqual(withTools.transcript_with_tool_calls, [])
  })
})
