// The TwiML of a Twilio call (issue 14; decision 0604): the agent's SIP URI with the task's overrides and custom
// headers as percent-encoded URI headers, XML-escaped by the SDK's VoiceResponse; bad header names refused.
import { assert, describe, it } from "@effect/vitest"
import { BatchCallId, CallId, OrgId } from "@svc/domain/models/Ids.ts"
import type { DialRequest } from "@svc/domain/ports/Dialer.ts"
import { Effect } from "effect"
import { callTwiml, MAX_HEADERS_LENGTH, sipHeaders, sipUri } from "../../../src/carriers/twilio/TwiML.ts"

const base: DialRequest = {
  idempotency_key: "task_1",
  call_id: CallId.make("call_abc"),
  org_id: OrgId.make("org_1"),
  batch_call_id: BatchCallId.make("batch_1"),
  from_number: "+14155550100",
  to_number: "+14155550199"
}

/** The <Sip> URI of a document, XML-unescaped. */
const uriOf = (xml: string) => {
  const m = xml.match(/<Sip>(.*)<\/Sip>/)
  assert.isNotNull(m, xml)
  return m![1]!.replaceAll("&amp;", "&").replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", "\"")
}

/** The URI's headers, decoded. */
const headersOf = (uri: string) =>
  Object.fromEntries(
    (uri.split("?")[1] ?? "").split("&").filter((p) => p !== "").map((p) => {
      const [name, value] = p.split("=")
      return [name!, decodeURIComponent(value!)]
    })
  )

describe("TwiML", () => {
  it.effect("a plain call: <Dial><Sip>sip:{call_id}@{server}</Sip></Dial>, nothing else", () =>
    Effect.gen(function*() {
      const xml = yield* callTwiml(base, "agents.example.com:5060")
      assert.strictEqual(
        xml,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response><Dial><Sip>sip:call_abc@agents.example.com:5060</Sip></Dial></Response>"
      )
    }))

  it.effect("overrides travel as X-Svc-* headers, JSON where structured, exactly recoverable", () =>
    Effect.gen(function*() {
      const request: DialRequest = {
        ...base,
        override_agent_id: "agent_1",
        override_agent_version: "latest_published",
        agent_override: { agent: { voice_id: "v1", language: "fr-FR" } },
        dynamic_variables: { name: "Zoë <O'Brien> & co", city: "São Paulo" },
        custom_sip_headers: { "X-Crm-Id": "42", "X-Note": "a=b&c?d;e\"f" }
      }
      const headers = headersOf(uriOf(yield* callTwiml(request, "sip.example.com")))
      assert.deepStrictEqual(Object.keys(headers), [
        "X-Svc-Override-Agent-Id",
        "X-Svc-Override-Agent-Version",
        "X-Svc-Agent-Override",
        "X-Svc-Dynamic-Variables",
        "X-Crm-Id",
        "X-Note"
      ])
      assert.strictEqual(headers["X-Svc-Override-Agent-Id"], "agent_1")
      assert.strictEqual(headers["X-Svc-Override-Agent-Version"], "latest_published")
      assert.deepStrictEqual(JSON.parse(headers["X-Svc-Agent-Override"]!), request.agent_override)
      assert.deepStrictEqual(JSON.parse(headers["X-Svc-Dynamic-Variables"]!), request.dynamic_variables)
      assert.strictEqual(headers["X-Note"], "a=b&c?d;e\"f")
    }))

  it.effect("a numeric agent version is sent as its decimal text", () =>
    Effect.gen(function*() {
      const headers = headersOf(uriOf(yield* callTwiml({ ...base, override_agent_version: 7 }, "s.example")))
      assert.strictEqual(headers["X-Svc-Override-Agent-Version"], "7")
    }))

  it.effect("injection attempts are encoded: no raw <, &, CR/LF, or second header in the document", () =>
    Effect.gen(function*() {
      const xml = yield* callTwiml({
        ...base,
        call_id: CallId.make("x@evil.example?X-Svc-Override-Agent-Id=boss"),
        custom_sip_headers: { "X-Evil": "v\r\nVia: SIP/2.0/UDP evil</Sip><Hangup/>" }
      }, "s.example")
      assert.notInclude(xml, "<Hangup/>")
      assert.notInclude(xml, "\r")
      assert.notInclude(xml, "\n")
      const uri = uriOf(xml)
      // the call id is one user part: its @ and ? are encoded, so the host and headers are ours
      assert.isTrue(uri.startsWith("sip:x%40evil.example%3FX-Svc-Override-Agent-Id%3Dboss@s.example?"), uri)
      assert.deepStrictEqual(Object.keys(headersOf(uri)), ["X-Evil"])
      assert.strictEqual(headersOf(uri)["X-Evil"], "v\r\nVia: SIP/2.0/UDP evil</Sip><Hangup/>")
    }))

  it.effect("header names that are not X- tokens, or claim X-Svc-, are refused", () =>
    Effect.gen(function*() {
      for (const name of ["Via", "X-", "X-A B", "X-A\r\nVia", "X-Ä", "x-svc-override-agent-id", "X-Svc-Anything"]) {
        const error = yield* Effect.flip(sipHeaders({ ...base, custom_sip_headers: { [name]: "v" } }))
        assert.strictEqual(error._tag, "InvalidSipHeaders")
        assert.include(error.message, "custom_sip_headers")
      }
    }))

  it.effect(`headers longer than ${MAX_HEADERS_LENGTH} characters encoded are refused, not truncated`, () =>
    Effect.gen(function*() {
      const fits = yield* sipUri(CallId.make("c"), "s", [["X-A", "a".repeat(MAX_HEADERS_LENGTH - 4)]])
      assert.include(fits, "X-A=")
      const error = yield* Effect.flip(sipUri(CallId.make("c"), "s", [["X-A", "é".repeat(200)]]))
      assert.strictEqual(error._tag, "InvalidSipHeaders")
      assert.include(error.message, String(MAX_HEADERS_LENGTH))
    }))
})
