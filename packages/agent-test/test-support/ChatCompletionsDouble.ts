/**
 * A local double of an OpenAI-compatible chat-completions API (issue 32 item 4: no test reaches the network): a Node
 * HTTP server on 127.0.0.1 answering `POST /v1/chat/completions` with the chat completion object as OpenAI's API
 * reference documents it (`id`, `object: "chat.completion"`, `created` in seconds, `model`, `choices[{index,
 * message: {role: "assistant", content, refusal}, logprobs, finish_reason}]`, `usage`), and errors as
 * `{error: {message, type, param, code}}` with their HTTP status.
 *
 * It decides from the request's messages alone, so every run gets the same answers:
 * - the caller (a system message with "You play the caller"): its role holds lines `Say: <text>`; the n-th caller
 *   turn (n = the assistant messages so far, plus one) says the n-th line, and after the last one the end token;
 * - the judge (a user message starting "Criterion:"): `mentions "X"` passes when the conversation contains X,
 *   `does not mention "X"` when it does not, `ends the call` when the agent ended it; any other criterion fails,
 *   saying the double does not know it.
 *
 * `fault` overrides the answer of chosen requests (an HTTP status with a body, a raw body, or no answer at all), to
 * inject each failure mode of the endpoint.
 */
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { endToken } from "../src/Simulation.ts"

/** A request the double received. */
export interface SeenRequest {
  readonly path: string
  readonly authorization: string | undefined
  readonly body: {
    readonly model: string
    readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }>
  }
}

/** An injected answer: a status with a body, a 200 with a raw body, or no answer at all (the socket hangs). */
export type Fault =
  | { readonly _tag: "status"; readonly status: number; readonly body: string }
  | { readonly _tag: "raw"; readonly body: string }
  | { readonly _tag: "hang" }

/** OpenAI's error body. */
export const errorBody = (message: string, type: string, code: string | null = null): string =>
  JSON.stringify({ error: { message, type, param: null, code } })

/** A chat completion object with `content` as the assistant's message. */
export const completion = (model: string, content: string, serial: number): string =>
  JSON.stringify({
    id: `chatcmpl-double${serial}`,
    object: "chat.completion",
    created: 1_767_225_600 + serial,
    model,
    choices: [{
      index: 0,
      message: { role: "assistant", content, refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: "stop"
    }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    service_tier: "default",
    system_fingerprint: "fp_double"
  })

type Messages = SeenRequest["body"]["messages"]

const callerAnswer = (messages: Messages): string => {
  const role = messages[0]?.content ?? ""
  const lines = [...role.matchAll(/^Say: (.+)$/gmu)].map((m) => m[1]!)
  const turn = messages.filter((m) => m.role === "assistant").length
  return lines[turn] ?? endToken
}

const judgeAnswer = (request: string): string => {
  const criterion = /^Criterion: (.*)$/mu.exec(request)?.[1] ?? ""
  const conversation = request.slice(request.indexOf("Conversation:\n"), request.indexOf("\n\nHow it ended:"))
  const mentions = /^(does not mention|mentions) "(.+)"$/u.exec(criterion)
  if (mentions !== null) {
    const found = conversation.includes(mentions[2]!)
    const wanted = mentions[1] === "mentions"
    return JSON.stringify({
      pass: found === wanted,
      reason: found ? `the conversation mentions "${mentions[2]}"` : `no turn mentions "${mentions[2]}"`
    })
  }
  if (criterion === "ends the call") {
    const ended = /How it ended: the agent (ended the call|hung up)/u.test(request)
    return JSON.stringify({ pass: ended, reason: ended ? "the agent ended the call" : "the agent did not end it" })
  }
  return JSON.stringify({ pass: false, reason: `the double does not know the criterion ${JSON.stringify(criterion)}` })
}

/** What the double answers a well-formed request: the caller's next turn or a judgement. */
export const answerOf = (messages: Messages): string => {
  const system = messages[0]?.content ?? ""
  if (system.includes("You play the caller")) return callerAnswer(messages)
  const request = messages.find((m) => m.role === "user" && m.content.startsWith("Criterion:"))
  if (request !== undefined) return judgeAnswer(request.content)
  return "I do not know what I am asked."
}

/**
 * Starts the double; its base URL (`http://127.0.0.1:PORT/v1`, as `SVC_TEST_LLM_URL` takes it) and what it saw.
 * Closed with the scope.
 */
export const chatCompletionsDouble = (
  fault: (request: SeenRequest, index: number) => Fault | undefined = () => undefined
) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly url: string; readonly seen: Array<SeenRequest>; readonly server: http.Server }>(
      (resume) => {
        const seen: Array<SeenRequest> = []
        const server = http.createServer((request, response) => {
          let text = ""
          request.on("data", (chunk: Buffer) => (text += chunk.toString()))
          request.on("end", () => {
            if (request.method !== "POST" || request.url !== "/v1/chat/completions") {
              response.writeHead(404, { "content-type": "application/json" })
              return response.end(
                errorBody(
                  `Unknown request URL: ${request.method} ${request.url}`,
                  "invalid_request_error",
                  "unknown_url"
                )
              )
            }
            const body = JSON.parse(text) as SeenRequest["body"]
            const received: SeenRequest = { path: request.url, authorization: request.headers.authorization, body }
            seen.push(received)
            const injected = fault(received, seen.length - 1)
            if (injected?._tag === "hang") return
            if (injected?._tag === "status") {
              response.writeHead(injected.status, { "content-type": "application/json" })
              return response.end(injected.body)
            }
            response.writeHead(200, { "content-type": "application/json" })
            response.end(
              injected?._tag === "raw" ? injected.body : completion(body.model, answerOf(body.messages), seen.length)
            )
          })
        })
        server.listen(
          0,
          "127.0.0.1",
          () =>
            resume(
              Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, seen, server })
            )
        )
      }
    ),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )
