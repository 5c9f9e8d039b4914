/**
 * Guessing the kind of a config document from its content, for the linter, which reads files
 * that do not say what they hold.
 *
 * The guess looks only at top-level keys: ids first (`conversation_flow_component_id`,
 * `conversation_flow_id`, `llm_id`, `agent_id`), then keys only one kind carries (an agent's
 * `response_engine`/`voice_id`, a phone number's agent bindings, a flow's `nodes`, an LLM's
 * `general_prompt`/`general_tools`/`states`), then a tool's `type`. A flow carries `model_choice` or
 * `start_speaker` (required on create); a document with `nodes` and neither is a flow component.
 * `undefined` means "not a config the engine checks".
 *
 * @category models
 */
import { Predicate } from "effect"
import type { ConfigKind } from "./Rule.ts"

const agentKeys = ["response_engine", "voice_id", "agent_name", "voice_model"]

const phoneNumberKeys = [
  "phone_number_type",
  "inbound_agents",
  "outbound_agents",
  "inbound_sms_agents",
  "outbound_sms_agents",
  "inbound_agent_id",
  "inbound_agent_version",
  "outbound_agent_id",
  "outbound_agent_version",
  "inbound_sms_agent_id",
  "inbound_sms_agent_version",
  "outbound_sms_agent_id",
  "outbound_sms_agent_version",
  "inbound_webhook_url",
  "inbound_sms_webhook_url",
  "area_code",
  "number_provider",
  "termination_uri"
]

const llmKeys = ["general_prompt", "general_tools", "states", "starting_state", "s2s_model", "begin_message"]

const flowKeys = ["model_choice", "start_speaker", "global_prompt"]

const toolTypes: ReadonlySet<string> = new Set([
  "end_call",
  "transfer_call",
  "check_availability_cal",
  "book_appointment_cal",
  "agent_swap",
  "press_digit",
  "send_sms",
  "custom",
  "code",
  "extract_dynamic_variable",
  "bridge_transfer",
  "cancel_transfer",
  "mcp"
])

/**
 * The config kind a JSON document most likely is, or `undefined`.
 *
 * @category combinators
 */
export const detectKind = (json: unknown): ConfigKind | undefined => {
  if (!Predicate.isObject(json)) return undefined
  const has = (key: string) => Object.hasOwn(json, key)
  const hasAny = (keys: ReadonlyArray<string>) => keys.some(has)
  if (has("conversation_flow_component_id")) return "flow-component"
  if (has("conversation_flow_id")) return "conversation-flow"
  if (has("llm_id")) return "llm"
  if (has("agent_id") || hasAny(agentKeys)) return "agent"
  if (hasAny(phoneNumberKeys)) return "phone-number"
  if (Array.isArray(json.nodes)) return hasAny(flowKeys) ? "conversation-flow" : "flow-component"
  if (hasAny(llmKeys) || (typeof json.model === "string" && !has("type"))) return "llm"
  if (typeof json.type === "string" && toolTypes.has(json.type)) return "tool"
  if (has("phone_number") && !has("contact_id")) return "phone-number"
  return undefined
}
