import { assert, describe, it } from "@effect/vitest"
import type { Assertion } from "../../src/batchTests/TestCaseDefinition.ts"
import { type AgentTurn, judge, type RunRecord, transcriptSnapshot } from "../../src/batchTests/Verdict.ts"

const turn = (n: number, content: string, extra: Partial<AgentTurn> = {}): AgentTurn => ({
  turn: n,
  content,
  tool_calls: [],
  tool_results: [],
  end_call: false,
  latency_ms: 100,
  stale_frames: 0,
  ...extra
})

// a refund conversation: greeting, a tool call on turn 1, the refund confirmed on turn 2 with end_call
const record: RunRecord = {
  ending: "end_call",
  turns: [
    turn(0, "Hello, this is Acme support."),
    turn(1, "Let me look up order #42.", {
      tool_calls: [{ tool_call_id: "t1", name: "lookup_order", arguments: "{\"order_id\":\"42\",\"verbose\":true}" }],
      tool_results: [{ tool_call_id: "t1", content: "{\"status\":\"shipped\"}" }],
      latency_ms: 350
    }),
    turn(2, "Your refund is on its way. Goodbye!", { end_call: true })
  ]
}

const verdict = (...assertions: Array<Assertion>) => judge(assertions, record)

describe("judge (issue 32 item 1's assertions)", () => {
  it("contains on a given turn checks that turn's reply only", () => {
    assert.strictEqual(verdict({ type: "contains", value: "refund", turn: 2 }).status, "pass")
    const failed = verdict({ type: "contains", value: "refund", turn: 1 })
    assert.strictEqual(failed.status, "fail")
    assert.strictEqual(
      failed.explanation,
      "assertions[0] contains \"refund\" (turn 1) failed: the reply \"Let me look up order #42.\" does not contain it"
    )
  })

  it("contains without a turn passes when any reply, the begin message included, contains the text", () => {
    assert.strictEqual(verdict({ type: "contains", value: "Acme" }).status, "pass")
    assert.strictEqual(verdict({ type: "contains", value: "acme" }).status, "fail") // case-sensitive
  })

  it("not_contains fails on the first reply that contains the text, naming its turn", () => {
    const failed = verdict({ type: "not_contains", value: "order" })
    assert.strictEqual(failed.status, "fail")
    assert.include(failed.explanation, "turn 1's reply")
    assert.strictEqual(verdict({ type: "not_contains", value: "sorry" }).status, "pass")
  })

  it("regex matches with JavaScript syntax", () => {
    assert.strictEqual(verdict({ type: "regex", value: "order #\\d+", turn: 1 }).status, "pass")
    assert.strictEqual(verdict({ type: "regex", value: "^Your", turn: 1 }).status, "fail")
    assert.strictEqual(verdict({ type: "regex", value: "(?i:ACME)" }).status, "pass")
  })

  it("tool_called matches the name, and listed arguments as a subset (the vendor's partial_match)", () => {
    assert.strictEqual(verdict({ type: "tool_called", name: "lookup_order" }).status, "pass")
    assert.strictEqual(
      verdict({ type: "tool_called", name: "lookup_order", arguments: { order_id: "42" } }).status,
      "pass"
    )
    const other = verdict({ type: "tool_called", name: "lookup_order", arguments: { order_id: 42 } })
    assert.strictEqual(other.status, "fail")
    assert.include(other.explanation, "called with other arguments")
    assert.include(verdict({ type: "tool_called", name: "refund" }).explanation, "tools called: lookup_order")
  })

  it("ends_call holds when the agent ended the call or hung up, not when the script ran out", () => {
    assert.strictEqual(verdict({ type: "ends_call" }).status, "pass")
    assert.strictEqual(judge([{ type: "ends_call" }], { ...record, ending: "agent_hangup" }).status, "pass")
    const done = judge([{ type: "ends_call" }], { ...record, ending: "script_done" })
    assert.strictEqual(done.status, "fail")
    assert.include(done.explanation, "did not end the call")
  })

  it("max_latency_ms names the first turn over the bound", () => {
    assert.strictEqual(verdict({ type: "max_latency_ms", value: 350 }).status, "pass")
    assert.strictEqual(
      verdict({ type: "max_latency_ms", value: 349 }).explanation,
      "assertions[0] max_latency_ms 349 failed: turn 1 took 350 ms to its first frame"
    )
  })

  it("a turn never reached fails, saying how the conversation ended", () => {
    const short: RunRecord = { ending: "end_call", turns: [turn(0, "Hi"), turn(1, "Bye", { end_call: true })] }
    assert.include(judge([{ type: "contains", value: "x", turn: 2 }], short).explanation, "turn 2 was never reached")
  })

  it("names every failed assertion by index, in order, and passes with none failed", () => {
    const v = verdict({ type: "contains", value: "zzz" }, { type: "ends_call" }, { type: "contains", value: "yyy" })
    assert.strictEqual(v.status, "fail")
    assert.match(v.explanation, /^assertions\[0\] .*; assertions\[2\] /)
    assert.deepStrictEqual(verdict(), { status: "pass", explanation: "all 0 assertions passed" })
  })
})

describe("transcriptSnapshot", () => {
  it("interleaves the user's turns, the agent's replies and the tool calls", () => {
    const snapshot = transcriptSnapshot({ user_turns: ["Where is my order?", "Refund it"] }, record)
    assert.deepStrictEqual(snapshot.transcript.map((u) => u.role), ["agent", "user", "agent", "user", "agent"])
    assert.deepStrictEqual(snapshot.transcript_with_tool_calls.map((u) => u["role"]), [
      "agent",
      "user",
      "tool_call_invocation",
      "tool_call_result",
      "agent",
      "user",
      "agent"
    ])
  })
})
