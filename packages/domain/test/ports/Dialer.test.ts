import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { CallEnded, CallLookup, DialOutcome, DialRequest } from "../../src/ports/Dialer.ts"

describe("Dialer port models", () => {
  it("a dial request carries a task's overrides as stored, absent fields absent", () => {
    const request = Schema.decodeUnknownSync(DialRequest)({
      idempotency_key: "42",
      call_id: "call_42",
      org_id: "org_1",
      batch_call_id: "batch_call_1",
      from_number: "+14155550100",
      to_number: "+14155550101",
      override_agent_id: "agent_a",
      override_agent_version: "latest_published",
      agent_override: { svc_llm: { model_temperature: 0.2 } },
      dynamic_variables: { first_name: "Ada" },
      metadata: { crm: { id: 7 } },
      custom_sip_headers: { "X-Campaign": "q3" }
    })
    assert.strictEqual(request.override_agent_version, "latest_published")
    assert.deepStrictEqual(Schema.encodeSync(DialRequest)(request).metadata, { crm: { id: 7 } })
    const minimal = Schema.decodeUnknownSync(DialRequest)({
      idempotency_key: "43",
      call_id: "call_43",
      org_id: "org_1",
      batch_call_id: "batch_call_1",
      from_number: "+14155550100",
      to_number: "+14155550102"
    })
    assert.notProperty(minimal, "override_agent_id")
    // svc assigns the call id before dialling (decision 0510): a request without one is refused
    assert.throws(() =>
      Schema.decodeUnknownSync(DialRequest)({
        idempotency_key: "44",
        org_id: "org_1",
        batch_call_id: "batch_call_1",
        from_number: "+14155550100",
        to_number: "+14155550102"
      })
    )
  })

  it("a lookup answers an ended or an ongoing call, told apart by _tag", () => {
    const decode = Schema.decodeUnknownSync(CallLookup)
    const ended = decode({
      _tag: "CallEnded",
      idempotency_key: "42",
      call_id: "call_1",
      outcome: "answered",
      start_timestamp: 1_000,
      end_timestamp: 61_000,
      duration_ms: 60_000,
      disconnection_reason: "user_hangup",
      analysis: { call_successful: true, user_sentiment: "Positive", interest_level: 4 }
    })
    assert.strictEqual(ended._tag, "CallEnded")
    const ongoing = decode({ _tag: "CallOngoing", idempotency_key: "42", call_id: "call_1", start_timestamp: 1_000 })
    assert.strictEqual(ongoing._tag, "CallOngoing")
  })

  it("rejects analysis values that are not scalars and unknown outcomes", () => {
    const base = {
      _tag: "CallEnded",
      idempotency_key: "42",
      call_id: "call_1",
      start_timestamp: 1_000,
      end_timestamp: 2_000,
      duration_ms: 1_000,
      disconnection_reason: "dial_failed"
    }
    assert.throws(() => Schema.decodeUnknownSync(CallEnded)({ ...base, outcome: "failed", analysis: { x: { y: 1 } } }))
    assert.throws(() => Schema.decodeUnknownSync(CallEnded)({ ...base, outcome: "voicemail", analysis: {} }))
    assert.deepStrictEqual(DialOutcome.literals, ["answered", "busy", "no_answer", "failed"])
  })
})
