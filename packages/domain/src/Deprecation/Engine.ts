/**
 * The deprecation rule engine over config documents: agents, LLMs, conversation flows, flow
 * components, phone numbers and tools, as plain JSON values.
 *
 * Each check belongs to one rule of the schedule and declares where it looks: at top-level keys of
 * the document (`root`), at every object whose `type` is one of some values (`types`, e.g. a cold
 * transfer option or a calendar tool wherever it sits: LLM `general_tools`, state `tools`, flow
 * `tools`, flow nodes, components), or at objects held under a key (`container`, e.g. every
 * `model_choice`). The checks are grouped per config kind once, at module load; `checkConfig` then
 * runs the root checks and walks the tree once, only for kinds that have nested checks (agents and
 * phone numbers need no walk). Findings carry the JSON path of the offending key and, where the
 * migration is mechanical, a fix (see Fixes.ts).
 *
 * @category models
 */
import { Predicate } from "effect"
import { currentLlmModels, currentVoiceModels } from "./Catalogue.ts"
import { type Fix, type FixOperation, remove, set } from "./Fixes.ts"
import { checkAgentLanguage } from "./Language.ts"
import {
  type AsOf,
  type ConfigKind,
  configKinds,
  type Finding,
  makeFinding,
  type RuleId,
  toEpochMillis
} from "./Rule.ts"
import { getRule } from "./Schedule.ts"

type JsonObject = { readonly [key: string]: unknown }

interface Scan {
  readonly at: number
  readonly findings: Array<Finding>
  /** Path of the object being visited (a stack: pushed and popped by the walk). */
  readonly path: Array<string | number>
}

type RootCheck = (scan: Scan, root: JsonObject) => void
type ObjectCheck = (scan: Scan, node: JsonObject, containerKey: string | undefined) => void

interface Check {
  readonly rule: RuleId
  readonly kinds: ReadonlyArray<ConfigKind>
  readonly root?: RootCheck
  readonly types?: ReadonlyArray<string>
  readonly container?: string
  readonly object?: ObjectCheck
}

const own = (node: JsonObject, key: string): boolean => Object.hasOwn(node, key)

const childPath = (scan: Scan, key: string | number): Array<string | number> => [...scan.path, key]

// --- spec row 1: cold transfer `show_transferee_as_caller` without `cold_transfer_mode` ----------

const coldTransferRule = getRule("cold-transfer-mode")

const coldTransfer: ObjectCheck = (scan, node) => {
  const show = node.show_transferee_as_caller
  if (show === undefined || show === null) return
  const mode = node.cold_transfer_mode
  const path = childPath(scan, "show_transferee_as_caller")
  if (mode === undefined || mode === null) {
    // Before 2026-01-23 `true` meant SIP INVITE and `false` SIP REFER: the fix keeps that method.
    const fix: Fix | undefined = show === true
      ? {
        description: "set cold_transfer_mode to \"sip_invite\" (the method show_transferee_as_caller: true chose)",
        safe: true,
        operations: [set(childPath(scan, "cold_transfer_mode"), "sip_invite")]
      }
      : show === false
      ? {
        description: "set cold_transfer_mode to \"sip_refer\" (the method show_transferee_as_caller: false chose) " +
          "and drop show_transferee_as_caller, which has no effect under sip_refer",
        safe: true,
        operations: [set(childPath(scan, "cold_transfer_mode"), "sip_refer"), remove(path)]
      }
      : undefined
    const subject = "\"show_transferee_as_caller\" without \"cold_transfer_mode\" (it no longer selects SIP REFER " +
      "or SIP INVITE)"
    scan.findings.push(makeFinding(coldTransferRule, scan.at, path, subject, fix))
  } else if (mode === "sip_refer" && show === true) {
    const subject = "\"show_transferee_as_caller\": true under \"cold_transfer_mode\": \"sip_refer\" (caller ID " +
      "display works only under sip_invite)"
    scan.findings.push(makeFinding(coldTransferRule, scan.at, path, subject))
  }
}

// --- spec row 2: phone number single-agent fields ---------------------------------------------

const singleAgentRule = getRule("phone-number-single-agent-fields")

interface Binding {
  readonly id: string
  readonly version: string
  readonly list: string
}

const bindings: ReadonlyArray<Binding> = ["inbound", "outbound", "inbound_sms", "outbound_sms"].map((prefix) => ({
  id: `${prefix}_agent_id`,
  version: `${prefix}_agent_version`,
  list: `${prefix}_agents`
}))

const sameEntry = (entry: unknown, agentId: string, version: unknown): boolean =>
  Predicate.isObject(entry) && entry.agent_id === agentId && (entry.agent_version ?? null) === (version ?? null)

const bindingFix = (root: JsonObject, binding: Binding, hasId: boolean, hasVersion: boolean): Fix | undefined => {
  // A version without an agent id names no agent: which binding it belonged to is for a person.
  if (!hasId) return undefined
  const id = root[binding.id]
  const version = hasVersion ? root[binding.version] : undefined
  if (version !== undefined && version !== null && typeof version !== "string" && typeof version !== "number") {
    return undefined
  }
  const list = root[binding.list]
  const removals: Array<FixOperation> = hasVersion
    ? [remove([binding.id]), remove([binding.version])]
    : [remove([binding.id])]
  const description = `move ${binding.id}${hasVersion ? ` and ${binding.version}` : ""} into ${binding.list}`
  if (id === null) {
    // No agent bound: the list equivalent is an explicit null (or an existing empty list).
    if (list === undefined) return { description, safe: true, operations: [set([binding.list], null), ...removals] }
    if (list === null || (Array.isArray(list) && list.length === 0)) {
      return { description, safe: true, operations: removals }
    }
    return undefined
  }
  if (typeof id !== "string" || id.length === 0) return undefined
  const entry = version === undefined || version === null
    ? { agent_id: id, weight: 1 }
    : { agent_id: id, agent_version: version, weight: 1 }
  if (list === undefined) {
    return {
      description: `${description} as one agent with weight 1`,
      safe: true,
      operations: [set([binding.list], [entry]), ...removals]
    }
  }
  // Both spellings present and saying the same thing: the old one is redundant.
  if (Array.isArray(list) && list.length === 1 && sameEntry(list[0], id, version)) {
    return { description, safe: true, operations: removals }
  }
  return undefined
}

const phoneNumberBindings: RootCheck = (scan, root) => {
  for (const binding of bindings) {
    const hasId = own(root, binding.id)
    const hasVersion = own(root, binding.version)
    if (!hasId && !hasVersion) continue
    const fix = bindingFix(root, binding, hasId, hasVersion)
    const replacement = `the weighted list \`${binding.list}\` (items {agent_id, agent_version?, weight})`
    if (hasId) {
      const subject = `the single-agent field "${binding.id}"`
      scan.findings.push(makeFinding(singleAgentRule, scan.at, [binding.id], subject, fix, replacement))
    }
    if (hasVersion) {
      const subject = `the single-agent field "${binding.version}"`
      scan.findings.push(makeFinding(singleAgentRule, scan.at, [binding.version], subject, fix, replacement))
    }
  }
}

// --- spec row 3: retired models ----------------------------------------------------------------

const modelRule = getRule("model-retirements")

const checkModel = (
  scan: Scan,
  value: unknown,
  path: ReadonlyArray<string | number>,
  catalogue: ReadonlySet<string>
) => {
  if (typeof value !== "string" || catalogue.has(value)) return
  const subject = `the model "${value}", which is not in the catalogue of current models,`
  scan.findings.push(makeFinding(modelRule, scan.at, path, subject))
}

const agentModels: RootCheck = (scan, root) => {
  checkModel(scan, root.voice_model, ["voice_model"], currentVoiceModels)
  checkModel(scan, root.post_call_analysis_model, ["post_call_analysis_model"], currentLlmModels)
}

const llmModel: RootCheck = (scan, root) => checkModel(scan, root.model, ["model"], currentLlmModels)

const modelChoice: ObjectCheck = (scan, node) =>
  checkModel(scan, node.model, childPath(scan, "model"), currentLlmModels)

// --- spec row 4: tools on conversation nodes ---------------------------------------------------

const nodeToolsRule = getRule("conversation-node-tools")

const conversationNodeTools: ObjectCheck = (scan, node, containerKey) => {
  if (containerKey !== "nodes") return
  const tools = node.tools !== undefined && node.tools !== null
  const toolIds = node.tool_ids !== undefined && node.tool_ids !== null
  if (!tools && !toolIds) return
  const keys = tools && toolIds ? ["tools", "tool_ids"] : tools ? ["tools"] : ["tool_ids"]
  const empty = keys.every((key) => {
    const value = node[key]
    return Array.isArray(value) && value.length === 0
  })
  const fix: Fix = empty
    ? {
      description: `remove the empty ${keys.join(" and ")} from the conversation node`,
      safe: true,
      operations: keys.map((key) => remove(childPath(scan, key)))
    }
    : {
      description: "change the node's type to \"subagent\" (a conversation node that owns tools)",
      safe: true,
      operations: [set(childPath(scan, "type"), "subagent")]
    }
  for (const key of keys) {
    const subject = `"${key}" on a node of type "conversation"`
    scan.findings.push(makeFinding(nodeToolsRule, scan.at, childPath(scan, key), subject, fix))
  }
}

// --- spec row 5: agent analysis prompt fields ---------------------------------------------------

const analysisRule = getRule("legacy-analysis-prompts")

const promptFields = [
  { key: "analysis_summary_prompt", call: "call_summary", chat: "chat_summary" },
  { key: "analysis_successful_prompt", call: "call_successful", chat: "chat_successful" },
  { key: "analysis_user_sentiment_prompt", call: "user_sentiment", chat: "user_sentiment" }
] as const

type PromptField = (typeof promptFields)[number]

const analysisFix = (root: JsonObject, present: ReadonlyArray<PromptField>): Fix | undefined => {
  // A chat agent carries post_chat_analysis_data (presets chat_*); everything else is a voice agent.
  const chat = own(root, "post_chat_analysis_data") && !own(root, "post_call_analysis_data")
  const listKey = chat ? "post_chat_analysis_data" : "post_call_analysis_data"
  const existing = root[listKey]
  if (existing !== undefined && existing !== null && !Array.isArray(existing)) return undefined
  const entries: ReadonlyArray<unknown> = Array.isArray(existing) ? existing : []
  const added: Array<{ type: "system-presets"; name: string; description: string }> = []
  for (const field of present) {
    const prompt = root[field.key]
    if (prompt === null || prompt === "") continue
    if (typeof prompt !== "string") return undefined
    const name = chat ? field.chat : field.call
    const preset = entries.find((entry) =>
      Predicate.isObject(entry) && entry.type === "system-presets" && entry.name === name
    )
    if (preset !== undefined) {
      // Already migrated with the same text: the old field is redundant. Different text: a person decides.
      if (Predicate.isObject(preset) && preset.description === prompt) continue
      return undefined
    }
    added.push({ type: "system-presets", name, description: prompt })
  }
  const operations: Array<FixOperation> = added.length > 0 ? [set([listKey], [...entries, ...added])] : []
  for (const field of present) operations.push(remove([field.key]))
  return {
    description: `move the analysis prompts into ${listKey} as system presets`,
    safe: true,
    operations
  }
}

const analysisPrompts: RootCheck = (scan, root) => {
  if (
    !own(root, "analysis_summary_prompt") && !own(root, "analysis_successful_prompt") &&
    !own(root, "analysis_user_sentiment_prompt")
  ) return
  const present = promptFields.filter((field) => own(root, field.key))
  const fix = analysisFix(root, present)
  for (const field of present) {
    const subject = `the agent field "${field.key}"`
    scan.findings.push(makeFinding(analysisRule, scan.at, [field.key], subject, fix))
  }
}

// --- spec row 7: scalar agent language `multi` ---------------------------------------------------

const agentLanguage: RootCheck = (scan, root) => {
  const finding = checkAgentLanguage(root.language, scan.at)
  if (finding !== undefined) scan.findings.push(finding)
}

// --- spec row 12: built-in calendar tools --------------------------------------------------------

const calendarRule = getRule("calendar-cal-tools")

const calendarTool: ObjectCheck = (scan, node) => {
  const subject = `the built-in calendar tool type "${String(node.type)}"`
  scan.findings.push(makeFinding(calendarRule, scan.at, childPath(scan, "type"), subject))
}

// --- tables ------------------------------------------------------------------------------------

const flowKinds: ReadonlyArray<ConfigKind> = ["conversation-flow", "flow-component"]
const toolHolders: ReadonlyArray<ConfigKind> = ["llm", "conversation-flow", "flow-component", "tool"]

const checks: ReadonlyArray<Check> = [
  { rule: "cold-transfer-mode", kinds: toolHolders, types: ["cold_transfer"], object: coldTransfer },
  { rule: "phone-number-single-agent-fields", kinds: ["phone-number"], root: phoneNumberBindings },
  { rule: "model-retirements", kinds: ["agent"], root: agentModels },
  { rule: "model-retirements", kinds: ["llm"], root: llmModel },
  { rule: "model-retirements", kinds: flowKinds, container: "model_choice", object: modelChoice },
  { rule: "conversation-node-tools", kinds: flowKinds, types: ["conversation"], object: conversationNodeTools },
  { rule: "legacy-analysis-prompts", kinds: ["agent"], root: analysisPrompts },
  { rule: "agent-language-multi", kinds: ["agent"], root: agentLanguage },
  {
    rule: "calendar-cal-tools",
    kinds: toolHolders,
    types: ["check_availability_cal", "book_appointment_cal"],
    object: calendarTool
  }
]

interface KindTable {
  readonly root: ReadonlyArray<RootCheck>
  readonly byType: ReadonlyMap<string, ReadonlyArray<ObjectCheck>>
  readonly byContainer: ReadonlyMap<string, ReadonlyArray<ObjectCheck>>
  readonly deep: boolean
}

const push = <A>(map: Map<string, Array<A>>, key: string, value: A) => {
  const list = map.get(key)
  if (list === undefined) map.set(key, [value])
  else list.push(value)
}

const tables: ReadonlyMap<ConfigKind, KindTable> = new Map(configKinds.map((kind) => {
  const root: Array<RootCheck> = []
  const byType = new Map<string, Array<ObjectCheck>>()
  const byContainer = new Map<string, Array<ObjectCheck>>()
  for (const check of checks) {
    if (!check.kinds.includes(kind)) continue
    if (check.root !== undefined) root.push(check.root)
    if (check.object !== undefined) {
      for (const type of check.types ?? []) push(byType, type, check.object)
      if (check.container !== undefined) push(byContainer, check.container, check.object)
    }
  }
  return [kind, { root, byType, byContainer, deep: byType.size > 0 || byContainer.size > 0 }]
}))

/**
 * The config kinds in which the engine checks a rule (empty for endpoint and integration rules).
 *
 * @category combinators
 */
export const kindsChecked = (rule: RuleId): ReadonlyArray<ConfigKind> =>
  configKinds.filter((kind) => checks.some((check) => check.rule === rule && check.kinds.includes(kind)))

const walk = (scan: Scan, table: KindTable, value: unknown, containerKey: string | undefined): void => {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i]
      // Stryker disable next-line LogicalOperator: equivalent — a walk into null or a primitive returns at once
      if (item !== null && typeof item === "object") {
        scan.path.push(i)
        walk(scan, table, item, containerKey)
        scan.path.pop()
      }
    }
    return
  }
  if (!Predicate.isObject(value)) return
  const node = value as JsonObject
  const type = node.type
  if (typeof type === "string") {
    const byType = table.byType.get(type)
    if (byType !== undefined) { for (const check of byType) check(scan, node, containerKey) }
  }
  if (containerKey !== undefined) {
    const byContainer = table.byContainer.get(containerKey)
    if (byContainer !== undefined) { for (const check of byContainer) check(scan, node, containerKey) }
  }
  for (const key in node) {
    const child = node[key]
    // Stryker disable next-line LogicalOperator: equivalent — a walk into null or a primitive returns at once
    if (child !== null && typeof child === "object") {
      scan.path.push(key)
      walk(scan, table, child, key)
      scan.path.pop()
    }
  }
}

/**
 * Checks a config document of a kind at `asOf` and returns its findings, root checks first, then
 * in document order.
 *
 * @category combinators
 */
export const checkConfig = (kind: ConfigKind, json: unknown, asOf: AsOf): ReadonlyArray<Finding> => {
  const table = tables.get(kind)
  if (table === undefined) return []
  const scan: Scan = { at: toEpochMillis(asOf), findings: [], path: [] }
  if (Predicate.isObject(json)) { for (const check of table.root) check(scan, json as JsonObject) }
  if (table.deep) walk(scan, table, json, undefined)
  return scan.findings
}

/**
 * The distinct fixes of some findings, in finding order: only the safe ones unless
 * `includeUnsafe` is set (a suggestion such as the `multi` locale list needs a person's review).
 *
 * @category combinators
 */
export const fixesOf = (findings: Iterable<Finding>, includeUnsafe = false): ReadonlyArray<Fix> => {
  const fixes = new Set<Fix>()
  for (const finding of findings) {
    if (finding.fix !== undefined && (includeUnsafe || finding.fix.safe)) fixes.add(finding.fix)
  }
  return [...fixes]
}
