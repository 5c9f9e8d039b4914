/**
 * The last word on every response (spec: Errors): whatever went wrong becomes
 * `{"status":"error","message":...}` with a status the spec lists, and every response carries an
 * `x-request-id` that is also in the logs.
 *
 * - Request decoding failures (malformed JSON, wrong types, rule violations) -> 400 naming the field
 *   and the rule, through the domain's decode-message formatter.
 * - A path parameter or query value that is not valid UTF-8, holds a control character or is too
 *   long -> 400 naming it (RequestTarget), before routing.
 * - Unknown path or method -> 404. An endpoint the deprecation schedule names (removed, deprecated or
 *   not yet either; svc routes none of them) -> 404 naming its status, date and replacement (decided by
 *   the domain's engine as of now, from `Clock`).
 * - The database unreachable (refused, dropped, restarting) -> 503 with `Retry-After`, logged once per
 *   outage by DatabaseAvailability, which also answers later requests 503 at once until it returns.
 * - Anything else unexpected -> 500 with a generic message and the request id; the cause is logged,
 *   never sent (no SQL, no stack traces on the wire).
 */
import * as ErrorBody from "@svc/api/ErrorBody.ts"
import * as DeprecationEndpoints from "@svc/domain/Deprecation/Endpoints.ts"
import * as DeprecationRule from "@svc/domain/Deprecation/Rule.ts"
import { formatDecodeError } from "@svc/domain/models/DecodeMessage.ts"
import { isUnavailable } from "@svc/store/db/DatabaseUnavailable.ts"
import { Cause, Clock, Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import * as crypto from "node:crypto"
import * as BodyLimits from "./BodyLimits.ts"
import { DatabaseAvailability } from "./DatabaseAvailability.ts"
import * as RequestTarget from "./RequestTarget.ts"

const body = (status: number, message: string) => HttpServerResponse.jsonUnsafe(ErrorBody.make(message), { status })

const ROOTS = { Params: "path", Query: "query", Headers: "headers" } as const

/**
 * What the 404 of an unrouted path says. A path the deprecation schedule names gets its status on the day
 * (will be deprecated / deprecated since / removed on DATE) and its replacement, whatever that status: svc
 * serves none of them, and "no endpoint" would hide what the schedule knows (decision 0011). Any other
 * path gets a plain "no endpoint".
 */
export const notFoundMessage = (method: string, path: string, at: number): string => {
  const finding = DeprecationEndpoints.checkEndpoint(method, path, at)
  if (finding === undefined) return `no endpoint ${method} ${path}; see /openapi.json for the API`
  if (finding.status === "removed" && finding.endpoint.partial === undefined) {
    return `${method} ${path} was removed on ${finding.removedOn ?? finding.date}; use ${finding.replacement}`
  }
  const part = finding.endpoint.partial === undefined ? "" : ` ${finding.endpoint.partial}`
  return `${method} ${path} ${DeprecationRule.describeStatus(finding.rule, at)}${part} and is not served by svc; ` +
    `use ${finding.replacement}`
}

/** The response for a failure that escaped the handlers. */
export const toResponse = (
  cause: Cause.Cause<unknown>,
  method: string,
  path: string,
  requestId: string,
  limits: BodyLimits.BodyLimitsConfig
) =>
  Effect.gen(function*() {
    const error = Cause.squash(cause)
    const tooLarge = BodyLimits.tooLargeMessage(BodyLimits.limitFor(limits, method, path))
    // A response that does not match its own schema is our bug: a 500, logged below.
    if (HttpApiError.HttpApiSchemaError.is(error) && error.kind !== "Body" && error.kind !== "ResponseHeaders") {
      const kind = error.kind as keyof typeof ROOTS | "Payload" | "Body"
      const root = kind in ROOTS ? ROOTS[kind as keyof typeof ROOTS] : "request body"
      return body(
        400,
        formatDecodeError(error.cause, root === "path" || root === "query" ? { root, parameters: root } : { root })
      )
    }
    if (HttpApiError.HttpApiPayloadTooLarge.is(error)) {
      return body(400, tooLarge)
    }
    // The router's own failures arrive as HttpServerError with a reason (RouteNotFound, ...).
    const tag = typeof error === "object" && error !== null && "reason" in error &&
        typeof error.reason === "object" && error.reason !== null && "_tag" in error.reason
      ? error.reason._tag
      : undefined
    if (tag === "RouteNotFound") return body(404, notFoundMessage(method, path, yield* Clock.currentTimeMillis))
    if (tag === "RequestParseError") {
      // Both adapters (Node's server and the web handler) say why: a body over the limit is "BodyTooLarge".
      const parse = (error as { readonly reason: { readonly reason?: unknown } }).reason
      return body(
        400,
        parse.reason === "BodyTooLarge" ? tooLarge : "request body could not be read"
      )
    }
    if (isUnavailable(error)) {
      const availability = yield* DatabaseAvailability
      yield* availability.report(error)
      return availability.response()
    }
    yield* Effect.logError("unexpected failure", cause).pipe(Effect.annotateLogs({ requestId }))
    return body(500, `unexpected server error; quote request id ${requestId} when reporting it`)
  })

/** @category layers */
export const layer = Layer.unwrap(Effect.gen(function*() {
  const availability = yield* DatabaseAvailability
  const limits = yield* BodyLimits.BodyLimitsConfig
  return HttpRouter.middleware(
    (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const given = request.headers["x-request-id"]
        const requestId = given !== undefined && /^[\w.-]{1,64}$/.test(given) ? given : crypto.randomUUID()
        const path = request.url.split("?")[0] ?? request.url
        const badTarget = RequestTarget.check(request.url)
        // During an outage, answer at once instead of queueing on a pool that cannot connect.
        const answered = badTarget !== undefined
          ? body(400, badTarget)
          : availability.refuses(path)
          ? availability.response()
          : yield* httpEffect.pipe(
            Effect.catchCause((cause) =>
              Cause.hasInterruptsOnly(cause)
                ? Effect.failCause(cause)
                : toResponse(cause, request.method, path, requestId, limits)
            ),
            Effect.annotateLogs({ requestId }),
            Effect.provideService(DatabaseAvailability, availability)
          )
        // The framework answers a few refusals itself, outside the spec's statuses and shape.
        const response = answered.status === 415
          ? body(400, `Content-Type ${request.headers["content-type"] ?? ""} is not supported; send application/json`)
          : answered.status === 413
          ? body(400, BodyLimits.tooLargeMessage(BodyLimits.limitFor(limits, request.method, path)))
          : answered
        return HttpServerResponse.setHeader(response, "x-request-id", requestId)
      }),
    { global: true }
  )
}))
