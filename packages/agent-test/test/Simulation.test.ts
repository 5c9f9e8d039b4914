import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { TestClock } from "effect/testing"
import { endToken, limits, options, runSimulation, type SimulationOptions } from "../src/Simulation.ts"
import {
  chatCompletionsDouble,
  errorBody,
  type Fault,
  type SeenRequest
} from "../test-support/ChatCompletionsDouble.ts"
import { referenceServer, scripted, until } from "../test-support/Servers.ts"

// Simulation test cases (issue 32 item 4; decision 0706): a model plays the caller from user_prompt, the reference
// custom-LLM server answers as the agent, one judge call per metric. The model is a local double of the
// chat-completions API that decides from the messages alone (test-support/ChatCompletionsDouble.ts).

const simulate = (
  agentUrl: string,
  llmUrl: string,
  user_prompt: string,
  metrics: Array<string>,
  overrides: Partial<SimulationOptions> = {}
) =>
  runSimulation(
    agentUrl,
    "call_sim",
    { user_prompt, metrics, dynamic_variables: {} },
    options({ url: llmUrl, model: "gpt-4.1-mini", apiKey: Redacted.make("sk-x"), timeoutMs: 30_000 }, overrides)
  ).pipe(Effect.provide(FetchHttpClient.layer))

const isJudge = (request: SeenRequest) => request.body.messages.some((m) => m.content.startsWith("Criterion:"))

interface Snapshot {
  readonly transcript: ReadonlyArray<{ readonly role: string; readonly content: string }>
  readonly ending: string
  readonly judgements: ReadonlyArray<{ readonly metric: string; readonly pass: boolean; readonly reason: string }>
}

describe("runSimulation against the reference server", () => {
  it.live("passes when every metric passes: the caller plays its role, the agent answers, each metric judged", () =>
    Effect.gen(function*() {
      const agent = yield* referenceServer
      const llm = yield* chatCompletionsDouble()
      const outcome = yield* simulate(
        agent,
        llm.url,
        "You want to know where order 7 is.\nSay: Where is my order 7?\nSay: Thanks, bye",
        ["mentions \"has shipped\"", "ends the call"]
      )
      assert.deepStrictEqual(outcome.verdict, { status: "pass", explanation: "all 2 metrics passed" })
      const snapshot = outcome.transcript as Snapshot
      assert.deepStrictEqual(snapshot.transcript.map((u) => `${u.role}: ${u.content}`), [
        "agent: Hello, this is Acme support. How can I help?",
        "user: Where is my order 7?",
        "agent: Order #7 has shipped.",
        "user: Thanks, bye",
        "agent: Goodbye!"
      ])
      assert.strictEqual(snapshot.ending, "end_call")
      // two caller turns (the agent ended the call after the second), then one judge call per metric, in order
      assert.deepStrictEqual(llm.seen.map((r) => (isJudge(r) ? "judge" : "caller")), [
        "caller",
        "caller",
        "judge",
        "judge"
      ])
      // the caller model reads the agent as `user` and itself as `assistant`, its role in the instructions
      const second = llm.seen[1]!.body.messages
      assert.include(second[0]!.content, "Say: Where is my order 7?")
      assert.deepStrictEqual(second.slice(1).map((m) => m.role), ["user", "assistant", "user"])
      // the judge sees the tool call and how the conversation ended
      const judged = llm.seen[2]!.body.messages.find((m) => m.content.startsWith("Criterion:"))!.content
      assert.include(judged, "Criterion: mentions \"has shipped\"")
      assert.include(judged, "agent calls tool lookup_order with {\"order_id\":\"7\"}")
      assert.include(judged, "How it ended: the agent ended the call.")
    }).pipe(Effect.scoped))

  it.live("fails naming each failed metric with the judge's reason; the caller ends the conversation", () =>
    Effect.gen(function*() {
      const agent = yield* referenceServer
      const llm = yield* chatCompletionsDouble()
      const outcome = yield* simulate(agent, llm.url, "Say: I want a refund", [
        "mentions \"refund approved\"",
        "mentions \"You said\"",
        "ends the call"
      ])
      assert.deepStrictEqual(outcome.verdict, {
        status: "fail",
        explanation: "metrics[0] \"mentions \\\"refund approved\\\"\" failed: no turn mentions \"refund approved\"; " +
          "metrics[2] \"ends the call\" failed: the agent did not end it"
      })
      const snapshot = outcome.transcript as Snapshot
      assert.strictEqual(snapshot.ending, "caller_done")
      assert.deepStrictEqual(snapshot.judgements.map((j) => j.pass), [false, true, false])
    }).pipe(Effect.scoped))

  it.live(`stops after ${limits.maxTurns} caller turns and judges the conversation as it stands`, () =>
    Effect.gen(function*() {
      const agent = yield* referenceServer
      const llm = yield* chatCompletionsDouble()
      const lines = Array.from({ length: 30 }, (_, i) => `Say: hello ${i + 1}`).join("\n")
      const outcome = yield* simulate(agent, llm.url, lines, ["mentions \"hello 20\"", "does not mention \"hello 21\""])
      assert.deepStrictEqual(outcome.verdict, { status: "pass", explanation: "all 2 metrics passed" })
      const snapshot = outcome.transcript as Snapshot
      assert.strictEqual(snapshot.ending, "turn_limit")
      assert.strictEqual(snapshot.transcript.filter((u) => u.role === "user").length, limits.maxTurns)
      assert.strictEqual(llm.seen.filter((r) => !isJudge(r)).length, limits.maxTurns)
    }).pipe(Effect.scoped))

  it.live("the caller's last words with the end token: said, answered, then the conversation ends", () =>
    Effect.gen(function*() {
      const agent = yield* referenceServer
      const llm = yield* chatCompletionsDouble()
      const outcome = yield* simulate(agent, llm.url, `Say: That is all ${endToken}`, ["mentions \"That is all\""])
      assert.strictEqual(outcome.verdict.status, "pass")
      const snapshot = outcome.transcript as Snapshot
      assert.deepStrictEqual(snapshot.transcript.filter((u) => u.role === "user").map((u) => u.content), [
        "That is all"
      ])
      assert.strictEqual(snapshot.ending, "caller_done")
      assert.strictEqual(llm.seen.filter((r) => !isJudge(r)).length, 1)
    }).pipe(Effect.scoped))

  it.live("no metrics: passes once the conversation completes, with no judge call", () =>
    Effect.gen(function*() {
      const agent = yield* referenceServer
      const llm = yield* chatCompletionsDouble()
      const outcome = yield* simulate(agent, llm.url, "Say: bye", [])
      assert.deepStrictEqual(outcome.verdict, { status: "pass", explanation: "all 0 metrics passed" })
      assert.isFalse(llm.seen.some(isJudge))
    }).pipe(Effect.scoped))
})

describe("runSimulation: failures end the run error, naming what failed", () => {
  const failing = (fault: (request: SeenRequest) => Fault | undefined) => chatCompletionsDouble(fault)

  it.live("the caller model answering HTTP 500", () =>
    Effect.gen(function*() {
      const agent = yield* referenceServer
      const llm = yield* failing(() => ({ _tag: "status", status: 500, body: errorBody("overloaded", "server_error") }))
      const outcome = yield* simulate(agent, llm.url, "Say: hi", ["mentions \"hi\""])
      assert.deepStrictEqual(outcome.verdict, {
        status: "error",
        explanation: `the caller model at turn 1: ${llm.url}/chat/completions answered HTTP 500: "overloaded"`
      })
      assert.strictEqual((outcome.transcript as Snapshot).ending, "error")
    }).pipe(Effect.scoped))

  it.live("a judge answering HTTP 429", () =>
    Effect.gen(function*() {
      const agent = yield* referenceServer
      const llm = yield* failing((request) =>
        isJudge(request)
          ? { _tag: "status", status: 429, body: errorBody("Rate limit reached", "requests", "rate_limit_exceeded") }
          : undefined
      )
      const outcome = yield* simulate(agent, llm.url, "Say: bye", ["ends the call"])
      assert.deepStrictEqual(outcome.verdict, {
        status: "error",
        explanation:
          `the judge of metrics[0] "ends the call": ${llm.url}/chat/completions answered HTTP 429: "Rate limit reached"`
      })
    }).pipe(Effect.scoped))

  it.live("a body that is not JSON", () =>
    Effect.gen(function*() {
      const agent = yield* referenceServer
      const llm = yield* failing(() => ({ _tag: "raw", body: "<html>Bad gateway</html>" }))
      const outcome = yield* simulate(agent, llm.url, "Say: hi", [])
      assert.strictEqual(outcome.verdict.status, "error")
      assert.match(
        outcome.verdict.explanation,
        /^the caller model at turn 1: .* answered with a body that is not JSON/u
      )
    }).pipe(Effect.scoped))

  it.live("a judge whose answer is not {pass, reason}", () =>
    Effect.gen(function*() {
      const agent = yield* referenceServer
      const llm = yield* failing((request) =>
        isJudge(request)
          ? {
            _tag: "raw",
            body: JSON.stringify({
              choices: [{ index: 0, message: { role: "assistant", content: "Yes, it passes." } }]
            })
          }
          : undefined
      )
      const outcome = yield* simulate(agent, llm.url, "Say: bye", ["ends the call"])
      assert.deepStrictEqual(outcome.verdict, {
        status: "error",
        explanation: "the judge of metrics[0] \"ends the call\": answered \"Yes, it passes.\", " +
          "not a JSON object {\"pass\": boolean, \"reason\": string}"
      })
    }).pipe(Effect.scoped))

  it.effect("the model not answering within its timeout (TestClock)", () =>
    Effect.gen(function*() {
      const agent = yield* scripted((socket, frame) =>
        socket.send(JSON.stringify({ response_id: frame["response_id"], content: "ok", content_complete: true }))
      )
      const llm = yield* failing(() => ({ _tag: "hang" }))
      const fiber = yield* Effect.forkChild(simulate(agent.url, llm.url, "Say: hi", []))
      yield* until(() => llm.seen.length === 1, "the caller model to be asked")
      yield* TestClock.adjust(30_000)
      const outcome = yield* Fiber.join(fiber)
      assert.deepStrictEqual(outcome.verdict, {
        status: "error",
        explanation: `the caller model at turn 1: ${llm.url}/chat/completions did not answer within 30000 ms`
      })
    }).pipe(Effect.scoped))

  it.effect("a run longer than its bound (TestClock)", () =>
    Effect.gen(function*() {
      const agent = yield* scripted((socket, frame) =>
        socket.send(JSON.stringify({ response_id: frame["response_id"], content: "ok", content_complete: true }))
      )
      const llm = yield* failing(() => ({ _tag: "hang" }))
      const fiber = yield* Effect.forkChild(simulate(agent.url, llm.url, "Say: hi", [], { maxDurationMs: 1_000 }))
      yield* until(() => llm.seen.length === 1, "the caller model to be asked")
      yield* TestClock.adjust(1_000)
      const outcome = yield* Fiber.join(fiber)
      assert.deepStrictEqual(outcome.verdict, {
        status: "error",
        explanation: "the simulation did not finish within 1000 ms (decision 0706)"
      })
    }).pipe(Effect.scoped))

  it.live("a protocol fault of the agent ends the run error before any judge is asked", () =>
    Effect.gen(function*() {
      const agent = yield* scripted((socket) => socket.send(Buffer.from([1]), { binary: true }))
      const llm = yield* chatCompletionsDouble()
      const outcome = yield* simulate(agent.url, llm.url, "Say: hi", ["ends the call"])
      assert.strictEqual(outcome.verdict.status, "error")
      assert.match(outcome.verdict.explanation, /^turn 1: a binary frame/u)
      assert.isFalse(llm.seen.some(isJudge))
    }).pipe(Effect.scoped))
})
