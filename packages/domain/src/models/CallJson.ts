/**
 * The list-calls response as JSON text without the schema's encoder (issue 17, item 1; decision 0644): each call
 * object as read from `call_json` (store migration 0012, whose jsonb orders keys by length) rebuilt with `Call`'s
 * keys in `Call`'s order, which is what encoding it through `ListCallsResponse` produces, at a fraction of the cost
 * (the encoder walked every member of 100 calls: ~1.1 ms of a list-calls request's CPU in svc's profile).
 *
 * It is only ever the schema's own output: a value the schema would refuse or change (an unknown key, a member of
 * the wrong type) makes `listCallsJson` answer `undefined`, and the caller encodes that page through the schema
 * instead. `CallJson.test.ts` compares the two over randomized calls.
 */
import { Call, CallAnalysis, CallStatus, UserSentiment } from "./Call.ts"

type Json = Record<string, unknown>

// the schemas' own members and literals, so a new one cannot be missed here (an unknown key sends a page the
// schema's way until encodedCall copies it; CallJson.test.ts fails until then)
const statuses = new Set<unknown>(CallStatus.literals)
const sentiments = new Set<unknown>(UserSentiment.literals)
const callKeys = new Set(Object.keys(Call.fields))
const analysisKeys = new Set(Object.keys(CallAnalysis.fields))

/** A plain object, as JSON.parse makes them (not an array, a Date or another class's instance). */
const isObject = (value: unknown): value is Json => {
  if (typeof value !== "object" || value === null) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

const finite = (value: unknown) => typeof value === "number" && Number.isFinite(value)

/**
 * A JSON value `Schema.Json` passes through as it is: null, booleans, strings, finite numbers, arrays and objects
 * of them. (An own `__proto__` key, which JSON.parse makes, is kept by the schema's encoding as by JSON.stringify:
 * the randomized test holds both to it.)
 */
const plainJson = (value: unknown): boolean => {
  if (typeof value !== "object" || value === null) {
    return typeof value === "string" || typeof value === "boolean" || value === null ||
      (typeof value === "number" && Number.isFinite(value))
  }
  if (Array.isArray(value)) return value.every(plainJson)
  if (!isObject(value)) return false
  for (const key in value) if (!plainJson(value[key])) return false
  return true
}

const stringRecord = (value: unknown) => {
  if (!isObject(value)) return false
  for (const key in value) if (typeof value[key] !== "string") return false
  return true
}

const jsonRecord = (value: unknown) => isObject(value) && plainJson(value)

/** Copies `key` of `from` to `to` when present and `valid`; false when present and not valid. */
const copy = (from: Json, to: Json, key: string, valid: (value: unknown) => boolean): boolean => {
  if (!(key in from)) return true
  const value = from[key]
  if (!valid(value)) return false
  to[key] = value
  return true
}

const string = (value: unknown) => typeof value === "string"

const analysisOf = (value: unknown): Json | undefined => {
  if (!isObject(value)) return undefined
  for (const key in value) if (!analysisKeys.has(key)) return undefined
  const out: Json = {}
  const ok = copy(value, out, "call_summary", string) &&
    copy(value, out, "in_voicemail", (v) => typeof v === "boolean") &&
    copy(value, out, "user_sentiment", (v) => sentiments.has(v)) &&
    copy(value, out, "call_successful", (v) => typeof v === "boolean") &&
    copy(value, out, "custom_analysis_data", jsonRecord)
  return ok ? out : undefined
}

/**
 * A call object as `Call`'s encoding is: the same keys in the schema's order, or undefined when the schema would
 * refuse or alter it.
 *
 * @category encoding
 */
export const encodedCall = (value: unknown): Json | undefined => {
  if (!isObject(value)) return undefined
  for (const key in value) if (!callKeys.has(key)) return undefined
  const { call_id, call_status, call_type, direction, from_number, to_number } = value
  if (
    typeof call_id !== "string" || call_type !== "phone_call" ||
    (direction !== "outbound" && direction !== "inbound") || !statuses.has(call_status) ||
    typeof from_number !== "string" || typeof to_number !== "string"
  ) return undefined
  const out: Json = { call_id, call_type, direction, call_status }
  const ok = copy(value, out, "agent_id", string) &&
    copy(value, out, "agent_version", finite) &&
    copy(value, out, "batch_call_id", string)
  if (!ok) return undefined
  out["from_number"] = from_number
  out["to_number"] = to_number
  const rest = copy(value, out, "metadata", plainJson) &&
    copy(value, out, "svc_llm_dynamic_variables", stringRecord) &&
    copy(value, out, "custom_sip_headers", stringRecord) &&
    copy(value, out, "start_timestamp", finite) &&
    copy(value, out, "end_timestamp", finite) &&
    copy(value, out, "duration_ms", finite) &&
    // any string, as the schema has it (the vendor adds reasons over time)
    copy(value, out, "disconnection_reason", string)
  if (!rest) return undefined
  if ("call_analysis" in value) {
    const analysis = analysisOf(value["call_analysis"])
    if (analysis === undefined) return undefined
    out["call_analysis"] = analysis
  }
  return out
}

/**
 * The list-calls page as the JSON text of its `ListCallsResponse` encoding, or undefined when a call needs the
 * schema (see the module's notes).
 *
 * @category encoding
 */
export const listCallsJson = (page: {
  readonly has_more: boolean
  readonly items: ReadonlyArray<unknown>
  readonly pagination_key?: string | undefined
  readonly total?: number | undefined
}): string | undefined => {
  const items = new Array<Json>(page.items.length)
  for (let i = 0; i < items.length; i++) {
    const item = encodedCall(page.items[i])
    if (item === undefined) return undefined
    items[i] = item
  }
  // ListCallsResponse's keys, in its order
  const out: Json = { has_more: page.has_more, items }
  if (page.pagination_key !== undefined) out["pagination_key"] = page.pagination_key
  if (page.total !== undefined) {
    if (!finite(page.total)) return undefined
    out["total"] = page.total
  }
  return JSON.stringify(out)
}
