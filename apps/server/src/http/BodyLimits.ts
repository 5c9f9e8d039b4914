/**
 * The largest request body each endpoint accepts, sized to what it can legitimately carry (issue 16,
 * item 3: one limit of 256 MiB for every endpoint let a 200 MB body to list-contacts raise the RSS by
 * ~750 MB). create-batch-call carries up to `SVC_MAX_TASKS_PER_BATCH` tasks with overrides and keeps
 * `SVC_MAX_BODY_BYTES`; a contact with its custom fields fits in `SVC_MAX_CONTACT_BODY_BYTES`; every
 * other endpoint (lists, filters, backfill, single resources) in `SVC_MAX_SMALL_BODY_BYTES`. A larger
 * body is refused as its bytes arrive (declared length or chunks), never buffered whole, with a 400
 * naming the endpoint's limit (the spec lists 400, not 413).
 *
 * Decision record: docs/decisions/0012-request-body-limits.md
 */
import { ByteSize, Config, Effect, Layer } from "effect"
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
  Effect.map(config, (limits) =>
    HttpRouter.middleware(
      (httpEffect) =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
          const path = request.url.split("?")[0] ?? request.url
          // The body is read once, within its limit (the read is cached: the endpoint's decoder reuses it), and its
          // text checked against BodyText's rule before any endpoint sees it.
          const checked = WITH_BODY.has(request.method) && /json/i.test(request.headers["content-type"] ?? "")
            ? Effect.flatMap(request.arrayBuffer, (buffer) => {
              const problem = BodyText.check(new Uint8Array(buffer))
              return problem === undefined
                ? httpEffect
                : Effect.succeed(HttpServerResponse.jsonUnsafe({ status: "error", message: problem }, { status: 400 }))
            })
            : httpEffect
          return Effect.provideService(
            checked,
            HttpIncomingMessage.MaxBodySize,
            ByteSize.bytes(limitFor(path, limits).bytes)
          )
        }),
      { global: true }
    ))
)
