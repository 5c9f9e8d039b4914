/**
 * A client of an OpenAI-compatible chat-completions endpoint (decision 0706): the model that plays the caller of a
 * simulation test case and judges its metrics. One non-streaming `POST {url}/chat/completions` per call, answered in
 * the chat completion object's documented shape (`choices[0].message.content`, a string; OpenAI API reference,
 * "The chat completion object"); an error answer carries `{error: {message, type, code}}`.
 *
 * Every failure is a `ChatCompletionsFailed` whose text says what failed (the HTTP status and the endpoint's own
 * message, a body that is not JSON or not that shape, no answer within the timeout, a transport error), so a run
 * can end `error` naming it. The key is sent as a bearer token and never appears in a failure's text.
 *
 * Time (the timeout) is Effect's `Clock`, so tests can pin it.
 */
import { Data, Duration, Effect, Option, Redacted } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"

/** Where the model is and how long a call may take (`SVC_TEST_LLM_*`, decision 0706). @category models */
export interface ChatSettings {
  /** the API's base URL, as OpenAI's SDKs take it (`https://api.openai.com/v1`); `/chat/completions` is appended */
  readonly url: string
  readonly model: string
  readonly apiKey: Redacted.Redacted<string> | undefined
  /** from the request to the whole answer */
  readonly timeoutMs: number
}

/** One message of the conversation sent to the model. @category models */
export interface ChatMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
}

/** A call to the endpoint failed; `explanation` says what failed. @category errors */
export class ChatCompletionsFailed extends Data.TaggedError("ChatCompletionsFailed")<{
  readonly explanation: string
}> {}

/** The endpoint a base URL names: `{url}/chat/completions`. @category encoding */
export const endpoint = (url: string): string => `${url.endsWith("/") ? url.slice(0, -1) : url}/chat/completions`

const shorten = (text: string): string => JSON.stringify(text.length > 200 ? `${text.slice(0, 197)}...` : text)

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The endpoint's own words for an error answer (`{error: {message}}`), else the start of the body. */
const errorText = (body: string): string => {
  try {
    const parsed: unknown = JSON.parse(body)
    if (isRecord(parsed) && isRecord(parsed["error"]) && typeof parsed["error"]["message"] === "string") {
      return shorten(parsed["error"]["message"])
    }
  } catch {
    // not JSON: the body itself says what went wrong
  }
  return body === "" ? "an empty body" : shorten(body)
}

/**
 * The assistant's text in a chat completion object, or why the body is not one.
 *
 * @category encoding
 */
export const contentOf = (body: string): { readonly ok: true; readonly content: string } | {
  readonly ok: false
  readonly why: string
} => {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch (error) {
    return { ok: false, why: `a body that is not JSON (${(error as Error).message}): ${shorten(body)}` }
  }
  const choices = isRecord(parsed) ? parsed["choices"] : undefined
  if (!Array.isArray(choices) || choices.length === 0) {
    return { ok: false, why: "a body without choices (expected a chat completion object)" }
  }
  const first: unknown = choices[0]
  const message = isRecord(first) ? first["message"] : undefined
  const content = isRecord(message) ? message["content"] : undefined
  if (typeof content !== "string") {
    const refusal = isRecord(message) ? message["refusal"] : undefined
    return {
      ok: false,
      why: typeof refusal === "string"
        ? `a refusal instead of content: ${shorten(refusal)}`
        : "a body whose choices[0].message.content is not a string"
    }
  }
  return { ok: true, content }
}

/**
 * One chat completion: the assistant's text. `purpose` names the call in a failure's text ("the caller model at
 * turn 3", "the judge of metrics[1]").
 *
 * @category constructors
 */
export const complete = (
  settings: ChatSettings,
  messages: ReadonlyArray<ChatMessage>,
  purpose: string
): Effect.Effect<string, ChatCompletionsFailed, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const url = endpoint(settings.url)
    const failed = (what: string) => new ChatCompletionsFailed({ explanation: `${purpose}: ${url} ${what}` })
    let request = HttpClientRequest.post(url).pipe(
      HttpClientRequest.acceptJson,
      // temperature 0: the same transcript asks the same question, so a rerun varies as little as the model allows
      HttpClientRequest.bodyJsonUnsafe({ model: settings.model, messages, temperature: 0 })
    )
    if (settings.apiKey !== undefined) {
      request = HttpClientRequest.bearerToken(request, Redacted.value(settings.apiKey))
    }
    const answered = yield* client.execute(request).pipe(
      Effect.flatMap((response) => Effect.map(response.text, (body) => ({ status: response.status, body }))),
      Effect.mapError((error) => failed(`could not be reached: ${error.reason._tag} (${error.reason.message})`)),
      Effect.timeoutOption(Duration.millis(settings.timeoutMs))
    )
    if (Option.isNone(answered)) return yield* failed(`did not answer within ${settings.timeoutMs} ms`)
    const { body, status } = answered.value
    if (status < 200 || status > 299) return yield* failed(`answered HTTP ${status}: ${errorText(body)}`)
    const content = contentOf(body)
    if (!content.ok) return yield* failed(`answered with ${content.why}`)
    return content.content
  })
