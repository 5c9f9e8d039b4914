import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { applyAll, fixText } from "../../src/documents/Fixer.ts"
import { lintIn, project, summary } from "../support/Harness.ts"

const AS_OF = "2026-11-01"

/** Fixes every file under a project, returns the new texts and what lint says afterwards. */
const fixProject = (files: Record<string, string>) => {
  const dir = project(files)
  const before = lintIn(dir, AS_OF).problems
  const result = applyAll(dir, before, { write: true })
  const texts = Object.fromEntries(Object.keys(files).map((f) => [f, fs.readFileSync(path.join(dir, f), "utf8")]))
  const after = lintIn(dir, AS_OF).problems
  const again = applyAll(dir, after, { write: true })
  return { dir, before, result, texts, after, again }
}

describe("Fixer", () => {
  it("moves analysis prompts into presets in JSON, keeping key order, 4-space indentation and compact arrays", () => {
    const source = [
      "{",
      "    \"agent_id\": \"agent_1\",",
      "    \"analysis_summary_prompt\": \"Summarise the call.\",",
      "    \"boosted_keywords\": [\"Acme\", \"booking\"],",
      "    \"post_call_analysis_data\": [",
      "        { \"type\": \"string\", \"name\": \"customer_name\", \"description\": \"Name\" }",
      "    ],",
      "    \"voice_id\": \"11labs-Adrian\"",
      "}",
      ""
    ].join("\n")
    const { after, again, result, texts } = fixProject({ "agent.json": source })
    assert.deepStrictEqual(result.files, ["agent.json"])
    assert.strictEqual(
      texts["agent.json"],
      [
        "{",
        "    \"agent_id\": \"agent_1\",",
        "    \"boosted_keywords\": [\"Acme\", \"booking\"],",
        "    \"post_call_analysis_data\": [",
        "        {",
        "            \"type\": \"string\",",
        "            \"name\": \"customer_name\",",
        "            \"description\": \"Name\"",
        "        },",
        "        {",
        "            \"type\": \"system-presets\",",
        "            \"name\": \"call_summary\",",
        "            \"description\": \"Summarise the call.\"",
        "        }",
        "    ],",
        "    \"voice_id\": \"11labs-Adrian\"",
        "}",
        ""
      ].join("\n")
    )
    assert.deepStrictEqual(after, [])
    assert.deepStrictEqual(again.files, [])
  })

  it("moves phone-number single-agent fields into weighted lists in YAML, keeping comments", () => {
    const source = [
      "# Main line (owned by the front-desk team)",
      "phone_number: \"+14155550100\"",
      "phone_number_type: retell-twilio",
      "inbound_agent_id: agent_front   # old binding",
      "inbound_agent_version: 3",
      "outbound_agents:",
      "- agent_id: agent_sales",
      "  weight: 1",
      "nickname: 'Main line'   # shown in the dashboard",
      ""
    ].join("\n")
    const { after, again, texts } = fixProject({ "phone.yaml": source })
    assert.strictEqual(
      texts["phone.yaml"],
      [
        "# Main line (owned by the front-desk team)",
        "phone_number: \"+14155550100\"",
        "phone_number_type: retell-twilio",
        "outbound_agents:",
        "- agent_id: agent_sales",
        "  weight: 1",
        "nickname: 'Main line'   # shown in the dashboard",
        "inbound_agents:",
        "- agent_id: agent_front",
        "  agent_version: 3",
        "  weight: 1",
        ""
      ].join("\n")
    )
    assert.deepStrictEqual(after, [])
    assert.deepStrictEqual(again.files, [])
  })

  it("turns a conversation node with tools into a subagent node, keeping the rest of the flow", () => {
    const source = [
      "conversation_flow_id: flow_1",
      "start_speaker: agent",
      "nodes:",
      "  # greets, then looks the caller up",
      "  - id: greet",
      "    type: conversation   # was a plain node",
      "    tools:",
      "      - { type: custom, name: lookup }",
      "  - id: done",
      "    type: end",
      "    tools: []",
      ""
    ].join("\n")
    const { after, texts } = fixProject({ "flow.yaml": source })
    assert.strictEqual(texts["flow.yaml"], source.replace("type: conversation   #", "type: subagent   #"))
    assert.deepStrictEqual(after, [])
  })

  it("removes empty tool lists from a conversation node in JSON", () => {
    const source =
      "{\n  \"conversation_flow_id\": \"f\",\n  \"nodes\": [\n    {\n      \"id\": \"a\",\n      \"type\": \"conversation\",\n      \"tool_ids\": [],\n      \"name\": \"A\"\n    }\n  ]\n}\n"
    const { texts } = fixProject({ "flow.json": source })
    assert.strictEqual(texts["flow.json"], source.replace("      \"tool_ids\": [],\n", ""))
  })

  it("sets cold_transfer_mode in a one-line JSON object and drops the flag under sip_refer in YAML", () => {
    const json =
      "{\n  \"llm_id\": \"l\",\n  \"general_tools\": [\n    { \"type\": \"transfer_call\", \"transfer_option\": { \"type\": \"cold_transfer\", \"show_transferee_as_caller\": true } }\n  ]\n}\n"
    const yaml = [
      "llm_id: l",
      "general_tools:",
      "  - type: transfer_call",
      "    transfer_option:",
      "      show_transferee_as_caller: false",
      "      type: cold_transfer",
      "  - transfer_option: {type: cold_transfer, show_transferee_as_caller: false}",
      "    type: transfer_call",
      ""
    ].join("\n")
    const { after, texts } = fixProject({ "llm.json": json, "llm.yaml": yaml })
    assert.include(
      texts["llm.json"],
      "{ \"type\": \"cold_transfer\", \"show_transferee_as_caller\": true, \"cold_transfer_mode\": \"sip_invite\" }"
    )
    assert.strictEqual(
      texts["llm.yaml"],
      [
        "llm_id: l",
        "general_tools:",
        "  - type: transfer_call",
        "    transfer_option:",
        "      type: cold_transfer",
        "      cold_transfer_mode: sip_refer",
        "  - transfer_option: {type: cold_transfer, cold_transfer_mode: sip_refer}",
        "    type: transfer_call",
        ""
      ].join("\n")
    )
    assert.deepStrictEqual(after, [])
  })

  it("never applies a suggestion that needs review: the scalar multi stays and is still reported", () => {
    const { after, result, texts } = fixProject({ "agent.json": "{\"agent_id\": \"a\", \"language\": \"multi\"}\n" })
    assert.deepStrictEqual(result.files, [])
    assert.strictEqual(texts["agent.json"], "{\"agent_id\": \"a\", \"language\": \"multi\"}\n")
    assert.deepStrictEqual(summary(after), ["agent.json:1:19 agent-language-multi error"])
  })

  it("keeps CRLF line endings and a byte-order mark", () => {
    const source = "\ufeff{\r\n  \"phone_number\": \"+1\",\r\n  \"inbound_agent_id\": \"a\"\r\n}\r\n"
    const { texts } = fixProject({ "p.json": source })
    assert.strictEqual(
      texts["p.json"],
      "\ufeff{\r\n  \"phone_number\": \"+1\",\r\n  \"inbound_agents\": [\r\n    {\r\n      \"agent_id\": \"a\",\r\n      \"weight\": 1\r\n    }\r\n  ]\r\n}\r\n"
    )
  })

  it("dry run prints a unified diff and writes nothing", () => {
    const dir = project({ "p.yaml": "phone_number: \"+1\"\ninbound_agent_id: a\n" })
    const problems = lintIn(dir, AS_OF).problems
    const result = applyAll(dir, problems, { write: false })
    assert.strictEqual(fs.readFileSync(path.join(dir, "p.yaml"), "utf8"), "phone_number: \"+1\"\ninbound_agent_id: a\n")
    assert.strictEqual(
      result.diff,
      [
        "--- a/p.yaml",
        "+++ b/p.yaml",
        "@@ -1,2 +1,4 @@",
        " phone_number: \"+1\"",
        "-inbound_agent_id: a",
        "+inbound_agents:",
        "+  - agent_id: a",
        "+    weight: 1",
        ""
      ].join("\n")
    )
  })

  it("refuses multi-document YAML instead of guessing", () => {
    const text = "agent_id: a\n---\nphone_number: \"+1\"\ninbound_agent_id: a\n"
    const fix = { description: "x", safe: true, operations: [{ op: "remove" as const, path: ["inbound_agent_id"] }] }
    assert.deepStrictEqual(fixText(text, "yaml", [fix]), { error: "multi-document YAML is not fixed automatically" })
  })
})
