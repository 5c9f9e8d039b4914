/**
 * A generated repository of agent, LLM, conversation-flow and phone-number configs (mixed JSON and
 * YAML, about 5 KB each) plus client source files, with planted violations whose exact counts are
 * returned as a manifest. Deterministic (seeded PRNG). Used by the 10,000-file end-to-end test and
 * by tools/bench/lint.bench.ts, which also hands the same files to Spectral.
 *
 * Planted per violating config (one rule each, like the Spectral measurement in
 * shared/reference/spectral-floor.md): scalar language "multi" (1 finding), analysis prompt fields
 * (1-3), phone-number single-agent fields (1-4), tools/tool_ids on conversation nodes (1-2), built-in
 * calendar tool types (1-2), cold transfer with show_transferee_as_caller and no mode (1). Clean
 * files carry near misses that must not fire: warm transfers with show_transferee_as_caller, cold
 * transfers with a mode, subagent nodes with tools, custom tools *named* check_availability_cal,
 * locale-array languages and weighted agent lists.
 */
import { dump } from "js-yaml"
import * as fs from "node:fs"
import * as path from "node:path"

/** Rules planted in the configs, with the level they have from 2026-10-31 on. */
export const plantedRules = {
  "agent-language-multi": "error",
  "legacy-analysis-prompts": "error",
  "phone-number-single-agent-fields": "warning",
  "conversation-node-tools": "warning",
  "calendar-cal-tools": "error",
  "cold-transfer-mode": "warning",
  "list-agents-v1": "error",
  "create-web-call-v2": "warning"
} as const

export type PlantedRule = keyof typeof plantedRules

/** What was planted. */
export interface Manifest {
  readonly configFiles: number
  readonly sourceFiles: number
  readonly jsonFiles: number
  readonly yamlFiles: number
  readonly bytes: number
  /** Expected findings per rule. */
  readonly findings: Record<PlantedRule, number>
  /** Files with at least one finding, per rule. */
  readonly files: Record<PlantedRule, number>
  readonly total: number
  readonly filesWithFindings: number
}

/** A seeded generator (mulberry32): the same corpus or inputs on every run, so a failure replays. */
export const mulberry32 = (seed: number) => () => {
  seed |= 0
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

type Rnd = () => number
const pick = <A>(rnd: Rnd, xs: ReadonlyArray<A>): A => xs[Math.floor(rnd() * xs.length)]!
const int = (rnd: Rnd, lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1))

const WORDS = (
  "the caller wants to book reschedule cancel an appointment confirm their address ask about opening hours " +
  "billing questions transfer to a human agent when asked politely collect the name and phone number verify " +
  "identity before sharing account details summarise the request and read back the date and time"
).split(" ")

const sentence = (rnd: Rnd, n: number) => Array.from({ length: n }, () => pick(rnd, WORDS)).join(" ")

const id = (rnd: Rnd, prefix: string) => `${prefix}_${Math.floor(rnd() * 0xffffffff).toString(16).padStart(8, "0")}`

const VOICE_MODELS = ["eleven_flash_v2_5", "eleven_multilingual_v2", "sonic-3", "tts-1"]
const LLM_MODELS = ["gpt-4.1", "gpt-4.1-mini", "gpt-5-mini", "claude-4.5-haiku", "gemini-3.0-flash"]

const customTool = (rnd: Rnd, name?: string) => ({
  type: "custom",
  name: name ?? `lookup_${int(rnd, 1, 999)}`,
  description: sentence(rnd, 12),
  url: `https://hooks.example.com/tools/${int(rnd, 1, 9999)}`,
  speak_during_execution: rnd() < 0.5,
  speak_after_execution: true,
  parameters: {
    type: "object",
    properties: { customer_id: { type: "string", description: sentence(rnd, 6) } },
    required: ["customer_id"]
  }
})

const warmTransfer = (rnd: Rnd) => ({
  type: "transfer_call",
  name: "transfer_to_human",
  description: sentence(rnd, 10),
  transfer_destination: { type: "predefined", number: "+14155550123" },
  transfer_option: { type: "warm_transfer", show_transferee_as_caller: true, on_hold_music: "relaxing_sound" }
})

const coldTransfer = (rnd: Rnd, planted: boolean) => ({
  type: "transfer_call",
  name: "transfer_to_desk",
  description: sentence(rnd, 10),
  transfer_destination: { type: "predefined", number: "+14155550124" },
  transfer_option: planted
    ? { type: "cold_transfer", show_transferee_as_caller: true }
    : { type: "cold_transfer", show_transferee_as_caller: true, cold_transfer_mode: "sip_invite" }
})

const calendarTool = (rnd: Rnd, i: number) => ({
  type: i % 2 === 0 ? "check_availability_cal" : "book_appointment_cal",
  name: `calendar_${i}`,
  cal_api_key: "cal_live_xxx",
  event_type_id: 1000 + i,
  timezone: "America/New_York",
  description: sentence(rnd, 8)
})

const pad = (rnd: Rnd, doc: Record<string, unknown>, target: number) => {
  let notes = ""
  while (JSON.stringify(doc).length + notes.length < target) notes += `${sentence(rnd, 14)}. `
  if (notes.length > 0) doc["notes"] = notes
  return doc
}

type Plant = { readonly rule: PlantedRule; readonly count: number } | undefined

const agent = (rnd: Rnd, violation: boolean): { doc: Record<string, unknown>; plant: Plant } => {
  const doc: Record<string, unknown> = {
    agent_id: id(rnd, "agent"),
    version: int(rnd, 1, 40),
    agent_name: `Agent ${int(rnd, 1, 9999)}`,
    response_engine: { type: "retell-llm", llm_id: id(rnd, "llm"), version: int(rnd, 1, 9) },
    voice_id: pick(rnd, ["11labs-Adrian", "openai-Alloy", "cartesia-Cleo"]),
    voice_model: pick(rnd, VOICE_MODELS),
    fallback_voice_ids: ["openai-Alloy", "deepgram-Angus"],
    voice_temperature: 1,
    voice_speed: 1.05,
    responsiveness: 0.9,
    interruption_sensitivity: 0.8,
    enable_backchannel: true,
    backchannel_words: ["yeah", "uh-huh", "right"],
    language: pick(rnd, [["en-US", "es-ES"], "en-US", "de-DE"]),
    webhook_url: "https://hooks.example.com/voice",
    boosted_keywords: ["Acme", "appointment", "reschedule"],
    pronunciation_dictionary: [{ word: "Acme", alphabet: "ipa", phoneme: "ˈækmi" }],
    end_call_after_silence_ms: 600000,
    max_call_duration_ms: 3600000,
    voicemail_option: { action: { type: "static_text", text: sentence(rnd, 10) } },
    post_call_analysis_data: [
      { type: "string", name: "customer_name", description: "The caller's name", examples: ["Jane Doe"] },
      { type: "enum", name: "intent", description: "Why they called", choices: ["book", "cancel", "other"] }
    ],
    post_call_analysis_model: pick(rnd, LLM_MODELS),
    user_dtmf_options: { digit_limit: 10, termination_key: "#", timeout_ms: 3000 },
    guardrail_config: { output_topics: ["harassment"], input_topics: ["platform_integrity_jailbreaking"] },
    timezone: "America/New_York"
  }
  if (!violation) return { doc, plant: undefined }
  if (rnd() < 0.5) {
    doc["language"] = "multi"
    return { doc, plant: { rule: "agent-language-multi", count: 1 } }
  }
  const n = int(rnd, 1, 3)
  const fields = ["analysis_summary_prompt", "analysis_successful_prompt", "analysis_user_sentiment_prompt"]
  for (const field of fields.slice(0, n)) doc[field] = sentence(rnd, 8)
  return { doc, plant: { rule: "legacy-analysis-prompts", count: n } }
}

const llm = (rnd: Rnd, violation: boolean): { doc: Record<string, unknown>; plant: Plant } => {
  const tools: Array<unknown> = [
    { type: "end_call", name: "end_call", description: "End the call when the caller is done" },
    warmTransfer(rnd),
    coldTransfer(rnd, false),
    customTool(rnd, "check_availability_cal")
  ]
  const doc: Record<string, unknown> = {
    llm_id: id(rnd, "llm"),
    version: int(rnd, 1, 20),
    model: pick(rnd, LLM_MODELS),
    model_temperature: 0.2,
    general_prompt: sentence(rnd, 120),
    begin_message: "Hello, how can I help?",
    general_tools: tools,
    states: Array.from({ length: 3 }, (_, s) => ({
      name: `state_${s}`,
      state_prompt: sentence(rnd, 40),
      edges: [{ destination_state_name: `state_${(s + 1) % 3}`, description: sentence(rnd, 8) }],
      tools: [customTool(rnd)]
    })),
    starting_state: "state_0"
  }
  if (!violation) return { doc, plant: undefined }
  if (rnd() < 0.55) {
    const n = int(rnd, 1, 2)
    for (let k = 0; k < n; k++) tools.push(calendarTool(rnd, k))
    return { doc, plant: { rule: "calendar-cal-tools", count: n } }
  }
  tools.push(coldTransfer(rnd, true))
  return { doc, plant: { rule: "cold-transfer-mode", count: 1 } }
}

const node = (rnd: Rnd, n: number, type: string): Record<string, unknown> => {
  const base: Record<string, unknown> = {
    id: `node_${n}`,
    name: `Node ${n}`,
    type,
    display_position: { x: n * 120, y: int(rnd, 0, 800) },
    instruction: { type: "prompt", text: sentence(rnd, 25) },
    edges: [{
      id: `edge_${n}`,
      destination_node_id: `node_${n + 1}`,
      transition_condition: { type: "prompt", prompt: sentence(rnd, 6) }
    }]
  }
  if (type === "subagent") {
    base["tools"] = [customTool(rnd)]
    base["tool_ids"] = ["tool_a"]
  }
  if (type === "transfer_call") {
    base["transfer_destination"] = { type: "predefined", number: "+14155550125" }
    base["transfer_option"] = { type: "warm_transfer", show_transferee_as_caller: true }
  }
  return base
}

const flow = (rnd: Rnd, violation: boolean): { doc: Record<string, unknown>; plant: Plant } => {
  const nodes = [
    node(rnd, 0, "conversation"),
    node(rnd, 1, "subagent"),
    node(rnd, 2, "conversation"),
    node(rnd, 3, "function"),
    node(rnd, 4, "transfer_call"),
    node(rnd, 5, "end")
  ]
  const doc: Record<string, unknown> = {
    conversation_flow_id: id(rnd, "flow"),
    version: int(rnd, 1, 12),
    model_choice: { type: "cascading", model: pick(rnd, LLM_MODELS) },
    start_speaker: "agent",
    global_prompt: sentence(rnd, 60),
    nodes,
    tools: [customTool(rnd), customTool(rnd, "book_appointment_cal")],
    start_node_id: "node_0"
  }
  if (!violation) return { doc, plant: undefined }
  const n = int(rnd, 1, 2)
  nodes[0]!["tools"] = [customTool(rnd)]
  if (n === 2) nodes[0]!["tool_ids"] = ["tool_b"]
  return { doc, plant: { rule: "conversation-node-tools", count: n } }
}

const phone = (rnd: Rnd, violation: boolean): { doc: Record<string, unknown>; plant: Plant } => {
  const doc: Record<string, unknown> = {
    phone_number: `+1415555${String(int(rnd, 0, 9999)).padStart(4, "0")}`,
    phone_number_type: "retell-twilio",
    nickname: `Line ${int(rnd, 1, 999)}`,
    area_code: 415,
    inbound_agents: [{ agent_id: id(rnd, "agent"), weight: 0.7 }, { agent_id: id(rnd, "agent"), weight: 0.3 }],
    outbound_agents: [{ agent_id: id(rnd, "agent"), agent_version: 3, weight: 1 }],
    allowed_inbound_country_list: ["US", "CA"],
    allowed_outbound_country_list: ["US"],
    inbound_webhook_url: "https://hooks.example.com/inbound"
  }
  if (!violation) return { doc, plant: undefined }
  const fields = [
    "inbound_sms_agent_id",
    "inbound_sms_agent_version",
    "outbound_sms_agent_id",
    "outbound_sms_agent_version"
  ]
  const n = int(rnd, 1, 4)
  for (const field of fields.slice(0, n)) doc[field] = field.endsWith("version") ? 2 : id(rnd, "agent")
  return { doc, plant: { rule: "phone-number-single-agent-fields", count: n } }
}

const SOURCE_TEMPLATES: ReadonlyArray<{ ext: string; clean: string; planted?: { rule: PlantedRule; text: string } }> = [
  {
    ext: "ts",
    clean:
      "export const agents = (base: string) =>\n  fetch(`${base}/v2/list-agents`, { method: \"POST\", body: \"{}\" })\n",
    planted: { rule: "list-agents-v1", text: "export const agents = (base: string) => fetch(`${base}/list-agents`)\n" }
  },
  {
    ext: "py",
    clean: "def kbs(client):\n    return client.get(f\"{BASE}/list-knowledge-bases\")\n",
    planted: {
      rule: "create-web-call-v2",
      text: "def web_call(client):\n    return requests.post(f\"{BASE}/v2/create-web-call\", json={})\n"
    }
  },
  { ext: "go", clean: "package client\n\nconst versions = \"/list-agent-versions/\"\n" }
]

const writeJson = (file: string, doc: unknown) => {
  const text = `${JSON.stringify(doc, null, 2)}\n`
  fs.writeFileSync(file, text)
  return text.length
}

const writeYaml = (file: string, doc: unknown, comment: string) => {
  const text = `# ${comment}\n${dump(doc, { lineWidth: -1 })}`
  fs.writeFileSync(file, text)
  return text.length
}

/** Writes `configs` config files and `sources` source files under `dir`; returns what was planted. */
export const writeCorpus = (
  dir: string,
  options: {
    readonly configs: number
    readonly sources: number
    readonly seed?: number
    readonly violationRate?: number
  }
): Manifest => {
  const rnd = mulberry32(options.seed ?? 42)
  const rate = options.violationRate ?? 0.1
  const findings = Object.fromEntries(Object.keys(plantedRules).map((k) => [k, 0])) as Record<PlantedRule, number>
  const files = Object.fromEntries(Object.keys(plantedRules).map((k) => [k, 0])) as Record<PlantedRule, number>
  let bytes = 0
  let jsonFiles = 0
  let yamlFiles = 0
  let filesWithFindings = 0
  const kinds = [
    { name: "agents", share: 0.35, make: agent, size: 5200 },
    { name: "llms", share: 0.25, make: llm, size: 5600 },
    { name: "flows", share: 0.25, make: flow, size: 6000 },
    { name: "phone-numbers", share: 0.15, make: phone, size: 2800 }
  ]
  const record = (plant: Plant) => {
    if (plant === undefined) return
    findings[plant.rule] += plant.count
    files[plant.rule]++
    filesWithFindings++
  }
  for (let i = 0; i < options.configs; i++) {
    const team = `team-${String(Math.floor((i * 10) / Math.max(options.configs, 1))).padStart(2, "0")}`
    const r = rnd()
    let acc = 0
    const kind = kinds.find((k) => (acc += k.share) > r) ?? kinds[0]!
    const folder = path.join(dir, "corpus", team, kind.name)
    fs.mkdirSync(folder, { recursive: true })
    const { doc, plant } = kind.make(rnd, rnd() < rate)
    pad(rnd, doc, kind.size)
    record(plant)
    const yaml = i % 5 === 1 || i % 5 === 3
    const file = path.join(folder, `${kind.name.slice(0, -1)}-${String(i).padStart(5, "0")}.${yaml ? "yaml" : "json"}`)
    if (yaml) {
      yamlFiles++
      bytes += writeYaml(file, doc, `${kind.name.slice(0, -1)} ${i}, generated`)
    } else {
      jsonFiles++
      bytes += writeJson(file, doc)
    }
  }
  for (let i = 0; i < options.sources; i++) {
    const template = SOURCE_TEMPLATES[i % SOURCE_TEMPLATES.length]!
    const planted = template.planted !== undefined && rnd() < rate * 2
    const folder = path.join(dir, "src", `module-${String(i % 20).padStart(2, "0")}`)
    fs.mkdirSync(folder, { recursive: true })
    const text = `// generated client ${i}\n${planted ? template.planted!.text : template.clean}`
    fs.writeFileSync(path.join(folder, `client-${i}.${template.ext}`), text)
    bytes += text.length
    if (planted) record({ rule: template.planted!.rule, count: 1 })
  }
  const total = Object.values(findings).reduce((a, b) => a + b, 0)
  return {
    configFiles: options.configs,
    sourceFiles: options.sources,
    jsonFiles,
    yamlFiles,
    bytes,
    findings,
    files,
    total,
    filesWithFindings
  }
}

/**
 * One large conversation flow (`nodes` conversation/subagent/transfer nodes) of about `megabytes`
 * MB as JSON, with `plantsPerRule` conversation nodes with tools, calendar tools and cold transfers
 * without a mode (3 * plantsPerRule findings).
 */
export const bigFlow = (megabytes: number, plantsPerRule: number, seed = 7): Record<string, unknown> => {
  const rnd = mulberry32(seed)
  const nodes: Array<Record<string, unknown>> = []
  const tools: Array<unknown> = []
  let size = 0
  let n = 0
  while (size < megabytes * 1_000_000) {
    const type = pick(rnd, ["conversation", "conversation", "subagent", "transfer_call", "function"])
    const item = node(rnd, n++, type)
    size += JSON.stringify(item).length + 40
    nodes.push(item)
  }
  const step = Math.floor(nodes.length / (plantsPerRule + 1))
  for (let k = 0; k < plantsPerRule; k++) {
    const convo = nodes[(k + 1) * step]!
    convo["type"] = "conversation"
    delete convo["tool_ids"]
    convo["tools"] = [customTool(rnd)]
    const transfer = nodes[(k + 1) * step + 1]!
    transfer["type"] = "transfer_call"
    delete transfer["tools"]
    delete transfer["tool_ids"]
    transfer["transfer_destination"] = { type: "predefined", number: "+14155550126" }
    transfer["transfer_option"] = { type: "cold_transfer", show_transferee_as_caller: false }
    tools.push(calendarTool(rnd, k))
  }
  return {
    conversation_flow_id: "flow_big",
    version: 1,
    model_choice: { type: "cascading", model: "gpt-4.1" },
    start_speaker: "agent",
    global_prompt: sentence(rnd, 60),
    nodes,
    tools,
    start_node_id: "node_0"
  }
}
