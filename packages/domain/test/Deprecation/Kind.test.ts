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
