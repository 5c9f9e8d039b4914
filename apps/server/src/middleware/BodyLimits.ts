/**
 * Bounds on request bodies (decision 0303), in front of every route:
 *
 * - Each endpoint accepts a body up to its own limit, sized to what it can legitimately carry:
 *   `create-batch-call` 256 MiB (`SVC_MAX_BODY_BYTES`: 100,000 tasks with overrides measured ~200 MB),
 *   `create-contact` and `update-contact` 1 MiB (`SVC_MAX_CONTACT_BODY_BYTES`: a contact with its custom fields),
 *   every other endpoint 64 KiB (`SVC_MAX_SMALL_BODY_BYTES`: a list query, a filter, an id).
 * - A body over the limit is refused as soon as its `Content-Length` says so, before any byte of it is read, or,
 *   without a `Content-Length`, as soon as the bytes received pass the limit: a 400 in the spec's error shape that
 *   names the endpoint's limit and its setting (the spec lists 400 for a bad request, never 413).
 * - Every request holds its body's bytes against the process's budget (BodyBudget.ts,
 *   `SVC_MAX_INFLIGHT_BODY_BYTES`, default 1 GiB) while it runs; one that does not fit is refused at once with
 *   503 and `Retry-After` (the server is busy, the request is fine: the vendor's clients retry 5xx), never read.
 *   Refusing rather than queueing keeps a waiting upload from holding its connection and socket buffers; the
 *   client's retry does the waiting.
 *
 * Both refusals close the connection: the unread rest of the body cannot be left on a kept-alive socket.
 * create-batch-call reads its own body as a stream (handlers/BatchCallBody.ts): it finds its limit and whether its
 * bytes were taken from the budget in {@link CurrentRequestBody}, and fails with {@link RequestBodyTooLarge} or
 * {@link RequestBodyBudgetExhausted}, which become the same answers here.
 */
import * as ErrorBody from "@svc/api/ErrorBody.ts"
import { ByteSize, Cause, Config, Context, Data, Effect, Layer, Result } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { BodyBudget } from "./BodyBudget.ts"
import * as BodyText from "./BodyText.ts"

const KiB = 1024
const MiB = 1024 * KiB

/** @category models */
export const BodyLimitsConfig = Config.all({
  batchCall: Config.withDefault(Config.Int("SVC_MAX_BODY_BYTES"), 256 * MiB),
  contact: Config.withDefault(Config.Int("SVC_MAX_CONTACT_BODY_BYTES"), MiB),
  other: Config.withDefault(Config.Int("SVC_MAX_SMALL_BODY_BYTES"), 64 * KiB)
})
/** @category models */
export type BodyLimitsConfig = typeof BodyLimitsConfig extends Config.Config<infer A> ? A : never

/**
 * An endpoint's body limit and the setting that sets it.
 *
 * @category models
 */
export interface BodyLimit {
  /** `POST /create-batch-call`, as the message names it. */
  readonly endpoint: string
  readonly bytes: number
  readonly setting: "SVC_MAX_BODY_BYTES" | "SVC_MAX_CONTACT_BODY_BYTES" | "SVC_MAX_SMALL_BODY_BYTES"
}

/**
 * The body limit of a request, by method and path (the query string left off).
 *
 * @category combinators
 */
export const limitFor = (limits: BodyLimitsConfig, method: string, path: string): BodyLimit => {
  const endpoint = `${method} ${path}`
  if (method === "POST" && path === "/create-batch-call") {
    return { endpoint, bytes: limits.batchCall, setting: "SVC_MAX_BODY_BYTES" }
  }
  if (
    (method === "POST" && path === "/create-contact") || (method === "PATCH" && path.startsWith("/update-contact/"))
  ) {
    return {
      endpoint: method === "POST" ? endpoint : "PATCH /update-contact",
      bytes: limits.contact,
      setting: "SVC_MAX_CONTACT_BODY_BYTES"
    }
  }
  return { endpoint, bytes: limits.other, setting: "SVC_MAX_SMALL_BODY_BYTES" }
}

const WITH_BODY = new Set(["POST", "PUT", "PATCH"])

/**
 * The media type of a `Content-Type`, lower-cased and without parameters, as the framework compares it to choose a
 * payload's decoder (`application/json; charset=utf-8` is `application/json`).
 *
 * @category combinators
 */
export const mediaType = (header: string): string => header.toLowerCase().trim().split(";")[0]!.trim()

/**
 * The 400 message of a request that sends a body without a `Content-Type` (decision 0106: a body is read as JSON only
 * when it says it is; the framework would have guessed JSON, and the body rules were skipped for it).
 *
 * @category encoding
 */
export const MISSING_CONTENT_TYPE = "Content-Type is missing: send the request body with Content-Type: application/json"

/** Endpoints that read their body as a stream and take budget as the bytes arrive when no length is declared. */
const streamsItsBody = (method: string, path: string) => method === "POST" && path === "/create-batch-call"

/**
 * What the current request may send, for a handler that reads its body itself.
 *
 * @category models
 */
export interface RequestBody {
  readonly limit: BodyLimit
  /** The `Content-Length`, already within the limit and taken from the budget; `undefined` when not declared. */
  readonly declared: number | undefined
}

/**
 * The current request's {@link RequestBody}; `undefined` outside this middleware (a handler then has no limit).
 *
 * @category references
 */
export const CurrentRequestBody = Context.Reference<RequestBody | undefined>(
  "@svc/server/http/BodyLimits/CurrentRequestBody",
  { defaultValue: () => undefined }
)

/**
 * A body read by its handler passed the endpoint's limit.
 *
 * @category errors
 */
export class RequestBodyTooLarge extends Data.TaggedError("RequestBodyTooLarge")<{ readonly limit: BodyLimit }> {}

/**
 * A body read by its handler without a declared length no longer fits in the budget.
 *
 * @category errors
 */
export class RequestBodyBudgetExhausted extends Data.TaggedError("RequestBodyBudgetExhausted") {}

const human = (bytes: number) =>
  bytes % MiB === 0 ? `${bytes / MiB} MiB` : bytes % KiB === 0 ? `${bytes / KiB} KiB` : `${bytes} bytes`

/**
 * The message of a body over its endpoint's limit.
 *
 * @category encoding
 */
export const tooLargeMessage = (limit: BodyLimit): string =>
  `request body is larger than the ${limit.bytes} bytes${
    limit.bytes % KiB === 0 ? ` (${human(limit.bytes)})` : ""
  } that ${limit.endpoint} accepts (${limit.setting})`

/** How long a refused client should wait: large bodies take seconds to arrive and be stored. */
export const RETRY_AFTER_SECONDS = 5

const errorBody = (status: number, message: string, headers: Record<string, string>) =>
  HttpServerResponse.jsonUnsafe(ErrorBody.make(message), { status, headers: { connection: "close", ...headers } })

const tooLarge = (limit: BodyLimit) => errorBody(400, tooLargeMessage(limit), {})

const busy = (capacity: number) =>
  errorBody(
    503,
    `the server is receiving as many request bodies as it holds at once (SVC_MAX_INFLIGHT_BODY_BYTES, ` +
      `${human(capacity)}); retry in ${RETRY_AFTER_SECONDS} seconds`,
    { "retry-after": String(RETRY_AFTER_SECONDS) }
  )

/** Whether a failure is the framework's or a handler's "body too large" (buffered reads stop at MaxBodySize). */
const isTooLarge = (error: unknown): boolean => {
  if (error instanceof RequestBodyTooLarge || HttpApiError.HttpApiPayloadTooLarge.is(error)) return true
  if (typeof error !== "object" || error === null || !("reason" in error)) return false
  const reason = error.reason as { readonly _tag?: unknown; readonly reason?: unknown } | null
  return reason?._tag === "RequestParseError" && reason.reason === "BodyTooLarge"
}

/** The `Content-Length` as a number; `undefined` when absent or not a decimal number (Node rejects those itself). */
const declaredLength = (header: string | undefined): number | undefined =>
  header !== undefined && /^\d{1,16}$/.test(header) ? Number(header) : undefined

/**
 * The middleware, over a budget and limits given as values (tests build it directly).
 *
 * @category constructors
 */
export const make = (limits: BodyLimitsConfig, budget: BodyBudget["Service"]) =>
  HttpRouter.middleware(
    (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const path = request.url.split("?")[0] ?? request.url
        const limit = limitFor(limits, request.method, path)
        const declared = declaredLength(request.headers["content-length"])
        if (declared !== undefined && declared > limit.bytes) return tooLarge(limit)
        // a body without a declared length (chunked) holds its endpoint's whole limit, except where the handler
        // reads the stream itself and takes as the bytes come; a request without either header has no body
        const chunked = declared === undefined && request.headers["transfer-encoding"] !== undefined
        const contentType = request.headers["content-type"]
        // a body that does not say what it is is not guessed to be JSON (decision 0106); nothing of it is read
        if (contentType === undefined && (chunked || (declared ?? 0) > 0)) {
          return errorBody(400, MISSING_CONTENT_TYPE, {})
        }
        const held = declared ?? (chunked && !streamsItsBody(request.method, path) ? limit.bytes : 0)
        if (!(yield* budget.tryTake(held))) return busy(budget.capacity)
        // The body is read once, within its limit (the read is cached: the endpoint's decoder reuses it), and checked
        // against BodyText's rules (text, nesting, numbers) before any endpoint sees it; create-batch-call applies
        // the same rules to its stream (BatchCallBody.ts). A body is JSON when it says so, as the decoder reads it.
        // Without a Content-Type a request has no body here (Node's parser never makes one without a length or
        // chunks); another server adapter (the web handler) may hold one all the same, so the rule is checked on the
        // bytes too. create-batch-call checks its own stream (BatchCallBody.ts: `undeclaredType`).
        const json = contentType !== undefined && mediaType(contentType) === "application/json"
        const checked = WITH_BODY.has(request.method) && !streamsItsBody(request.method, path) &&
            (json || contentType === undefined)
          ? Effect.flatMap(Effect.result(request.arrayBuffer), (read) => {
            // a body that cannot be read (too large, cut off) is answered by the endpoint's decoder, as before
            if (Result.isFailure(read)) return httpEffect
            const bytes = new Uint8Array(read.success)
            const problem = json ? BodyText.check(bytes) : bytes.length > 0 ? MISSING_CONTENT_TYPE : undefined
            return problem === undefined
              ? httpEffect
              : Effect.succeed(HttpServerResponse.jsonUnsafe(ErrorBody.make(problem), { status: 400 }))
          })
          : httpEffect
        return yield* checked.pipe(
          Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limit.bytes)),
          Effect.provideService(CurrentRequestBody, { limit, declared }),
          Effect.catchCause((cause) => {
            const error = Cause.squash(cause)
            if (isTooLarge(error)) return Effect.succeed(tooLarge(limit))
            if (error instanceof RequestBodyBudgetExhausted) return Effect.succeed(busy(budget.capacity))
            return Effect.failCause(cause)
          }),
          // the framework answers a streamed payload over its limit with a bare 413
          Effect.map((response) => response.status === 413 ? tooLarge(limit) : response),
          Effect.ensuring(budget.release(held))
        )
      }),
    { global: true }
  )

/**
 * The middleware with the configured limits, over the process's {@link BodyBudget}.
 *
 * @category layers
 */
export const layer: Layer.Layer<never, Config.ConfigError | Error, BodyBudget | HttpRouter.HttpRouter> = Layer.unwrap(
  Effect.gen(function*() {
    const limits = yield* BodyLimitsConfig
    const budget = yield* BodyBudget
    for (
      const [setting, value] of [
        ["SVC_MAX_BODY_BYTES", limits.batchCall],
        ["SVC_MAX_CONTACT_BODY_BYTES", limits.contact],
        ["SVC_MAX_SMALL_BODY_BYTES", limits.other]
      ] as const
    ) {
      if (!Number.isSafeInteger(value) || value < 1) {
        return yield* Effect.fail(new Error(`${setting} must be a number of bytes >= 1 (got ${value})`))
      }
    }
    if (budget.capacity < limits.batchCall) {
      return yield* Effect.fail(
        new Error(
          `SVC_MAX_INFLIGHT_BODY_BYTES (${budget.capacity}) must be at least SVC_MAX_BODY_BYTES (${limits.batchCall}): ` +
            "a batch at its limit could never be received"
        )
      )
    }
    return make(limits, budget)
  })
)
