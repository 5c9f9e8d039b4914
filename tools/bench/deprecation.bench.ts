// Benchmark of the deprecation engine (packages/domain/src/Deprecation) against a naive baseline
// in the same run. Standalone: `node tools/bench/deprecation.bench.ts` (Node 24 strips the types).
//
// Engine: per-kind rule tables built once; root checks plus one walk of the tree.
// Baseline (issue 17, "fair baselines"): the straightforward correct implementation: one walk of the
// tree, and at every object every rule of the config's kind is asked. (The first baseline walked the
// tree once per rule and stringified every object; it flattered the engine by 10-100x.)
// Both report the same findings on every fixture (checked before timing); engine and baseline are
// timed in alternating rounds, each round a median of batches, and the table gives the median round.
//
// Output: a Markdown table of medians (µs per config) and the baseline/engine ratio. Target: a
// typical agent config in under 50 µs.
import { checkEndpoint } from "@svc/domain/Deprecation/Endpoints.ts"
import { checkConfig } from "@svc/domain/Deprecation/Engine.ts"
import type { ConfigKind } from "@svc/domain/Deprecation/Rule.ts"
import * as os from "node:os"

const AS_OF = Date.parse("2026-11-01T00:00:00Z")

// --- fixtures ----------------------------------------------------------------------------------

const typicalAgent = {
  agent_id: "agent_8c1f0e2b9a",
  version: 7,
  agent_name: "Front desk",
  response_engine: { type: "svc-llm", llm_id: "llm_4f2a", version: 3 },
  voice_id: "11labs-Adrian",
  voice_model: "eleven_flash_v2_5",
  fallback_voice_ids: ["openai-Alloy", "deepgram-Angus"],
  voice_temperature: 1,
  voice_speed: 1.05,
  volume: 1,
  responsiveness: 0.9,
  interruption_sensitivity: 0.8,
  enable_backchannel: true,
  backchannel_frequency: 0.7,
  backchannel_words: ["yeah", "uh-huh", "right"],
  reminder_trigger_ms: 10000,
  reminder_max_count: 2,
  ambient_sound_volume: 0.5,
  language: "multi",
  webhook_url: "https://hooks.example.com/voice",
  webhook_events: ["call_started", "call_ended", "call_analyzed"],
  webhook_timeout_ms: 10000,
  boosted_keywords: ["Acme", "appointment", "reschedule"],
  opt_in_signed_url: false,
  pronunciation_dictionary: [{ word: "Acme", alphabet: "ipa", phoneme: "ˈækmi" }],
  normalize_for_speech: true,
  end_call_after_silence_ms: 600000,
  max_call_duration_ms: 3600000,
  voicemail_option: { action: { type: "static_text", text: "Please call us back." } },
  post_call_analysis_data: [
    { type: "string", name: "customer_name", description: "The caller's name", examples: ["Jane Doe"] },
    { type: "enum", name: "intent", description: "Why they called", choices: ["book", "cancel", "other"] },
    { type: "boolean", name: "callback_requested", description: "Whether they asked for a callback" }
  ],
  analysis_summary_prompt: "Summarise the call in two sentences.",
  post_call_analysis_model: "gpt-4.1-mini",
  begin_message_delay_ms: 200,
  ring_duration_ms: 30000,
  stt_mode: "fast",
  vocab_specialization: "general",
  denoising_mode: "noise-cancellation",
  data_storage_setting: "everything",
  allow_user_dtmf: true,
  user_dtmf_options: { digit_limit: 10, termination_key: "#", timeout_ms: 3000 },
  guardrail_config: { output_topics: ["harassment"], input_topics: ["platform_integrity_jailbreaking"] },
  handbook_config: { default_personality: true, ai_disclosure: true, smart_matching: false },
  timezone: "America/New_York",
  last_modification_timestamp: 1767225600000,
  is_published: true
}

const cleanAgent = (() => {
  const { analysis_summary_prompt: _, ...rest } = typicalAgent
  return { ...rest, language: ["en-US", "es-ES"] }
})()

const calTool = (i: number) => ({
  type: i % 2 === 0 ? "check_availability_cal" : "book_appointment_cal",
  name: `calendar_${i}`,
  cal_api_key: "cal_live_xxx",
  event_type_id: 1000 + i,
  timezone: "America/New_York"
})

const transferTool = (i: number) => ({
  type: "transfer_call",
  name: `transfer_${i}`,
  description: "Transfer to a human when the caller asks for one.",
  transfer_destination: { type: "predefined", number: "+14155550100", ignore_e164_validation: false },
  transfer_option: { type: "cold_transfer", show_transferee_as_caller: i % 2 === 0, transfer_ring_duration_ms: 30000 }
})

const customTool = (i: number) => ({
  type: "custom",
  name: `lookup_${i}`,
  description: "Look up the caller's order.",
  url: "https://api.example.com/orders",
  method: "POST",
  speak_during_execution: true,
  execution_message_description: "One moment while I check.",
  parameters: {
    type: "object",
    properties: { order_id: { type: "string", description: "The order id" } },
    required: ["order_id"]
  }
})

const typicalLlm = {
  llm_id: "llm_4f2a",
  version: 3,
  model: "gpt-4.1",
  model_temperature: 0.2,
  general_prompt: "You are the front desk of Acme Dental. ".repeat(20),
  begin_message: "Hi, this is Acme Dental, how can I help?",
  general_tools: [{ type: "end_call", name: "end_call" }, transferTool(0), customTool(0), calTool(0)],
  states: Array.from({ length: 4 }, (_, i) => ({
    name: `state_${i}`,
    state_prompt: "Handle this step of the conversation. ".repeat(5),
    edges: [{ destination_state_name: `state_${i + 1}`, description: "When done." }],
    tools: [customTool(i), transferTool(i + 1), calTool(i + 1)]
  })),
  knowledge_base_ids: ["kb_1"],
  kb_config: { top_k: 3, filter_score: 0.6 }
}

const flowNode = (i: number) => {
  const edges = [{
    id: `edge_${i}`,
    destination_node_id: `node_${i + 1}`,
    transition_condition: { type: "prompt", prompt: "The caller has answered." }
  }]
  const base = { id: `node_${i}`, name: `Node ${i}`, edges, display_position: { x: i * 240, y: 120 } }
  switch (i % 5) {
    case 0:
      return {
        ...base,
        type: "conversation",
        instruction: { type: "prompt", text: "Ask for the order id. ".repeat(4) }
      }
    case 1:
      return { ...base, type: "conversation", instruction: { type: "prompt", text: "Confirm." }, tool_ids: ["tool_1"] }
    case 2:
      return {
        ...base,
        type: "subagent",
        instruction: { type: "prompt", text: "Help." },
        tools: [customTool(i), calTool(i)]
      }
    case 3:
      return {
        ...base,
        type: "transfer_call",
        transfer_destination: { type: "predefined", number: "+1" },
        transfer_option: transferTool(i).transfer_option
      }
    default:
      return { ...base, type: "function", tool_id: "tool_1", wait_for_result: true, speak_during_execution: false }
  }
}

const flow50 = {
  conversation_flow_id: "cf_9d3e",
  version: 2,
  model_choice: { type: "cascading", model: "gpt-4.1" },
  start_speaker: "agent",
  start_node_id: "node_0",
  global_prompt: "You are a helpful scheduling assistant. ".repeat(10),
  tools: [calTool(99), { type: "custom", name: "lookup", tool_id: "tool_1", url: "https://api.example.com" }],
  nodes: Array.from({ length: 50 }, (_, i) => flowNode(i))
}

// --- naive baseline ------------------------------------------------------------------------------

type Path = ReadonlyArray<string | number>
interface Visit {
  readonly node: Record<string, unknown>
  readonly path: Path
  readonly containerKey: string | undefined
}
interface NaiveRule {
  readonly id: string
  readonly kinds: ReadonlyArray<ConfigKind>
  readonly needles: ReadonlyArray<string>
  readonly check: (visit: Visit, root: boolean) => number
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const llmModels = new Set(["gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5.1"])
const voiceModels = new Set(["eleven_flash_v2", "eleven_flash_v2_5", "eleven_multilingual_v2", "eleven_v3", "tts-1"])
const flowKinds: ReadonlyArray<ConfigKind> = ["conversation-flow", "flow-component"]
const toolHolders: ReadonlyArray<ConfigKind> = ["llm", "conversation-flow", "flow-component", "tool"]
const singleAgentFields = ["inbound", "outbound", "inbound_sms", "outbound_sms"].flatMap((p) => [
  `${p}_agent_id`,
  `${p}_agent_version`
])

const naiveRules: ReadonlyArray<NaiveRule> = [
  {
    id: "cold-transfer-mode",
    kinds: toolHolders,
    needles: ["\"cold_transfer\""],
    check: ({ node }) =>
      node.type === "cold_transfer" && node.show_transferee_as_caller != null &&
        (node.cold_transfer_mode == null ||
          (node.cold_transfer_mode === "sip_refer" && node.show_transferee_as_caller === true))
        ? 1
        : 0
  },
  {
    id: "phone-number-single-agent-fields",
    kinds: ["phone-number"],
    needles: singleAgentFields.map((f) => `"${f}"`),
    check: ({ node }, root) => root ? singleAgentFields.filter((f) => Object.hasOwn(node, f)).length : 0
  },
  {
    id: "model-retirements",
    kinds: ["agent", "llm", ...flowKinds],
    needles: ["model\""],
    check: ({ containerKey, node }, root) => {
      let n = 0
      if (root && typeof node.voice_model === "string" && !voiceModels.has(node.voice_model)) n++
      if (root && typeof node.post_call_analysis_model === "string" && !llmModels.has(node.post_call_analysis_model)) {
        n++
      }
      if ((root || containerKey === "model_choice") && typeof node.model === "string" && !llmModels.has(node.model)) n++
      return n
    }
  },
  {
    id: "conversation-node-tools",
    kinds: flowKinds,
    needles: ["\"conversation\""],
    check: ({ containerKey, node }) =>
      containerKey === "nodes" && node.type === "conversation"
        ? (node.tools != null ? 1 : 0) + (node.tool_ids != null ? 1 : 0)
        : 0
  },
  {
    id: "legacy-analysis-prompts",
    kinds: ["agent"],
    needles: ["analysis_"],
    check: ({ node }, root) =>
      root
        ? ["analysis_summary_prompt", "analysis_successful_prompt", "analysis_user_sentiment_prompt"]
          .filter((f) => Object.hasOwn(node, f)).length
        : 0
  },
  {
    id: "agent-language-multi",
    kinds: ["agent"],
    needles: ["\"multi\""],
    check: ({ node }, root) => root && node.language === "multi" ? 1 : 0
  },
  {
    id: "calendar-cal-tools",
    kinds: toolHolders,
    needles: ["_cal\""],
    check: ({ node }) => node.type === "check_availability_cal" || node.type === "book_appointment_cal" ? 1 : 0
  }
]

/** One walk; at every object, every rule of the kind is asked (the rules' own checks, no pre-filter). */
const naiveCheck = (kind: ConfigKind, json: unknown): number => {
  const rules = naiveRules.filter((rule) => rule.kinds.includes(kind))
  let findings = 0
  const walk = (value: unknown, path: Path, containerKey: string | undefined): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item, path, containerKey)
    } else if (isRecord(value)) {
      const visit: Visit = { node: value, path, containerKey }
      for (const rule of rules) findings += rule.check(visit, path.length === 0)
      for (const key in value) walk(value[key], NESTED, key)
    }
  }
  walk(json, [], undefined)
  return findings
}
/** The path of every object below the root: the checks only ask whether a visit is the root. */
const NESTED: Path = ["*"]

// --- timing --------------------------------------------------------------------------------------

const median = (xs: Array<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

let sink = 0

/** Median µs per call over `samples` batches of `batch` calls, after a warm-up. */
const time = (fn: () => number, batch: number, samples = 41): number => {
  for (let i = 0; i < batch * 5; i++) sink += fn()
  const results: Array<number> = []
  for (let s = 0; s < samples; s++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < batch; i++) sink += fn()
    results.push(Number(process.hrtime.bigint() - start) / 1000 / batch)
  }
  return median(results)
}

interface Case {
  readonly name: string
  readonly kind: ConfigKind
  readonly json: unknown
  readonly batch: number
}

const cases: ReadonlyArray<Case> = [
  { name: "typical agent config (with 2 legacy fields)", kind: "agent", json: typicalAgent, batch: 2000 },
  { name: "typical agent config (clean)", kind: "agent", json: cleanAgent, batch: 2000 },
  { name: "LLM: 4 general tools, 4 states x 3 tools", kind: "llm", json: typicalLlm, batch: 500 },
  { name: "conversation flow, 50 nodes", kind: "conversation-flow", json: flow50, batch: 100 }
]

const ROUNDS = 5
const fmt = (us: number) => us < 10 ? us.toFixed(2) : us < 100 ? us.toFixed(1) : us.toFixed(0)

const rows: Array<string> = []
let agentMedian = 0
for (const c of cases) {
  const engineCount = checkConfig(c.kind, c.json, AS_OF).length
  const naiveCount = naiveCheck(c.kind, c.json)
  if (engineCount !== naiveCount) {
    throw new Error(`${c.name}: engine found ${engineCount}, baseline ${naiveCount}; the comparison is not fair`)
  }
  const engineRounds: Array<number> = []
  const naiveRounds: Array<number> = []
  for (let round = 0; round < ROUNDS; round++) {
    engineRounds.push(time(() => checkConfig(c.kind, c.json, AS_OF).length, c.batch, 9))
    naiveRounds.push(time(() => naiveCheck(c.kind, c.json), c.batch, 9))
  }
  const engine = median(engineRounds)
  const naive = median(naiveRounds)
  if (c.kind === "agent") agentMedian = Math.max(agentMedian, engine)
  rows.push(
    `| ${c.name} | ${JSON.stringify(c.json).length} | ${engineCount} | ${fmt(engine)} | ${fmt(naive)} | ${
      (naive / engine).toFixed(2)
    }x |`
  )
}

const endpointPaths = ["/list-agents", "/publish-agent/ag_1?x=1", "/v2/list-batch-tests", "/get-agent-versions/a/"]
const endpoint = time(() => {
  let n = 0
  for (const p of endpointPaths) n += checkEndpoint("GET", p, AS_OF) === undefined ? 0 : 1
  return n
}, 2000) / endpointPaths.length

const out = [
  `Deprecation engine benchmark (Node ${process.version}, ${os.cpus().length} cores, as of 2026-11-01; ` +
  `medians of ${ROUNDS} alternating rounds of 9 batches each)`,
  "",
  "| case | JSON bytes | findings | engine µs | one-walk baseline µs | baseline / engine |",
  "|---|---:|---:|---:|---:|---:|",
  ...rows,
  `| checkEndpoint (method + path) | - | - | ${fmt(endpoint)} | - | - |`,
  "",
  `Target: typical agent config < 50 µs: ${agentMedian < 50 ? "met" : "NOT met"} (${fmt(agentMedian)} µs).`,
  ""
]
process.stdout.write(out.join("\n"))
if (sink === -1) process.stdout.write("")
