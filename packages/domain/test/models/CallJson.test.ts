// listCallsJson (decision 0644) must be, byte for byte, JSON.stringify of the schema's encoding of the same page,
// or undefined where the schema refuses the page. Randomized calls in the key order jsonb gives `call_json`'s objects
// (shorter keys first, then bytewise), with every optional member present or absent, unicode of every kind, JSON
// nulls, integer-like and `__proto__` keys, numbers at the edges, and values of the wrong type.
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { Call, CallAnalysis, ListCallsResponse } from "../../src/models/Call.ts"
import { encodedCall, listCallsJson } from "../../src/models/CallJson.ts"

const encode = Schema.encodeSync(ListCallsResponse)

/** mulberry32: the same calls on every run, so a failure can be replayed from its seed. */
const random = (seed: number) => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <A>(items: ReadonlyArray<A>): A => items[int(items.length)]!
  const chance = (p: number) => next() < p
  return { int, pick, chance }
}
type Random = ReturnType<typeof random>

const SPECIAL = [
  ...Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)),
  "\u007f",
  "\u0085",
  "\"",
  "\\",
  "/",
  "\u2028",
  "\u2029",
  "\ufeff",
  "\ufffd",
  "😀",
  "𝄞",
  "e\u0301",
  "ß",
  "中文",
  "Šimek",
  "a",
  "Z",
  " ",
  "0"
]
const text = (r: Random) => Array.from({ length: r.int(6) }, () => r.pick(SPECIAL)).join("")
const KEYS = ["a", "customer_id", "0", "10", "2", "tier", "é", "__proto__", "constructor", "toString", ""]
const NUMBERS = [0, -0, 1, -1, 1.5, 0.1, 1e21, 1e-7, 123456789012, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2]

const json = (r: Random, depth: number): unknown => {
  switch (r.int(depth > 2 ? 5 : 7)) {
    case 0:
      return null
    case 1:
      return r.chance(0.5)
    case 2:
      return r.pick(NUMBERS)
    case 3:
    case 4:
      return text(r)
    case 5:
      return Array.from({ length: r.int(3) }, () => json(r, depth + 1))
    default:
      return object(r, () => json(r, depth + 1))
  }
}
/** An object as JSON.parse builds one (so `__proto__` is an own key). */
const object = (r: Random, value: () => unknown): Record<string, unknown> => {
  const members = Array.from({ length: r.int(4) }, () => `${JSON.stringify(r.pick(KEYS))}:${JSON.stringify(value())}`)
  return JSON.parse(`{${members.join(",")}}`)
}

/** jsonb's key order: shorter keys first, equal lengths bytewise; nested objects too. */
const jsonbOrder = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(jsonbOrder)
  if (typeof value !== "object" || value === null) return value
  const keys = Object.keys(value).sort((a, b) => {
    const x = Buffer.from(a)
    const y = Buffer.from(b)
    return x.length - y.length || Buffer.compare(x, y)
  })
  return JSON.parse(`{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(jsonbOrder((value as never)[k]))}`)}}`)
}

const call = (r: Random, wrong: boolean): Record<string, unknown> => {
  const c: Record<string, unknown> = {
    call_id: `call_${r.int(1e9).toString(16)}`,
    call_type: "phone_call",
    direction: "outbound",
    call_status: r.pick(["registered", "not_connected", "ongoing", "ended", "error"]),
    from_number: "+14155550100",
    to_number: `+1212555${String(r.int(1e4)).padStart(4, "0")}`
  }
  const maybe = (key: string, value: () => unknown) => {
    if (r.chance(0.6)) c[key] = value()
  }
  maybe("agent_id", () => text(r) || "agent_1")
  maybe("agent_version", () => r.pick(NUMBERS))
  maybe("batch_call_id", () => `batch_${text(r)}`)
  maybe("metadata", () => json(r, 0))
  maybe("svc_llm_dynamic_variables", () => object(r, () => text(r)))
  maybe("custom_sip_headers", () => object(r, () => `X-${text(r)}`))
  maybe("start_timestamp", () => 1_750_000_000_000 + r.int(1e9))
  maybe("end_timestamp", () => 1_750_000_000_000 + r.int(1e9))
  maybe("duration_ms", () => r.int(1e6))
  maybe("disconnection_reason", () => r.pick(["user_hangup", "dial_busy", "voicemail_reached", text(r)]))
  maybe("call_analysis", () => {
    const a: Record<string, unknown> = {}
    if (r.chance(0.7)) a["call_summary"] = text(r)
    if (r.chance(0.7)) a["in_voicemail"] = r.chance(0.5)
    if (r.chance(0.7)) a["user_sentiment"] = r.pick(["Negative", "Positive", "Neutral", "Unknown"])
    if (r.chance(0.7)) a["call_successful"] = r.chance(0.5)
    if (r.chance(0.7)) a["custom_analysis_data"] = object(r, () => json(r, 1))
    return a
  })
  if (wrong) {
    // one member the schema refuses or would drop
    const spoil: Array<() => void> = [
      () => c["call_status"] = "ringing",
      () => c["agent_version"] = "2",
      () => c["svc_llm_dynamic_variables"] = { name: 5 },
      () => c["custom_sip_headers"] = ["X-A"],
      () => c["duration_ms"] = null,
      () => c["call_analysis"] = { user_sentiment: "Happy" },
      () => c["call_analysis"] = { custom_analysis_data: [1, 2] },
      () => c["transcript"] = "hello",
      () => c["direction"] = "sideways",
      () => c["call_type"] = "web_call"
    ]
    r.pick(spoil)()
  }
  return jsonbOrder(c) as Record<string, unknown>
}

/** The schema's answer: the JSON text of its encoding, or undefined when it refuses the page. */
const viaSchema = (page: Parameters<typeof listCallsJson>[0]): string | undefined => {
  try {
    return JSON.stringify(encode(page as never))
  } catch {
    return undefined
  }
}

describe("listCallsJson", () => {
  it("is the schema's encoding, byte for byte, over 3,000 randomized pages", () => {
    let fast = 0
    let refusedBoth = 0
    for (let seed = 1; seed <= 3000; seed++) {
      const r = random(seed)
      const wrong = r.chance(0.15)
      const items = Array.from({ length: r.int(4) }, (_, i) => call(r, wrong && i === 0))
      const page = {
        has_more: r.chance(0.5),
        items,
        ...(r.chance(0.5) ? { pagination_key: `key_${text(r)}` } : {}),
        ...(r.chance(0.5) ? { total: r.int(1e6) } : {})
      }
      const expected = viaSchema(page)
      const actual = listCallsJson(page)
      if (actual !== undefined) {
        fast++
        // never different from what the schema writes
        assert.strictEqual(actual, expected, `seed ${seed}`)
      } else if (expected === undefined) {
        refusedBoth++
      }
      if (!wrong) {
        assert.isDefined(actual, `seed ${seed}: an ordinary page takes the fast path`)
      }
    }
    // the generator reaches both outcomes often
    assert.isAbove(fast, 2000)
    assert.isAbove(refusedBoth, 100)
  })

  it("knows every member of Call and CallAnalysis, in the schemas' order (a new member fails here)", () => {
    const full = encodedCall(jsonbOrder({
      call_id: "c1",
      call_type: "phone_call",
      direction: "outbound",
      call_status: "ended",
      agent_id: "a",
      agent_version: 1,
      batch_call_id: "b",
      from_number: "+1",
      to_number: "+2",
      metadata: {},
      svc_llm_dynamic_variables: {},
      custom_sip_headers: {},
      start_timestamp: 1,
      end_timestamp: 2,
      duration_ms: 1,
      disconnection_reason: "user_hangup",
      call_analysis: {
        call_summary: "s",
        in_voicemail: false,
        user_sentiment: "Unknown",
        call_successful: true,
        custom_analysis_data: {}
      },
      opt_out: true
    }))
    assert.deepStrictEqual(Object.keys(full!), Object.keys(Call.fields))
    assert.deepStrictEqual(Object.keys(full!["call_analysis"] as object), Object.keys(CallAnalysis.fields))
    assert.deepStrictEqual(
      Object.keys(JSON.parse(listCallsJson({ has_more: true, items: [], pagination_key: "k", total: 1 })!)),
      Object.keys(ListCallsResponse.fields)
    )
  })

  it("orders a call's keys as the schema does, whatever order they come in", () => {
    const encoded = encodedCall(jsonbOrder({
      call_id: "c1",
      call_type: "phone_call",
      direction: "outbound",
      call_status: "ended",
      agent_id: "a",
      from_number: "+1",
      to_number: "+2",
      duration_ms: 5,
      call_analysis: { custom_analysis_data: { b: 1, a: 2 }, call_summary: "s" }
    }))
    assert.deepStrictEqual(Object.keys(encoded!), [
      "call_id",
      "call_type",
      "direction",
      "call_status",
      "agent_id",
      "from_number",
      "to_number",
      "duration_ms",
      "call_analysis"
    ])
    assert.deepStrictEqual(Object.keys(encoded!["call_analysis"] as object), ["call_summary", "custom_analysis_data"])
  })

  it("hands a page to the schema when a call has a key the schema does not name, or a wrong value", () => {
    const ok = { call_id: "c", call_type: "phone_call", direction: "outbound", call_status: "ended", from_number: "+1" }
    assert.isUndefined(encodedCall({ ...ok, to_number: "+2", transcript: "hi" }))
    assert.isUndefined(encodedCall({ ...ok, to_number: 2 }))
    assert.isUndefined(encodedCall({ ...ok, to_number: "+2", metadata: { at: new Date(0) } }))
    assert.isUndefined(encodedCall({ ...ok, to_number: "+2", metadata: [Number.POSITIVE_INFINITY] }))
    // an own __proto__ key (as JSON.parse makes it) is written as the schema writes it
    const odd = {
      has_more: false,
      items: [{ ...ok, to_number: "+2", metadata: JSON.parse("{\"__proto__\": {\"x\": 1}}") }]
    }
    assert.strictEqual(listCallsJson(odd), JSON.stringify(encode(odd as never)))
    assert.include(listCallsJson(odd)!, "__proto__")
    assert.isUndefined(listCallsJson({ has_more: false, items: [{ ...ok, to_number: "+2" }], total: Number.NaN }))
    assert.strictEqual(
      listCallsJson({ has_more: false, items: [], total: 0 }),
      JSON.stringify(encode({ has_more: false, items: [], total: 0 }))
    )
  })
})
