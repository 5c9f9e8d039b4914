import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { TestClock } from "effect/testing"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { type ChatSettings, complete, contentOf } from "../src/ChatCompletions.ts"
import { chatCompletionsDouble, completion, errorBody } from "../test-support/ChatCompletionsDouble.ts"
import { until } from "../test-support/Servers.ts"

// The chat-completions client against a local double of the API (issue 32 item 4; no test reaches the network).
// Expected shapes are OpenAI's documented chat completion object and error body; each failure mode is injected.

const settings = (url: string, overrides: Partial<ChatSettings> = {}): ChatSettings => ({
  url,
  model: "gpt-4.1-mini",
  apiKey: Redacted.make("sk-test-secret"),
  timeoutMs: 30_000,
  ...overrides
})

const ask = (url: string, overrides: Partial<ChatSettings> = {}) =>
  complete(settings(url, overrides), [{ role: "system", content: "Say something" }], "the test call").pipe(
    Effect.provide(FetchHttpClient.layer)
  )

describe("ChatCompletions.complete", () => {
  it.live("posts the model and messages to {url}/chat/completions with the key as a bearer token", () =>
    Effect.gen(function*() {
      const double = yield* chatCompletionsDouble()
      const text = yield* ask(`${double.url}/`)
      assert.strictEqual(text, "I do not know what I am asked.")
      assert.strictEqual(double.seen.length, 1)
      assert.strictEqual(double.seen[0]!.path, "/v1/chat/completions")
      assert.strictEqual(double.seen[0]!.authorization, "Bearer sk-test-secret")
      assert.deepStrictEqual(double.seen[0]!.body.model, "gpt-4.1-mini")
      assert.deepStrictEqual(double.seen[0]!.body.messages, [{ role: "system", content: "Say something" }])
    }).pipe(Effect.scoped))

  it.live("sends no Authorization header without a key (a local OpenAI-compatible server)", () =>
    Effect.gen(function*() {
      const double = yield* chatCompletionsDouble()
      yield* ask(double.url, { apiKey: undefined })
      assert.isUndefined(double.seen[0]!.authorization)
    }).pipe(Effect.scoped))

  it.live("HTTP 5xx: fails with the status and the endpoint's own message", () =>
    Effect.gen(function*() {
      const double = yield* chatCompletionsDouble(() => ({
        _tag: "status",
        status: 500,
        body: errorBody("The server had an error while processing your request.", "server_error")
      }))
      const error = yield* Effect.flip(ask(double.url))
      assert.strictEqual(
        error.explanation,
        `the test call: ${double.url}/chat/completions answered HTTP 500: ` +
          "\"The server had an error while processing your request.\""
      )
    }).pipe(Effect.scoped))

  it.live("HTTP 4xx: fails with the status and message, never the key", () =>
    Effect.gen(function*() {
      const double = yield* chatCompletionsDouble(() => ({
        _tag: "status",
        status: 401,
        body: errorBody("Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
      }))
      const error = yield* Effect.flip(ask(double.url))
      assert.include(error.explanation, "answered HTTP 401: \"Incorrect API key provided.\"")
      assert.notInclude(error.explanation, "sk-test-secret")
    }).pipe(Effect.scoped))

  it.live("a body that is not JSON", () =>
    Effect.gen(function*() {
      const double = yield* chatCompletionsDouble(() => ({ _tag: "raw", body: "{\"choices\": [" }))
      const error = yield* Effect.flip(ask(double.url))
      assert.match(error.explanation, /answered with a body that is not JSON \(.+\): "\{\\"choices\\": \["$/u)
    }).pipe(Effect.scoped))

  it.live("JSON that is not a chat completion", () =>
    Effect.gen(function*() {
      const double = yield* chatCompletionsDouble(() => ({ _tag: "raw", body: "{\"object\":\"list\",\"data\":[]}" }))
      const error = yield* Effect.flip(ask(double.url))
      assert.include(error.explanation, "answered with a body without choices")
    }).pipe(Effect.scoped))

  it.effect("no answer within the timeout (TestClock)", () =>
    Effect.gen(function*() {
      const double = yield* chatCompletionsDouble(() => ({ _tag: "hang" }))
      const fiber = yield* Effect.forkChild(Effect.flip(ask(double.url, { timeoutMs: 5_000 })))
      yield* until(() => double.seen.length === 1, "the request to arrive")
      yield* TestClock.adjust(5_000)
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(
        error.explanation,
        `the test call: ${double.url}/chat/completions did not answer within 5000 ms`
      )
    }).pipe(Effect.scoped))

  it.live("an endpoint that cannot be reached", () =>
    Effect.gen(function*() {
      // a port that was free a moment ago: nothing listens on it
      const port = yield* Effect.callback<number>((resume) => {
        const server = http.createServer().listen(0, "127.0.0.1", () => {
          const free = (server.address() as AddressInfo).port
          server.close(() => resume(Effect.succeed(free)))
        })
      })
      const error = yield* Effect.flip(ask(`http://127.0.0.1:${port}/v1`))
      assert.include(
        error.explanation,
        `the test call: http://127.0.0.1:${port}/v1/chat/completions could not be reached`
      )
    }))
})

describe("ChatCompletions.contentOf", () => {
  it("reads choices[0].message.content of the documented object", () => {
    assert.deepStrictEqual(contentOf(completion("gpt-4.1", "Hello", 1)), { ok: true, content: "Hello" })
  })

  it("a refusal (content null, refusal text) is not content", () => {
    const body = JSON.stringify({
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: null, refusal: "I can't help" } }]
    })
    assert.deepStrictEqual(contentOf(body), { ok: false, why: "a refusal instead of content: \"I can't help\"" })
  })
})
