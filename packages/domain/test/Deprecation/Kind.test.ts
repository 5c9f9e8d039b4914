import { assert, describe, it } from "@effect/vitest"
import { detectKind } from "../../src/Deprecation/Kind.ts"

describe("detectKind", () => {
  it("recognises each config kind from its content", () => {
    const cases: ReadonlyArray<readonly [unknown, string | undefined]> = [
      [{ agent_id: "a", voice_id: "v" }, "agent"],
      [{ response_engine: { type: "svc-llm", llm_id: "l" }, voice_id: "v" }, "agent"],
      [{ llm_id: "l", model: "gpt-4.1" }, "llm"],
      [{ general_prompt: "x", general_tools: [] }, "llm"],
      [{ model: "gpt-4.1", begin_message: "Hi" }, "llm"],
      [{ conversation_flow_id: "f", nodes: [] }, "conversation-flow"],
      [
        { model_choice: { type: "cascading", model: "gpt-4.1" }, start_speaker: "agent", nodes: [] },
        "conversation-flow"
      ],
      [{ conversation_flow_component_id: "c", nodes: [] }, "flow-component"],
      [{ name: "c", nodes: [] }, "flow-component"],
      [{ phone_number: "+14155550100", inbound_agents: [] }, "phone-number"],
      [{ phone_number: "+14155550100", inbound_agent_id: "a" }, "phone-number"],
      [{ phone_number: "+14155550100", nickname: "main" }, "phone-number"],
      [{ type: "transfer_call", name: "t", transfer_destination: {} }, "tool"],
      [{ type: "check_availability_cal", name: "c" }, "tool"],
      [{ contact_id: "c", phone_number: "+14155550100" }, undefined],
      [{ type: "cold_transfer" }, undefined],
      [[], undefined],
      ["multi", undefined],
      [null, undefined]
    ]
    for (const [json, kind] of cases) assert.strictEqual(detectKind(json), kind, JSON.stringify(json))
  })
})

// Found unpinned by mutation testing (issue 28 item 1). Expectations: Kind.ts's documented order (ids first, then
// keys only one kind carries) and reference/vendor-api-facts.md §4 (an update body carries only what it changes;
// an LLM's `model` is a string at its top level, a flow's `model_choice` is `{type: "cascading", model}`).
describe("detectKind, each clue alone", () => {
  it("knows a document by its id alone", () => {
    assert.strictEqual(detectKind({ conversation_flow_component_id: "c", name: "greeting" }), "flow-component")
    assert.strictEqual(detectKind({ conversation_flow_id: "f", version: 2 }), "conversation-flow")
    assert.strictEqual(detectKind({ llm_id: "l", model_temperature: 0 }), "llm")
    assert.strictEqual(detectKind({ agent_id: "a", language: "multi" }), "agent")
  })

  it("knows a phone-number update by its agent bindings, without the number itself", () => {
    assert.strictEqual(detectKind({ inbound_agent_id: "a" }), "phone-number")
    assert.strictEqual(detectKind({ outbound_sms_agents: [{ agent_id: "a", weight: 1 }] }), "phone-number")
  })

  it("knows an LLM by a top-level model string, but not a model choice that has a type", () => {
    assert.strictEqual(detectKind({ model: "gpt-4o" }), "llm")
    assert.strictEqual(detectKind({ type: "cascading", model: "gpt-4.1" }), undefined)
    assert.strictEqual(detectKind({ model: 4 }), undefined)
  })
})
