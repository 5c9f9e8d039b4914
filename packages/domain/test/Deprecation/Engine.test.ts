import { assert, describe, it } from "@effect/vitest"
import { multiLocales } from "../../src/Deprecation/Catalogue.ts"
import { checkConfig, fixesOf } from "../../src/Deprecation/Engine.ts"
import { applyFixes } from "../../src/Deprecation/Fixes.ts"
import type { ConfigKind, Finding, RuleId } from "../../src/Deprecation/Rule.ts"

const at = (iso: string) => Date.parse(iso)
const LATER = "2030-01-01T00:00:00Z"

const findings = (kind: ConfigKind, json: unknown, asOf: string, rule: RuleId): ReadonlyArray<Finding> =>
  checkConfig(kind, json, at(asOf)).filter((finding) => finding.ruleId === rule)

const severities = (kind: ConfigKind, json: unknown, asOf: string, rule: RuleId) =>
  findings(kind, json, asOf, rule).map((finding) => finding.severity)

/**
 * Applies every fix of `rule` (safe and unsafe), then asserts the result checks clean for that
 * rule and that applying the same fixes again changes nothing. Returns the fixed document.
 */
const fixClean = (kind: ConfigKind, json: unknown, rule: RuleId): unknown => {
  const before = structuredClone(json)
  const fixes = fixesOf(findings(kind, json, LATER, rule), true)
  assert.isAbove(fixes.length, 0, "expected at least one fix")
  const fixed = applyFixes(json, fixes)
  assert.deepStrictEqual(json, before, "applyFixes must not modify its input")
  assert.deepStrictEqual(findings(kind, fixed, LATER, rule), [], "fixed document still has findings")
  assert.deepStrictEqual(applyFixes(fixed, fixes), fixed, "re-applying the fixes changed the document")
  return fixed
}

const transferTool = (option: Record<string, unknown>) => ({
  type: "transfer_call",
  name: "transfer_to_support",
  transfer_destination: { type: "predefined", number: "+14155550100" },
  transfer_option: option
})

const llm = (option: Record<string, unknown>) => ({
  llm_id: "llm_1",
  model: "gpt-4.1",
  general_prompt: "You are a helpful agent.",
  general_tools: [{ type: "end_call", name: "end_call" }, transferTool(option)],
  states: [
    { name: "greeting", state_prompt: "Greet.", tools: [] },
    { name: "billing", state_prompt: "Bill.", tools: [{ type: "end_call", name: "end" }, transferTool(option)] }
  ]
})

const flow = (nodes: ReadonlyArray<unknown>, extra: Record<string, unknown> = {}) => ({
  conversation_flow_id: "cf_1",
  model_choice: { type: "cascading", model: "gpt-4.1" },
  start_speaker: "agent",
  start_node_id: "start",
  nodes,
  ...extra
})

describe("checkConfig", () => {
  it("finds nothing in configs that follow the current API", () => {
    const agent = {
      agent_id: "ag_1",
      response_engine: { type: "svc-llm", llm_id: "llm_1" },
      voice_id: "11labs-Adrian",
      voice_model: "eleven_flash_v2_5",
      language: ["en-US", "es-ES"],
      post_call_analysis_model: "gpt-4.1-mini",
      post_call_analysis_data: [{ type: "system-presets", name: "call_summary" }]
    }
    assert.deepStrictEqual(checkConfig("agent", agent, at(LATER)), [])
    assert.deepStrictEqual(
      checkConfig("llm", llm({ type: "cold_transfer", cold_transfer_mode: "sip_invite" }), at(LATER)),
      []
    )
    assert.deepStrictEqual(checkConfig("phone-number", { phone_number: "+14155550100", inbound_agents: [] }, 0), [])
    assert.deepStrictEqual(checkConfig("tool", null, at(LATER)), [])
    assert.deepStrictEqual(checkConfig("agent", "multi", at(LATER)), [])
  })

  describe("row 1: cold-transfer-mode (2026-01-23)", () => {
    const rule = "cold-transfer-mode"
    const legacy = llm({ type: "cold_transfer", show_transferee_as_caller: true })

    it("is upcoming before 2026-01-23 and deprecated from 00:00 UTC on", () => {
      assert.deepStrictEqual(severities("llm", legacy, "2026-01-22T23:59:59Z", rule), ["upcoming", "upcoming"])
      assert.deepStrictEqual(severities("llm", legacy, "2026-01-23T00:00:00Z", rule), ["deprecated", "deprecated"])
      assert.deepStrictEqual(severities("llm", legacy, LATER, rule), ["deprecated", "deprecated"])
      const [first] = findings("llm", legacy, "2026-01-22T23:59:59Z", rule)
      assert.strictEqual(first?.date, "2026-01-23")
      assert.include(first?.message, "will be deprecated on 2026-01-23")
    })

    it("points at show_transferee_as_caller in LLM general_tools and state tools", () => {
      assert.deepStrictEqual(findings("llm", legacy, LATER, rule).map((f) => f.path), [
        ["general_tools", 1, "transfer_option", "show_transferee_as_caller"],
        ["states", 1, "tools", 1, "transfer_option", "show_transferee_as_caller"]
      ])
    })

    it("points into flow transfer nodes, flow tools, components and standalone tools", () => {
      const option = { type: "cold_transfer", show_transferee_as_caller: false }
      const doc = flow([
        { id: "start", type: "conversation", instruction: { type: "prompt", text: "Hi" } },
        { id: "xfer", type: "transfer_call", transfer_destination: { type: "predefined" }, transfer_option: option }
      ], {
        components: [{ name: "c", nodes: [{ id: "n", type: "subagent", tools: [transferTool(option)] }] }]
      })
      assert.deepStrictEqual(findings("conversation-flow", doc, LATER, rule).map((f) => f.path), [
        ["nodes", 1, "transfer_option", "show_transferee_as_caller"],
        ["components", 0, "nodes", 0, "tools", 0, "transfer_option", "show_transferee_as_caller"]
      ])
      const component = { name: "c", nodes: [{ id: "x", type: "transfer_call", transfer_option: option }] }
      assert.deepStrictEqual(findings("flow-component", component, LATER, rule).map((f) => f.path), [
        ["nodes", 0, "transfer_option", "show_transferee_as_caller"]
      ])
      assert.deepStrictEqual(findings("tool", transferTool(option), LATER, rule).map((f) => f.path), [
        ["transfer_option", "show_transferee_as_caller"]
      ])
    })

    it("fixes true to sip_invite, keeping show_transferee_as_caller", () => {
      const fixed = fixClean("llm", legacy, rule) as ReturnType<typeof llm>
      assert.deepStrictEqual(
        fixed.general_tools[1],
        transferTool({
          type: "cold_transfer",
          show_transferee_as_caller: true,
          cold_transfer_mode: "sip_invite"
        })
      )
    })

    it("fixes false to sip_refer and drops the flag that no longer has an effect", () => {
      const tool = transferTool({ type: "cold_transfer", show_transferee_as_caller: false })
      assert.deepStrictEqual(
        fixClean("tool", tool, rule),
        transferTool({ type: "cold_transfer", cold_transfer_mode: "sip_refer" })
      )
    })

    it("flags a caller-ID request under sip_refer without a fix", () => {
      const tool = transferTool({
        type: "cold_transfer",
        cold_transfer_mode: "sip_refer",
        show_transferee_as_caller: true
      })
      const [finding] = findings("tool", tool, LATER, rule)
      assert.deepStrictEqual(finding?.path, ["transfer_option", "show_transferee_as_caller"])
      assert.strictEqual(finding?.fix, undefined)
    })

    it("leaves warm transfers and explicit modes alone", () => {
      const warm = transferTool({ type: "warm_transfer", show_transferee_as_caller: true })
      const invite = transferTool({
        type: "cold_transfer",
        cold_transfer_mode: "sip_invite",
        show_transferee_as_caller: true
      })
      const unset = transferTool({ type: "cold_transfer" })
      for (const tool of [warm, invite, unset]) assert.deepStrictEqual(findings("tool", tool, LATER, rule), [])
    })
  })

  describe("row 2: phone-number-single-agent-fields (2026-03-31)", () => {
    const rule = "phone-number-single-agent-fields"
    const legacy = {
      phone_number: "+14155550100",
      nickname: "support",
      inbound_agent_id: "ag_in",
      inbound_agent_version: 3,
      outbound_agent_id: "ag_out",
      inbound_sms_agent_id: null,
      outbound_sms_agent_id: "ag_sms",
      outbound_sms_agent_version: "latest_published"
    }

    it("is upcoming before 2026-03-31 and deprecated from 00:00 UTC on", () => {
      assert.deepStrictEqual(
        [...new Set(severities("phone-number", legacy, "2026-03-30T23:59:59Z", rule))],
        ["upcoming"]
      )
      assert.deepStrictEqual(
        [...new Set(severities("phone-number", legacy, "2026-03-31T00:00:00Z", rule))],
        ["deprecated"]
      )
      assert.deepStrictEqual([...new Set(severities("phone-number", legacy, LATER, rule))], ["deprecated"])
    })

    it("reports each single-agent field at its key", () => {
      assert.deepStrictEqual(findings("phone-number", legacy, LATER, rule).map((f) => f.path), [
        ["inbound_agent_id"],
        ["inbound_agent_version"],
        ["outbound_agent_id"],
        ["inbound_sms_agent_id"],
        ["outbound_sms_agent_id"],
        ["outbound_sms_agent_version"]
      ])
      assert.include(findings("phone-number", legacy, LATER, rule)[2]?.replacement, "`outbound_agents`")
    })

    it("moves each binding into its weighted list with weight 1", () => {
      assert.deepStrictEqual(fixClean("phone-number", legacy, rule), {
        phone_number: "+14155550100",
        nickname: "support",
        inbound_agents: [{ agent_id: "ag_in", agent_version: 3, weight: 1 }],
        outbound_agents: [{ agent_id: "ag_out", weight: 1 }],
        inbound_sms_agents: null,
        outbound_sms_agents: [{ agent_id: "ag_sms", agent_version: "latest_published", weight: 1 }]
      })
    })

    it("drops a single-agent field that repeats the list, and leaves conflicts to a person", () => {
      const redundant = { inbound_agent_id: "a", inbound_agents: [{ agent_id: "a", weight: 1 }] }
      assert.deepStrictEqual(fixClean("phone-number", redundant, rule), {
        inbound_agents: [{ agent_id: "a", weight: 1 }]
      })
      const conflict = { inbound_agent_id: "a", inbound_agents: [{ agent_id: "b", weight: 1 }] }
      assert.deepStrictEqual(findings("phone-number", conflict, LATER, rule).map((f) => f.fix), [undefined])
      const versionOnly = { phone_number: "+1", outbound_agent_version: 2 }
      const [finding] = findings("phone-number", versionOnly, LATER, rule)
      assert.deepStrictEqual(finding?.path, ["outbound_agent_version"])
      assert.strictEqual(finding?.fix, undefined)
    })
  })

  describe("row 3: model-retirements (2026-04-03, 2026-05-25, 2026-07-12)", () => {
    const rule = "model-retirements"
    const agent = { response_engine: { type: "svc-llm", llm_id: "l" }, voice_model: "eleven_turbo_v2" }

    it("is upcoming, then deprecated through the waves, then removed after the last", () => {
      const points: ReadonlyArray<readonly [string, string, string]> = [
        ["2026-04-02T23:59:59Z", "upcoming", "2026-04-03"],
        ["2026-04-03T00:00:00Z", "deprecated", "2026-04-03"],
        ["2026-05-25T00:00:00Z", "deprecated", "2026-05-25"],
        ["2026-07-11T23:59:59Z", "deprecated", "2026-05-25"],
        ["2026-07-12T00:00:00Z", "removed", "2026-07-12"],
        [LATER, "removed", "2026-07-12"]
      ]
      for (const [instant, severity, date] of points) {
        const [finding] = findings("agent", agent, instant, rule)
        assert.strictEqual(finding?.severity, severity, instant)
        assert.strictEqual(finding?.date, date, instant)
      }
    })

    it("checks agent voice and analysis models, LLM models and flow model choices", () => {
      assert.deepStrictEqual(
        findings("agent", { ...agent, post_call_analysis_model: "gpt-4o" }, LATER, rule).map((f) => f.path),
        [["voice_model"], ["post_call_analysis_model"]]
      )
      assert.deepStrictEqual(findings("llm", { llm_id: "l", model: "gpt-4o" }, LATER, rule).map((f) => f.path), [[
        "model"
      ]])
      const doc = flow([{ id: "n", type: "conversation", model_choice: { type: "cascading", model: "gpt-3.5" } }], {
        model_choice: { type: "cascading", model: "claude-3.5-sonnet" }
      })
      assert.deepStrictEqual(findings("conversation-flow", doc, LATER, rule).map((f) => f.path), [
        ["model_choice", "model"],
        ["nodes", 0, "model_choice", "model"]
      ])
      assert.isUndefined(findings("llm", { model: "gpt-4o" }, LATER, rule)[0]?.fix)
    })

    it("accepts the current catalogue and null", () => {
      assert.deepStrictEqual(
        findings("agent", { voice_model: null, post_call_analysis_model: "gpt-5" }, LATER, rule),
        []
      )
      assert.deepStrictEqual(findings("llm", { model: "claude-4.5-haiku" }, LATER, rule), [])
    })
  })

  describe("row 4: conversation-node-tools (2026-04-18)", () => {
    const rule = "conversation-node-tools"
    const doc = flow([
      { id: "start", type: "conversation", instruction: { type: "prompt", text: "Hi" } },
      { id: "sub", type: "subagent", tools: [{ type: "end_call", name: "end" }] },
      { id: "ask", type: "conversation", tools: [{ type: "end_call", name: "end" }], tool_ids: ["t1"] },
      { id: "empty", type: "conversation", tools: [], tool_ids: null }
    ], {
      components: [{ name: "c", nodes: [{ id: "x", type: "conversation", tool_ids: ["t2"] }] }]
    })

    it("is upcoming before 2026-04-18 and deprecated from 00:00 UTC on", () => {
      assert.deepStrictEqual([...new Set(severities("conversation-flow", doc, "2026-04-17T23:59:59Z", rule))], [
        "upcoming"
      ])
      assert.deepStrictEqual([...new Set(severities("conversation-flow", doc, "2026-04-18T00:00:00Z", rule))], [
        "deprecated"
      ])
      assert.deepStrictEqual([...new Set(severities("conversation-flow", doc, LATER, rule))], ["deprecated"])
    })

    it("points at tools and tool_ids of conversation nodes, in flows and their components", () => {
      assert.deepStrictEqual(findings("conversation-flow", doc, LATER, rule).map((f) => f.path), [
        ["nodes", 2, "tools"],
        ["nodes", 2, "tool_ids"],
        ["nodes", 3, "tools"],
        ["components", 0, "nodes", 0, "tool_ids"]
      ])
    })

    it("turns nodes that own tools into subagents and drops empty lists", () => {
      const fixed = fixClean("conversation-flow", doc, rule) as { nodes: Array<Record<string, unknown>> }
      assert.strictEqual(fixed.nodes[2]?.type, "subagent")
      assert.deepStrictEqual(fixed.nodes[3], { id: "empty", type: "conversation", tool_ids: null })
      const component = { name: "c", nodes: [{ id: "x", type: "conversation", tool_ids: ["t2"] }] }
      assert.deepStrictEqual(fixClean("flow-component", component, rule), {
        name: "c",
        nodes: [{ id: "x", type: "subagent", tool_ids: ["t2"] }]
      })
    })

    it("ignores conversation-typed objects outside a nodes list", () => {
      assert.deepStrictEqual(
        findings("conversation-flow", flow([], { meta: { type: "conversation", tools: [1] } }), LATER, rule),
        []
      )
    })
  })

  describe("row 5: legacy-analysis-prompts (2026-06-15)", () => {
    const rule = "legacy-analysis-prompts"
    const agent = {
      agent_name: "support",
      analysis_summary_prompt: "Summarise in one line.",
      analysis_successful_prompt: "Did the caller book?",
      analysis_user_sentiment_prompt: null,
      post_call_analysis_data: [{ type: "string", name: "order_id", description: "The order id" }]
    }

    it("is upcoming before 2026-06-15 and removed from 00:00 UTC on", () => {
      assert.deepStrictEqual([...new Set(severities("agent", agent, "2026-06-14T23:59:59Z", rule))], ["upcoming"])
      assert.deepStrictEqual([...new Set(severities("agent", agent, "2026-06-15T00:00:00Z", rule))], ["removed"])
      assert.deepStrictEqual([...new Set(severities("agent", agent, LATER, rule))], ["removed"])
      assert.deepStrictEqual(findings("agent", agent, LATER, rule).map((f) => f.path), [
        ["analysis_summary_prompt"],
        ["analysis_successful_prompt"],
        ["analysis_user_sentiment_prompt"]
      ])
    })

    it("moves the prompts into post_call_analysis_data system presets", () => {
      assert.deepStrictEqual(fixClean("agent", agent, rule), {
        agent_name: "support",
        post_call_analysis_data: [
          { type: "string", name: "order_id", description: "The order id" },
          { type: "system-presets", name: "call_summary", description: "Summarise in one line." },
          { type: "system-presets", name: "call_successful", description: "Did the caller book?" }
        ]
      })
    })

    it("uses the chat presets for a chat agent", () => {
      const chat = { post_chat_analysis_data: [], analysis_user_sentiment_prompt: "How did they feel?" }
      assert.deepStrictEqual(fixClean("agent", chat, rule), {
        post_chat_analysis_data: [{ type: "system-presets", name: "user_sentiment", description: "How did they feel?" }]
      })
    })

    it("leaves a clash with an existing preset to a person", () => {
      const clash = {
        analysis_summary_prompt: "A",
        post_call_analysis_data: [{ type: "system-presets", name: "call_summary", description: "B" }]
      }
      assert.strictEqual(findings("agent", clash, LATER, rule)[0]?.fix, undefined)
    })
  })

  describe("row 7: agent-language-multi (2026-07-31)", () => {
    const rule = "agent-language-multi"
    const agent = { voice_id: "v", language: "multi" }

    it("is upcoming until 2026-07-30T23:59:59Z and removed from 2026-07-31T00:00:00Z", () => {
      assert.deepStrictEqual(severities("agent", agent, "2026-07-30T23:59:59Z", rule), ["upcoming"])
      assert.deepStrictEqual(severities("agent", agent, "2026-07-31T00:00:00Z", rule), ["removed"])
      assert.deepStrictEqual(severities("agent", agent, LATER, rule), ["removed"])
      assert.deepStrictEqual(findings("agent", agent, LATER, rule)[0]?.path, ["language"])
    })

    it("suggests, but does not apply as safe, the ten-locale array", () => {
      const all = findings("agent", agent, LATER, rule)
      assert.strictEqual(all[0]?.fix?.safe, false)
      assert.deepStrictEqual(fixesOf(all), [])
      assert.deepStrictEqual(fixClean("agent", agent, rule), { voice_id: "v", language: multiLocales })
      assert.strictEqual(multiLocales.length, 10)
    })

    it("accepts locale strings and arrays", () => {
      assert.deepStrictEqual(findings("agent", { language: "en-US" }, LATER, rule), [])
      assert.deepStrictEqual(findings("agent", { language: ["en-US", "de-DE"] }, LATER, rule), [])
    })
  })

  describe("row 12: calendar-cal-tools (2026-09-30, 2026-10-31)", () => {
    const rule = "calendar-cal-tools"
    const cal = (type: string) => ({ type, name: "cal", cal_api_key: "k", event_type_id: 1 })
    const doc = {
      llm_id: "l",
      model: "gpt-4.1",
      general_tools: [cal("check_availability_cal"), { type: "end_call", name: "end" }],
      states: [{ name: "s", tools: [cal("book_appointment_cal")] }]
    }

    it("is upcoming, deprecated from 2026-09-30, removed from 2026-10-31", () => {
      const points: ReadonlyArray<readonly [string, string]> = [
        ["2026-09-29T23:59:59Z", "upcoming"],
        ["2026-09-30T00:00:00Z", "deprecated"],
        ["2026-10-30T23:59:59Z", "deprecated"],
        ["2026-10-31T00:00:00Z", "removed"],
        [LATER, "removed"]
      ]
      for (const [instant, severity] of points) {
        assert.deepStrictEqual([...new Set(severities("llm", doc, instant, rule))], [severity], instant)
      }
      assert.include(findings("llm", doc, "2026-10-01T00:00:00Z", rule)[0]?.message, "will be removed on 2026-10-31")
    })

    it("points at the type of calendar tools wherever they sit", () => {
      assert.deepStrictEqual(findings("llm", doc, LATER, rule).map((f) => f.path), [
        ["general_tools", 0, "type"],
        ["states", 0, "tools", 0, "type"]
      ])
      const flowDoc = flow([{ id: "s", type: "subagent", tools: [cal("book_appointment_cal")] }], {
        tools: [cal("check_availability_cal")],
        components: [{ name: "c", tools: [cal("book_appointment_cal")], nodes: [] }]
      })
      assert.deepStrictEqual(findings("conversation-flow", flowDoc, LATER, rule).map((f) => f.path), [
        ["nodes", 0, "tools", 0, "type"],
        ["tools", 0, "type"],
        ["components", 0, "tools", 0, "type"]
      ])
      assert.deepStrictEqual(findings("tool", cal("check_availability_cal"), LATER, rule).map((f) => f.path), [[
        "type"
      ]])
      assert.isUndefined(findings("tool", cal("check_availability_cal"), LATER, rule)[0]?.fix)
    })
  })

  it("checks only the rules that apply to a kind", () => {
    const agentLike = { language: "multi", analysis_summary_prompt: "x", inbound_agent_id: "a" }
    assert.deepStrictEqual(checkConfig("phone-number", agentLike, at(LATER)).map((f) => f.ruleId), [
      "phone-number-single-agent-fields"
    ])
    assert.deepStrictEqual(checkConfig("agent", agentLike, at(LATER)).map((f) => f.ruleId), [
      "legacy-analysis-prompts",
      "agent-language-multi"
    ])
  })

  it("fixes several rules of one document together", () => {
    const doc = flow([
      {
        id: "ask",
        type: "conversation",
        tools: [transferTool({ type: "cold_transfer", show_transferee_as_caller: true })]
      }
    ])
    const all = checkConfig("conversation-flow", doc, at(LATER))
    assert.deepStrictEqual(all.map((f) => [f.ruleId, f.path]), [
      ["conversation-node-tools", ["nodes", 0, "tools"]],
      ["cold-transfer-mode", ["nodes", 0, "tools", 0, "transfer_option", "show_transferee_as_caller"]]
    ])
    const fixed = applyFixes(doc, fixesOf(all))
    assert.deepStrictEqual(checkConfig("conversation-flow", fixed, at(LATER)), [])
  })
})

// Found unpinned by mutation testing (tools/mutation, docs/testing.md). Expectations: decision 0103's table of fixes
// ("safe" column, and which cases get no fix) and the spec's rows 1 and 2.
describe("fixes as decision 0103 lists them", () => {
  const row2 = "phone-number-single-agent-fields"
  const fixesFor = (json: unknown) => findings("phone-number", json, LATER, row2).map((f) => f.fix)

  it("a null id whose list already says null (or is empty) loses the old field, safely; a list of agents: no fix", () => {
    for (const list of [null, []]) {
      const json = { phone_number: "+14155550100", inbound_agent_id: null, inbound_agents: list }
      const [fix] = fixesFor(json)
      assert.strictEqual(fix?.safe, true, JSON.stringify(list))
      assert.deepStrictEqual(fixClean("phone-number", json, row2), {
        phone_number: "+14155550100",
        inbound_agents: list
      })
    }
    const taken = { phone_number: "+1", inbound_agent_id: null, inbound_agents: [{ agent_id: "a", weight: 1 }] }
    assert.deepStrictEqual(fixesFor(taken), [undefined])
  })

  it("an id with a version becomes one weighted entry carrying the version; the same entry already listed: drop", () => {
    const fixed = fixClean(
      "phone-number",
      { phone_number: "+1", outbound_agent_id: "a", outbound_agent_version: 3 },
      row2
    )
    assert.deepStrictEqual(fixed, {
      phone_number: "+1",
      outbound_agents: [{ agent_id: "a", agent_version: 3, weight: 1 }]
    })
    const same = {
      phone_number: "+1",
      outbound_agent_id: "a",
      outbound_agent_version: 3,
      outbound_agents: [{ agent_id: "a", agent_version: 3, weight: 1 }]
    }
    assert.isTrue(fixesFor(same).every((fix) => fix?.safe === true))
    assert.deepStrictEqual(fixClean("phone-number", same, row2), {
      phone_number: "+1",
      outbound_agents: [{ agent_id: "a", agent_version: 3, weight: 1 }]
    })
    // a list that says something else (another version, or two agents): no fix
    for (
      const other of [[{ agent_id: "a", agent_version: 4, weight: 1 }], [
        { agent_id: "a", agent_version: 3, weight: 1 },
        { agent_id: "b", weight: 1 }
      ]]
    ) {
      assert.isTrue(fixesFor({ ...same, outbound_agents: other }).every((fix) => fix === undefined))
    }
  })

  it("cold transfer: true without a mode becomes sip_invite and false sip_refer, both safe; true under sip_refer has no fix", () => {
    const rule = "cold-transfer-mode"
    const fixOf = (option: Record<string, unknown>) => findings("llm", llm(option), LATER, rule).map((f) => f.fix)
    for (const [show, mode] of [[true, "sip_invite"], [false, "sip_refer"]] as const) {
      const fixes = fixOf({ type: "cold_transfer", show_transferee_as_caller: show })
      assert.isAbove(fixes.length, 0)
      for (const fix of fixes) {
        assert.strictEqual(fix?.safe, true)
        assert.deepInclude(fix?.operations ?? [], { op: "set", path: fix!.operations[0]!.path, value: mode })
      }
    }
    const unclear = fixOf({ type: "cold_transfer", cold_transfer_mode: "sip_refer", show_transferee_as_caller: true })
    assert.isAbove(unclear.length, 0)
    assert.isTrue(unclear.every((fix) => fix === undefined))
    assert.deepStrictEqual(
      fixOf({ type: "cold_transfer", cold_transfer_mode: "sip_refer", show_transferee_as_caller: false }),
      []
    )
  })
})

// Found unpinned by mutation testing (issue 28 item 1). Expectations: the spec's schedule rows (their wording and
// replacements), decision 0103's table of fixes, docs/lint.md ("Fixes", the json format's message and fix) and
// reference/vendor-api-facts.md §4 for the shape of the fields (a null field is an unset one).
describe("what findings and fixes say, and the edges of each rule's fix", () => {
  const fixOf = (finding: Finding | undefined) => {
    assert.isDefined(finding?.fix, "expected a fix")
    return finding!.fix!
  }

  describe("row 1: cold-transfer-mode", () => {
    const rule = "cold-transfer-mode"
    const option = (fields: Record<string, unknown>) => transferTool({ type: "cold_transfer", ...fields })

    it("says the flag no longer chooses between SIP REFER and SIP INVITE (spec row 1), and names the replacement", () => {
      const [finding] = findings("tool", option({ show_transferee_as_caller: true }), LATER, rule)
      assert.include(finding?.message, "show_transferee_as_caller")
      assert.include(finding?.message, "SIP REFER")
      assert.include(finding?.message, "SIP INVITE")
      assert.include(finding?.message, "is deprecated since 2026-01-23")
      assert.include(finding?.message, "cold_transfer_mode")
    })

    it("says the flag under sip_refer only controls caller ID display under sip_invite (spec row 1)", () => {
      const [finding] = findings(
        "tool",
        option({ cold_transfer_mode: "sip_refer", show_transferee_as_caller: true }),
        LATER,
        rule
      )
      assert.include(finding?.message, "show_transferee_as_caller")
      assert.include(finding?.message, "sip_refer")
      assert.include(finding?.message, "caller ID display")
    })

    it("describes each fix by the mode it sets, and the false case by the flag it drops (decision 0103)", () => {
      const invite = fixOf(findings("tool", option({ show_transferee_as_caller: true }), LATER, rule)[0])
      assert.include(invite.description, "cold_transfer_mode")
      assert.include(invite.description, "sip_invite")
      const refer = fixOf(findings("tool", option({ show_transferee_as_caller: false }), LATER, rule)[0])
      assert.include(refer.description, "cold_transfer_mode")
      assert.include(refer.description, "sip_refer")
      assert.match(refer.description, /\bdrop\b.*\bshow_transferee_as_caller\b/)
    })

    it("treats a null flag as unset and a null mode as no mode", () => {
      assert.deepStrictEqual(findings("tool", option({ show_transferee_as_caller: null }), LATER, rule), [])
      const nullMode = option({ show_transferee_as_caller: true, cold_transfer_mode: null })
      assert.strictEqual(findings("tool", nullMode, LATER, rule).length, 1)
      assert.deepStrictEqual(
        fixClean("tool", nullMode, rule),
        option({ show_transferee_as_caller: true, cold_transfer_mode: "sip_invite" })
      )
    })

    it("reports a flag that is not a boolean without a fix: only true and false name a method", () => {
      const [finding] = findings("tool", option({ show_transferee_as_caller: "false" }), LATER, rule)
      assert.deepStrictEqual(finding?.path, ["transfer_option", "show_transferee_as_caller"])
      assert.isUndefined(finding?.fix)
    })
  })

  describe("row 2: phone-number-single-agent-fields", () => {
    const rule = "phone-number-single-agent-fields"
    const prefixes = ["inbound", "outbound", "inbound_sms", "outbound_sms"]

    it("names the single-agent field and the weighted list that replaces it (spec row 2)", () => {
      for (const prefix of prefixes) {
        const json = { [`${prefix}_agent_id`]: "ag_1", [`${prefix}_agent_version`]: 2 }
        const all = findings("phone-number", json, LATER, rule)
        assert.deepStrictEqual(all.map((f) => f.path), [[`${prefix}_agent_id`], [`${prefix}_agent_version`]])
        for (const [i, field] of [`${prefix}_agent_id`, `${prefix}_agent_version`].entries()) {
          assert.include(all[i]?.message, `"${field}"`, field)
          assert.include(all[i]?.message, `${prefix}_agents`, field)
          assert.include(all[i]?.message, "is deprecated since 2026-03-31", field)
        }
      }
    })

    it("describes the move: the old fields, the list, and the one entry of weight 1", () => {
      const withVersion = fixOf(
        findings("phone-number", { outbound_agent_id: "a", outbound_agent_version: 3 }, LATER, rule)[0]
      )
      assert.include(withVersion.description, "outbound_agent_id")
      assert.include(withVersion.description, "outbound_agent_version")
      assert.include(withVersion.description, "outbound_agents")
      assert.include(withVersion.description, "weight 1")
      const idOnly = fixOf(findings("phone-number", { inbound_agent_id: "a" }, LATER, rule)[0])
      assert.match(idOnly.description, /\binbound_agent_id into inbound_agents\b/)
      assert.notInclude(idOnly.description, "version")
      const nullId = fixOf(findings("phone-number", { inbound_agent_id: null }, LATER, rule)[0])
      assert.match(nullId.description, /\binbound_agent_id into inbound_agents\b/)
    })

    it("offers the moves as safe fixes, so --fix applies them (decision 0103: safe)", () => {
      for (
        const json of [{ inbound_agent_id: "a" }, { inbound_agent_id: null }, {
          inbound_agent_id: "a",
          inbound_agent_version: 1
        }]
      ) {
        const all = findings("phone-number", json, LATER, rule)
        const safe = fixesOf(all)
        assert.strictEqual(safe.length, 1, JSON.stringify(json))
        assert.strictEqual(safe[0], all[0]?.fix)
      }
      assert.deepStrictEqual(
        applyFixes(
          { inbound_agent_id: null },
          fixesOf(findings("phone-number", { inbound_agent_id: null }, LATER, rule))
        ),
        {
          inbound_agents: null
        }
      )
    })

    it("reads a null version as no version: the entry carries none", () => {
      assert.deepStrictEqual(fixClean("phone-number", { inbound_agent_id: "a", inbound_agent_version: null }, rule), {
        inbound_agents: [{ agent_id: "a", weight: 1 }]
      })
    })

    it("gives no fix for an id or a version the weighted list cannot hold (agent_id: string, agent_version: string | number)", () => {
      for (const version of [true, { v: 1 }, [3]]) {
        const json = { inbound_agent_id: "a", inbound_agent_version: version }
        assert.deepStrictEqual(findings("phone-number", json, LATER, rule).map((f) => f.fix), [undefined, undefined])
      }
      for (const id of ["", 42, true, { id: "a" }]) {
        const json = { outbound_agent_id: id }
        assert.deepStrictEqual(findings("phone-number", json, LATER, rule).map((f) => f.fix), [undefined], String(id))
      }
    })
  })

  describe("row 3: model-retirements", () => {
    const rule = "model-retirements"

    it("names the retired model value in the message", () => {
      const [finding] = findings("llm", { llm_id: "l", model: "gpt-4o" }, LATER, rule)
      assert.include(finding?.message, "\"gpt-4o\"")
      assert.include(finding?.message, "was removed on 2026-07-12")
    })

    it("has no fix to offer, safe or not (decision 0103: row 3, no fix)", () => {
      const all = findings("agent", { voice_model: "eleven_turbo_v2", post_call_analysis_model: "gpt-4o" }, LATER, rule)
      assert.strictEqual(all.length, 2)
      assert.deepStrictEqual(fixesOf(all), [])
      assert.deepStrictEqual(fixesOf(all, true), [])
    })
  })

  describe("row 4: conversation-node-tools", () => {
    const rule = "conversation-node-tools"
    const node = (fields: Record<string, unknown>) => flow([{ id: "n", type: "conversation", ...fields }])

    it("names the key on the conversation node and the subagent replacement (spec row 4)", () => {
      const all = findings(
        "conversation-flow",
        node({ tools: [{ type: "end_call", name: "e" }], tool_ids: ["t"] }),
        LATER,
        rule
      )
      assert.deepStrictEqual(all.map((f) => f.path), [["nodes", 0, "tools"], ["nodes", 0, "tool_ids"]])
      assert.include(all[0]?.message, "\"tools\"")
      assert.include(all[1]?.message, "\"tool_ids\"")
      for (const finding of all) {
        assert.include(finding.message, "conversation")
        assert.include(finding.message, "subagent")
      }
    })

    it("treats a null list as no list", () => {
      const all = findings("conversation-flow", node({ tools: null, tool_ids: ["t"] }), LATER, rule)
      assert.deepStrictEqual(all.map((f) => f.path), [["nodes", 0, "tool_ids"]])
    })

    it("turns a node into a subagent when either list holds a tool, keeping both (only empty lists are removed)", () => {
      const doc = node({ tools: [], tool_ids: ["t1"] })
      const fix = fixOf(findings("conversation-flow", doc, LATER, rule)[0])
      assert.include(fix.description, "subagent")
      assert.deepStrictEqual(
        (fixClean("conversation-flow", doc, rule) as { nodes: ReadonlyArray<unknown> }).nodes,
        [{ id: "n", type: "subagent", tools: [], tool_ids: ["t1"] }]
      )
    })

    it("describes the removal of empty lists by the keys it removes, as a safe fix", () => {
      const doc = node({ tools: [], tool_ids: [] })
      const all = findings("conversation-flow", doc, LATER, rule)
      const fix = fixOf(all[0])
      assert.match(fix.description, /\btools\b/)
      assert.match(fix.description, /\btool_ids\b/)
      assert.deepStrictEqual(fixesOf(all), [fix])
      assert.deepStrictEqual(
        (applyFixes(doc, fixesOf(all)) as { nodes: ReadonlyArray<unknown> }).nodes,
        [{ id: "n", type: "conversation" }]
      )
    })
  })

  describe("row 5: legacy-analysis-prompts", () => {
    const rule = "legacy-analysis-prompts"
    const fixed = (agent: Record<string, unknown>) => fixClean("agent", agent, rule)
    const noFix = (agent: Record<string, unknown>) =>
      assert.isTrue(findings("agent", agent, LATER, rule).every((f) => f.fix === undefined), JSON.stringify(agent))

    it("names the removed field, and the fix names the list it moves the prompts into (spec row 5)", () => {
      const [finding] = findings("agent", { voice_id: "v", analysis_summary_prompt: "Sum up." }, LATER, rule)
      assert.include(finding?.message, "\"analysis_summary_prompt\"")
      assert.include(finding?.message, "was removed on 2026-06-15")
      const fix = fixOf(finding)
      assert.include(fix.description, "post_call_analysis_data")
      assert.include(fix.description, "system presets")
      const chat = findings("agent", { post_chat_analysis_data: [], analysis_summary_prompt: "Sum up." }, LATER, rule)
      assert.include(fixOf(chat[0]).description, "post_chat_analysis_data")
    })

    it("finds each of the three fields alone", () => {
      for (const key of ["analysis_summary_prompt", "analysis_successful_prompt", "analysis_user_sentiment_prompt"]) {
        assert.deepStrictEqual(findings("agent", { voice_id: "v", [key]: "x" }, LATER, rule).map((f) => f.path), [[
          key
        ]])
      }
    })

    it("creates post_call_analysis_data for a voice agent without one, as a safe fix", () => {
      const agent = { voice_id: "v", analysis_summary_prompt: "Sum up." }
      assert.deepStrictEqual(fixesOf(findings("agent", agent, LATER, rule)).length, 1)
      assert.deepStrictEqual(fixed(agent), {
        voice_id: "v",
        post_call_analysis_data: [{ type: "system-presets", name: "call_summary", description: "Sum up." }]
      })
      // post_call_analysis_data is nullable: null is an empty list
      assert.deepStrictEqual(fixed({ ...agent, post_call_analysis_data: null }), {
        voice_id: "v",
        post_call_analysis_data: [{ type: "system-presets", name: "call_summary", description: "Sum up." }]
      })
    })

    it("counts an agent that carries post_call_analysis_data as a voice agent, even beside a chat list", () => {
      const agent = { analysis_successful_prompt: "Booked?", post_call_analysis_data: [], post_chat_analysis_data: [] }
      assert.deepStrictEqual(fixed(agent), {
        post_call_analysis_data: [{ type: "system-presets", name: "call_successful", description: "Booked?" }],
        post_chat_analysis_data: []
      })
    })

    it("just removes a null or empty prompt, without creating a list (decision 0103)", () => {
      assert.deepStrictEqual(fixed({ voice_id: "v", analysis_summary_prompt: null }), { voice_id: "v" })
      assert.deepStrictEqual(fixed({ voice_id: "v", analysis_summary_prompt: "" }), { voice_id: "v" })
      assert.deepStrictEqual(
        fixed({ analysis_summary_prompt: "", analysis_successful_prompt: "Booked?", post_call_analysis_data: [] }),
        { post_call_analysis_data: [{ type: "system-presets", name: "call_successful", description: "Booked?" }] }
      )
    })

    it("drops a prompt already migrated with the same text, leaving the list as it is", () => {
      const preset = { type: "system-presets", name: "call_summary", description: "Sum up." }
      assert.deepStrictEqual(fixed({ analysis_summary_prompt: "Sum up.", post_call_analysis_data: [preset] }), {
        post_call_analysis_data: [preset]
      })
    })

    it("matches an existing preset by type and name: another preset or a custom field of that name is not it", () => {
      const other = { type: "system-presets", name: "call_successful", description: "Booked?" }
      assert.deepStrictEqual(fixed({ analysis_summary_prompt: "Sum up.", post_call_analysis_data: [other] }), {
        post_call_analysis_data: [other, { type: "system-presets", name: "call_summary", description: "Sum up." }]
      })
      const custom = { type: "string", name: "call_summary", description: "Something else" }
      assert.deepStrictEqual(fixed({ analysis_summary_prompt: "Sum up.", post_call_analysis_data: [custom] }), {
        post_call_analysis_data: [custom, { type: "system-presets", name: "call_summary", description: "Sum up." }]
      })
    })

    it("leaves a list that is not a list, or a prompt that is not text, to a person", () => {
      noFix({ analysis_summary_prompt: "Sum up.", post_call_analysis_data: { name: "x" } })
      noFix({ analysis_summary_prompt: "Sum up.", post_call_analysis_data: "call_summary" })
      noFix({ analysis_summary_prompt: 42 })
      noFix({ analysis_summary_prompt: ["Sum up."] })
    })
  })

  it("row 12: names the calendar tool type in the message", () => {
    const [finding] = findings("tool", { type: "book_appointment_cal", name: "b" }, LATER, "calendar-cal-tools")
    assert.include(finding?.message, "\"book_appointment_cal\"")
    assert.include(finding?.message, "the calendar integration")
  })

  it("finds nothing in a document that is not an object, whatever the kind", () => {
    for (const kind of ["agent", "llm", "conversation-flow", "flow-component", "phone-number", "tool"] as const) {
      for (const json of [null, "multi", 42, ["inbound_agent_id"]]) {
        assert.deepStrictEqual(checkConfig(kind, json, at(LATER)), [], `${kind} ${JSON.stringify(json)}`)
      }
    }
  })
})
