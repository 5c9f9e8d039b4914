import { assert, describe, it } from "@effect/vitest"
import * as Protocol from "@svc/domain/batchTests/Protocol.ts"
import type { Assertion } from "@svc/domain/batchTests/TestCaseDefinition.ts"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { defaults, runScripted } from "../src/Runner.ts"
import { faultServer, referenceServer, refusingServer, scripted, until } from "../test-support/Servers.ts"

// The runner against real WebSocket servers on localhost (issue 32 item 2): the reference server, and one server
// per protocol fault, each injecting it. Expected texts come from the protocol's rules (custom-llm-protocol.md).

const definition = (user_turns: Array<string>, assertions: Array<Assertion> = []) => ({
  user_turns,
  assertions,
  dynamic_variables: { customer: "Ada" }
})

const reply = (id: unknown, content: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ response_type: "response", response_id: id, content, content_complete: true, ...extra })

describe("runScripted against the reference server", () => {
  it.live("passes a refund-status conversation: tool call, reply text, end call", () =>
    Effect.gen(function*() {
      const url = yield* referenceServer
      const outcome = yield* runScripted(
        url,
        "call_pass",
        definition(["Where is my order 42?", "Thanks, bye"], [
          { type: "contains", value: "Acme", turn: 0 },
          { type: "contains", value: "has shipped", turn: 1 },
          { type: "tool_called", name: "lookup_order", arguments: { order_id: "42" } },
          { type: "ends_call" }
        ])
      )
      assert.deepStrictEqual(outcome.verdict, { status: "pass", explanation: "all 4 assertions passed" })
      const transcript = outcome.transcript as {
        transcript: Array<{ role: string; content: string }>
        transcript_with_tool_calls: Array<{ role: string }>
      }
      assert.deepStrictEqual(transcript.transcript.map((u) => u.content), [
        "Hello, this is Acme support. How can I help?",
        "Where is my order 42?",
        "Order #42 has shipped.",
        "Thanks, bye",
        "Goodbye!"
      ])
      assert.include(transcript.transcript_with_tool_calls.map((u) => u.role), "tool_call_invocation")
    }).pipe(Effect.scoped))

  it.live("fails, naming each failed assertion", () =>
    Effect.gen(function*() {
      const url = yield* referenceServer
      const outcome = yield* runScripted(
        url,
        "call_fail",
        definition(["I want a refund"], [{ type: "contains", value: "refund approved", turn: 1 }, {
          type: "ends_call"
        }])
      )
      assert.strictEqual(outcome.verdict.status, "fail")
      assert.strictEqual(
        outcome.verdict.explanation,
        "assertions[0] contains \"refund approved\" (turn 1) failed: the reply \"You said: I want a refund. Anything else?\" " +
          "does not contain it; assertions[1] ends_call failed: the agent did not end the call (all 1 user turns were answered)"
      )
    }).pipe(Effect.scoped))
})

describe("runScripted: each protocol fault ends the run error, naming the rule", () => {
  it.live("connection failures: 3 attempts, then error", () =>
    Effect.gen(function*() {
      const server = yield* refusingServer
      const outcome = yield* runScripted(server.url, "call_conn", definition(["Hi"]))
      assert.strictEqual(outcome.verdict.status, "error")
      assert.include(outcome.verdict.explanation, "after 3 attempts: the server answered the upgrade with HTTP 503")
      assert.include(outcome.verdict.explanation, Protocol.rules.connect)
      assert.strictEqual(server.attempts(), 3)
    }).pipe(Effect.scoped))

  it.live("a binary frame: error, and the socket closed with 1007", () =>
    Effect.gen(function*() {
      const server = yield* scripted((socket) => socket.send(Buffer.from([1, 2, 3]), { binary: true }))
      const outcome = yield* runScripted(server.url, "call_bin", definition(["Hi"]))
      assert.strictEqual(outcome.verdict.status, "error")
      assert.strictEqual(outcome.verdict.explanation, `turn 1: a binary frame (rule: ${Protocol.rules.binary})`)
      yield* until(() => server.seen.closeCodes.length > 0, "the socket to close")
      assert.deepStrictEqual(server.seen.closeCodes, [1007])
    }).pipe(Effect.scoped))

  it.live("malformed JSON", () =>
    Effect.gen(function*() {
      const server = yield* scripted((socket) => socket.send("{\"response_id\": 1, \"content\": "))
      const outcome = yield* runScripted(server.url, "call_json", definition(["Hi"]))
      assert.strictEqual(outcome.verdict.status, "error")
      assert.match(outcome.verdict.explanation, /^turn 1: malformed JSON frame/)
      assert.include(outcome.verdict.explanation, Protocol.rules.json)
    }).pipe(Effect.scoped))

  it.live("content_complete that is not a boolean", () =>
    Effect.gen(function*() {
      const server = yield* scripted((socket, frame) =>
        socket.send(JSON.stringify({ response_id: frame["response_id"], content: "ok", content_complete: "true" }))
      )
      const outcome = yield* runScripted(server.url, "call_cc", definition(["Hi"]))
      assert.strictEqual(outcome.verdict.status, "error")
      assert.include(outcome.verdict.explanation, "turn 1: content_complete must be a boolean, got \"true\"")
      assert.include(outcome.verdict.explanation, Protocol.rules.contentComplete)
    }).pipe(Effect.scoped))

  it.effect("a reply that never completes: error after the reply timeout (TestClock)", () =>
    Effect.gen(function*() {
      const server = yield* scripted((socket, frame) =>
        socket.send(
          JSON.stringify({ response_id: frame["response_id"], content: "Let me think", content_complete: false })
        )
      )
      const fiber = yield* Effect.forkChild(runScripted(server.url, "call_hang", definition(["Hi"])))
      yield* until(() => server.seen.received.some((f) => f["interaction_type"] === "response_required"), "the turn")
      yield* TestClock.adjust(defaults.replyTimeoutMs)
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.verdict.status, "error")
      assert.strictEqual(
        outcome.verdict.explanation,
        `turn 1: the reply to response_id 1 did not complete within ${defaults.replyTimeoutMs} ms (rule: ${Protocol.rules.timeout})`
      )
    }).pipe(Effect.scoped))

  it.live("a response to an id never sent", () =>
    Effect.gen(function*() {
      const server = yield* scripted((socket) => socket.send(reply(7, "early")))
      const outcome = yield* runScripted(server.url, "call_future", definition(["Hi"]))
      assert.include(outcome.verdict.explanation, "response_id 7, which was never sent")
    }).pipe(Effect.scoped))

  it.live("the server closing with another code than 1000 mid-conversation", () =>
    Effect.gen(function*() {
      const server = yield* scripted((socket) => socket.close(1011, "boom"))
      const outcome = yield* runScripted(server.url, "call_close", definition(["Hi"]))
      assert.strictEqual(outcome.verdict.status, "error")
      assert.include(outcome.verdict.explanation, "closed the connection with code 1011 (boom)")
    }).pipe(Effect.scoped))

  it.live("an address the caller's rule refuses is never connected to", () =>
    Effect.gen(function*() {
      const server = yield* scripted(() => {})
      const outcome = yield* runScripted(server.url, "call_ssrf", definition(["Hi"]), {
        ...defaults,
        refuseAddress: (address) => `${address} is not a public address`
      })
      assert.include(outcome.verdict.explanation, "refused: 127.0.0.1 is not a public address")
      assert.deepStrictEqual(server.seen.paths, [])
    }).pipe(Effect.scoped))
})

describe("runScripted speaks the protocol as the platform does", () => {
  it.live("connects to {url}/{call_id}, sends call_details and ping_pong when the config asks, drops stale ids", () =>
    Effect.gen(function*() {
      const server = yield* faultServer((socket) => {
        socket.send(JSON.stringify({
          response_type: "config",
          config: { call_details: true, auto_reconnect: true, transcript_with_tool_calls: true }
        }))
        socket.send(reply(0, "Hi"))
        socket.on("message", (data) => {
          const frame = JSON.parse(data.toString()) as Record<string, unknown>
          if (frame["interaction_type"] !== "response_required") return
          const id = frame["response_id"] as number
          // content for an older id first: the platform drops it
          socket.send(reply(id - 1, "STALE"))
          socket.send(
            JSON.stringify({
              response_type: "tool_call_invocation",
              tool_call_id: `t${id}`,
              name: "f",
              arguments: "{}"
            })
          )
          socket.send(reply(id, `answer ${id}`))
        })
      })
      const outcome = yield* runScripted(
        `${server.url}/llm`,
        "call_ok",
        definition(["one", "two"], [{ type: "not_contains", value: "STALE" }, {
          type: "contains",
          value: "answer 2",
          turn: 2
        }])
      )
      assert.deepStrictEqual(outcome.verdict, { status: "pass", explanation: "all 2 assertions passed" })
      assert.deepStrictEqual(server.seen.paths, ["/llm/call_ok"])
      const kinds = server.seen.received.map((f) => f["interaction_type"])
      assert.strictEqual(kinds[0], "call_details")
      assert.include(kinds, "ping_pong")
      const details = server.seen.received[0]!["call"] as Record<string, unknown>
      assert.deepStrictEqual(details["retell_llm_dynamic_variables"], { customer: "Ada" })
      const second = server.seen.received.find((f) => f["response_id"] === 2)!
      assert.deepStrictEqual(second["transcript"], [
        { role: "agent", content: "Hi" },
        { role: "user", content: "one" },
        { role: "agent", content: "answer 1" },
        { role: "user", content: "two" }
      ])
      assert.deepStrictEqual((second["transcript_with_tool_calls"] as Array<{ role: string }>).map((e) => e.role), [
        "agent",
        "user",
        "tool_call_invocation",
        "agent",
        "user"
      ])
    }).pipe(Effect.scoped))

  it.live("a close with 1000 is the agent hanging up: the conversation ends and ends_call holds", () =>
    Effect.gen(function*() {
      const server = yield* scripted((socket) => socket.close(1000))
      const outcome = yield* runScripted(
        server.url,
        "call_hangup",
        definition(["Hi", "again"], [{ type: "ends_call" }])
      )
      assert.deepStrictEqual(outcome.verdict, { status: "pass", explanation: "all 1 assertions passed" })
      assert.strictEqual((outcome.transcript as { ending: string }).ending, "agent_hangup")
    }).pipe(Effect.scoped))
})
