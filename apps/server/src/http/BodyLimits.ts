/**
 * The largest request body each endpoint accepts, sized to what it can legitimately carry (issue 16,
 * item 3: one limit of 256 MiB for every endpoint let a 200 MB body to list-contacts raise the RSS by
 * ~750 MB). create-batch-call carries up to `SVC_MAX_TASKS_PER_BATCH` tasks with overrides and keeps
 * `SVC_MAX_BODY_BYTES`; a contact with its custom fields fits in `SVC_MAX_CONTACT_BODY_BYTES`; every
 * other endpoint (lists, filters, backfill, single resources) in `SVC_MAX_SMALL_BODY_BYTES`. A larger
 * body is refused as its bytes arrive (declared length or chunks), never buffered whole, with a 400
 * naming the endpoint's limit (the spec lists 400, not 413).
 *
 * Bodies also share a per-process budget, `SVC_MAX_INFLIGHT_BODY_BYTES` (default 128 MiB): a body larger
 * than 64 KiB takes its declared length from the budget (the endpoint's limit when undeclared, at most the
 * whole budget) until its answer is written. One that cannot get it within `SVC_BODY_BUDGET_WAIT_MS`
 * (default 60 s) is answered 503 with `Retry-After: 5`: the server is busy, the request is not wrong, and the
 * vendor's clients retry 5xx. Four 100,000-task batches at once no longer all hold their bodies and their
 * decoded forms at the same time beyond what the budget allows.
 *
 * Decision record: docs/decisions/0012-request-body-limits.md
 */
import { ByteSize, Config, Duration, Effect, Layer, Option, Semaphore } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as BodyText from "./BodyText.ts"

/** @category models */
export interface Limits {
  readonly batch: number
  readonly contact: number
  readonly small: number
}

/** @category configuration */
export const config: Config.Config<Limits> = Config.all({
  batch: Config.withDefault(Config.Int("SVC_MAX_BODY_BYTES"), 256 * 1024 * 1024),
  contact: Config.withDefault(Config.Int("SVC_MAX_CONTACT_BODY_BYTES"), 1024 * 1024),
  small: Config.withDefault(Config.Int("SVC_MAX_SMALL_BODY_BYTES"), 64 * 1024)
})

/** @category configuration */
export const budgetConfig = Config.all({
  bytes: Config.withDefault(Config.Int("SVC_MAX_INFLIGHT_BODY_BYTES"), 128 * 1024 * 1024),
  waitMs: Config.withDefault(Config.Int("SVC_BODY_BUDGET_WAIT_MS"), 60_000)
})

/** Bodies up to this size skip the budget: lists and single resources never wait on a large batch. */
const UNBUDGETED_BYTES = 64 * 1024

/** The 503 of a body that found no room in the budget. */
const busy = () =>
  HttpServerResponse.jsonUnsafe(
    {
      status: "error",
      message: "the server is busy with other large requests (SVC_MAX_INFLIGHT_BODY_BYTES); retry in 5 s"
    },
    { status: 503, headers: { "retry-after": "5" } }
  )

/** The limit for a request path, and the setting that holds it. */
export const limitFor = (path: string, limits: Limits): { readonly bytes: number; readonly setting: string } =>
  path === "/create-batch-call"
    ? { bytes: limits.batch, setting: "SVC_MAX_BODY_BYTES" }
    : path === "/create-contact" || path.startsWith("/update-contact/")
    ? { bytes: limits.contact, setting: "SVC_MAX_CONTACT_BODY_BYTES" }
    : { bytes: limits.small, setting: "SVC_MAX_SMALL_BODY_BYTES" }

/** The 400 message for a body over the limit of `path`. */
export const tooLarge = (path: string, limits: Limits): string => {
  const { bytes, setting } = limitFor(path, limits)
  return `request body is larger than ${path} accepts (${bytes} bytes, ${setting})`
}

const WITH_BODY = new Set(["POST", "PUT", "PATCH"])

/** @category layers */
export const layer = Layer.unwrap(
  Effect.gen(function*() {
    const limits = yield* config
    const budget = yield* budgetConfig
    // Permits are KiB: a semaphore counts in integers, and 512 MiB in bytes would be past what it is meant for.
    const total = Math.max(1, Math.floor(budget.bytes / 1024))
    const permits = yield* Semaphore.make(total)
    const wait = Duration.millis(budget.waitMs)
    return HttpRouter.middleware(
      (httpEffect) =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
          const path = request.url.split("?")[0] ?? request.url
          const limit = limitFor(path, limits).bytes
          if (!WITH_BODY.has(request.method)) {
            return Effect.provideService(httpEffect, HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limit))
          }
          // The body is read once, within its limit (the read is cached: the endpoint's decoder reuses it), and
          // its text checked against BodyText's rule before any endpoint sees it.
          const checked = /json/i.test(request.headers["content-type"] ?? "")
            ? Effect.flatMap(request.arrayBuffer, (buffer) => {
              const problem = BodyText.check(new Uint8Array(buffer))
              return problem === undefined
                ? httpEffect
                : Effect.succeed(HttpServerResponse.jsonUnsafe({ status: "error", message: problem }, { status: 400 }))
            })
            : httpEffect
          const limited = Effect.provideService(checked, HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limit))
          const declared = Number(request.headers["content-length"])
          const bytes = Math.min(Number.isSafeInteger(declared) && declared >= 0 ? declared : limit, limit)
          if (bytes <= UNBUDGETED_BYTES) return limited
          const need = Math.min(total, Math.ceil(bytes / 1024))
          return Effect.flatMap(
            Effect.timeoutOption(permits.take(need), wait),
            (taken) => Option.isNone(taken) ? Effect.succeed(busy()) : Effect.ensuring(limited, permits.release(need))
          )
        }),
      { global: true }
    )
  })
)
