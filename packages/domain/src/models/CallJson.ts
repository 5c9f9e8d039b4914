/**
 * The list-calls response as JSON text without the schema's encoder (decision 0644): each call
 * object as read from `call_json` (store migration 0012, whose jsonb orders keys by length) rebuilt with `Call`'s
 * keys in `Call`'s order, which is what encoding it through `ListCallsResponse` produces, at a fraction of the cost
 * (the encoder walked every member of 100 calls: ~1.1 ms of a list-calls request's CPU in svc's profile).
 *
 * It is only ever the schema's own output for the page as the read path shows it ({@link readableCall}): a value the
 * schema would refuse or change (an unknown key, a member of the wrong type) makes `listCallsJson` answer
 * `undefined`, and the caller encodes that page through the schema instead. `CallJson.test.ts` compares the two over
 * randomized calls.
 *
 * Read guard (decision 0106): a free-form member (`metadata`, `call_analysis.custom_analysis_data`) stored
 * nested deeper than `maxJsonDepth` levels, before requests were held to that limit, is shown as
 * `{"svc_error": "..."}` instead of failing the page (or get-call) for the whole org. Every walk here is bounded by
 * that depth, so no stored value can exhaust the stack.
 */
import { Call, CallAnalysis, CallStatus, UserSentiment } from "./Call.ts"
import { jsonDepth, maxJsonDepth, unreadableValue } from "./JsonLimits.ts"

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

const PLAIN = 0
const NOT_PLAIN = 1
const TOO_DEEP = 2
type JsonStatus = typeof PLAIN | typeof NOT_PLAIN | typeof TOO_DEEP

/**
 * Whether a value is JSON `Schema.Json` passes through as it is (null, booleans, strings, finite numbers, arrays and
 * objects of them), or nested deeper than `maxJsonDepth` levels (`level` is the level of `value`'s own object or
 * array). The recursion stops at that depth, so it stays shallow whatever was stored. (An own `__proto__` key, which
 * JSON.parse makes, is kept by the schema's encoding as by JSON.stringify: the randomized test holds both to it.)
 */
const jsonStatus = (value: unknown, level: number): JsonStatus => {
  if (typeof value !== "object" || value === null) {
    return typeof value === "string" || typeof value === "boolean" || value === null ||
        (typeof value === "number" && Number.isFinite(value))
      ? PLAIN
      : NOT_PLAIN
  }
  if (level > maxJsonDepth) return TOO_DEEP
  let status: JsonStatus = PLAIN
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = jsonStatus(value[i], level + 1)
      if (item === TOO_DEEP) return TOO_DEEP
      if (item === NOT_PLAIN) status = NOT_PLAIN
    }
    return status
  }
  if (!isObject(value)) return NOT_PLAIN
  for (const key in value) {
    const member = jsonStatus(value[key], level + 1)
    if (member === TOO_DEEP) return TOO_DEEP
    if (member === NOT_PLAIN) status = NOT_PLAIN
  }
  return status
}

const callRemedy = "replace it with PATCH /v2/update-call/{call_id}"
const analysisRemedy = "it cannot be changed through the API"

/** What the read path shows for a stored `metadata` too deep to show. */
export const unreadableMetadata = unreadableValue("metadata", callRemedy)

/** What the read path shows for stored `call_analysis.custom_analysis_data` too deep to show. */
export const unreadableAnalysisData = unreadableValue("custom_analysis_data", analysisRemedy)

/**
 * A call object as the read path shows it: a free-form member (`metadata`, `call_analysis.custom_analysis_data`)
 * nested deeper than `maxJsonDepth` levels replaced by its `{"svc_error": "..."}` value; anything else as it is (the
 * same object when nothing is replaced). Every call the API answers passes through it.
 *
 * @category encoding
 */
export const readableCall = (value: unknown): unknown => {
  if (!isObject(value)) return value
  let out: Json | undefined
  if ("metadata" in value && jsonDepth(value["metadata"]) > maxJsonDepth) {
    out = { ...value, metadata: unreadableMetadata }
  }
  const analysis = value["call_analysis"]
  if (
    isObject(analysis) && "custom_analysis_data" in analysis &&
    jsonDepth(analysis["custom_analysis_data"]) > maxJsonDepth
  ) {
    out = { ...(out ?? value), call_analysis: { ...analysis, custom_analysis_data: unreadableAnalysisData } }
  }
  return out ?? value
}

const stringRecord = (value: unknown) => {
  if (!isObject(value)) return false
  for (const key in value) if (typeof value[key] !== "string") return false
  return true
}

/**
 * Copies the free-form member `key` of `from` to `to` when present and plain JSON (`record`: an object of them), or
 * its unreadable value when nested too deep; false when present and not plain.
 */
const copyJson = (from: Json, to: Json, key: string, record: boolean, unreadable: Json): boolean => {
  if (!(key in from)) return true
  const value = from[key]
  if (record && !isObject(value)) return false
  const status = jsonStatus(value, 1)
  if (status === NOT_PLAIN) return false
  to[key] = status === TOO_DEEP ? unreadable : value
  return true
}

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
    copyJson(value, out, "custom_analysis_data", true, unreadableAnalysisData)
  return ok ? out : undefined
}

/**
 * A call object as `Call`'s encoding of its {@link readableCall} is: the same keys in the schema's order, or undefined
 * when the schema would refuse or alter it.
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
  const rest = copyJson(value, out, "metadata", false, unreadableMetadata) &&
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
  // decision 0552: only ever true (call_json leaves it out otherwise)
  if (!copy(value, out, "opt_out", (v) => v === true)) return undefined
  return out
}

/**
 * The list-calls page as the JSON text of its `ListCallsResponse` encoding (each call as {@link readableCall} shows
 * it), or undefined when a call needs the schema (see the module's notes).
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
