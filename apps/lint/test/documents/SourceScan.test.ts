import { assert, describe, it } from "@effect/vitest"
import { utcMidnight } from "@svc/domain/Deprecation/Rule.ts"
import { scan } from "../../src/documents/SourceScan.ts"

const at = utcMidnight("2026-11-01")
const hosts = { legacySipHosts: ["*.sip.livekit.cloud"], legacyMcpHosts: [] }
const rules = (text: string) => scan(text, at, hosts).map((h) => `${h.ruleId} ${text.slice(h.start, h.end)}`)

describe("SourceScan", () => {
  it("finds endpoint paths in strings, template literals, f-strings, URLs and .http request lines", () => {
    assert.deepStrictEqual(rules("fetch(\"/list-agents\")"), ["list-agents-v1 /list-agents"])
    assert.deepStrictEqual(rules("get(`${base}/get-chat-agent-versions/${id}`)"), [
      "get-agent-versions /get-chat-agent-versions/${id}"
    ])
    assert.deepStrictEqual(rules("requests.get(f\"{BASE}/list-conversation-flows?limit=5\")"), [
      "legacy-list-endpoints /list-conversation-flows?limit=5"
    ])
    assert.deepStrictEqual(rules("url = 'https://api.example.com/list-phone-numbers'"), [
      "legacy-list-endpoints /list-phone-numbers"
    ])
    assert.deepStrictEqual(rules("POST {{host}}/publish-chat-agent/agent_1"), [
      "publish-agent-endpoints /publish-chat-agent/agent_1"
    ])
  })

  it("takes the method from the call or its options, and skips a path whose method the schedule does not name", () => {
    assert.deepStrictEqual(rules("axios.post(`${b}/list-agents`)"), [])
    assert.deepStrictEqual(rules("fetch(`${b}/list-agents`, {\n  method: \"POST\",\n})"), [])
    assert.deepStrictEqual(rules("fetch(`${b}/list-agents`, {\n  method: \"GET\",\n})"), [
      "list-agents-v1 /list-agents"
    ])
    assert.deepStrictEqual(rules("client.get(\"/publish-agent/a1\")"), [])
    assert.deepStrictEqual(rules("fetch(`${b}/list-agents`)\nconst o = { method: \"POST\" }"), [
      "list-agents-v1 /list-agents"
    ])
  })

  it("leaves versioned and unrelated endpoints alone", () => {
    assert.deepStrictEqual(rules("post(`${b}/v2/list-agents`)"), [])
    assert.deepStrictEqual(rules("get(`${b}/v2/list-calls`)"), [])
    assert.deepStrictEqual(rules("get(`${b}/list-knowledge-bases`)"), [])
    assert.deepStrictEqual(rules("get(`${b}/list-agent-versions/${id}`)"), [])
    assert.deepStrictEqual(rules("post(`${b}/v3/create-web-call`)"), [])
  })

  it("does not report a path in prose, only in a string or URL context", () => {
    assert.deepStrictEqual(rules("// the /list-agents endpoint was removed"), [])
    assert.deepStrictEqual(rules("# migrate from /publish-agent/{id} soon"), [])
  })

  it("completes a path whose id is concatenated after the literal", () => {
    assert.deepStrictEqual(rules("http.Get(base + \"/get-agent-versions/\" + id)"), [
      "get-agent-versions /get-agent-versions/"
    ])
    assert.deepStrictEqual(rules("http.Get(base + \"/get-agent-versions/\")"), [])
  })

  it("finds removed request fields as keys, not as property reads", () => {
    assert.deepStrictEqual(rules("const body = { analysis_summary_prompt: \"x\" }"), [
      "legacy-analysis-prompts analysis_summary_prompt"
    ])
    assert.deepStrictEqual(rules("payload = {\"inbound_agent_id\": agent}"), [
      "phone-number-single-agent-fields inbound_agent_id"
    ])
    assert.deepStrictEqual(rules("update(inbound_agent_version=3)"), [
      "phone-number-single-agent-fields inbound_agent_version"
    ])
    assert.deepStrictEqual(rules("InboundAgentID string `json:\"inbound_agent_id,omitempty\"`"), [
      "phone-number-single-agent-fields inbound_agent_id"
    ])
    assert.deepStrictEqual(rules("console.log(number.inbound_agent_id)"), [])
    assert.deepStrictEqual(rules("if (x.inbound_agent_id == y)"), [])
  })

  it("finds calendar tool types, the scalar language multi and legacy SIP hosts", () => {
    assert.deepStrictEqual(rules("tools.push({ type: 'book_appointment_cal' })"), [
      "calendar-cal-tools 'book_appointment_cal'"
    ])
    assert.deepStrictEqual(rules("const name = 'book_appointment_cal_v2'"), [])
    assert.deepStrictEqual(rules("agent = { language: \"multi\" }"), ["agent-language-multi language: \"multi\""])
    assert.deepStrictEqual(rules("dial(\"sip:+14155550100@abc123.sip.livekit.cloud\")"), [
      "legacy-sip-endpoint abc123.sip.livekit.cloud"
    ])
    assert.deepStrictEqual(rules("dial(\"sip:call_1@sip.example.com\")"), [])
  })
})
