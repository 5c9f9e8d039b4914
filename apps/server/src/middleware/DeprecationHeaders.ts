/**
 * Endpoints the deprecation schedule deprecates but has not removed yet keep working and say so on
 * every answer (design: HTTP API), decided by the domain's engine as of now:
 *
 * - `Deprecation: @<unix seconds>` of the deprecation date (RFC 9745),
 * - `Sunset: <HTTP-date>` of the removal date when one is scheduled (RFC 8594),
 * - `Link: </docs>; rel="deprecation"` pointing at the documentation (RFC 9745 §3).
 *
 * Removed endpoints never reach a handler: they are 404s (ErrorResponses.ts).
 */
import * as DeprecationEndpoints from "@svc/domain/Deprecation/Endpoints.ts"
import * as DeprecationRule from "@svc/domain/Deprecation/Rule.ts"
import { Clock, Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"

/** The headers for `method path` as of `at`, or none. */
export const headersFor = (method: string, path: string, at: number): Record<string, string> => {
  const finding = DeprecationEndpoints.checkEndpoint(method, path, at)
  if (finding === undefined || finding.status !== "deprecated" || finding.deprecatedOn === undefined) return {}
  const headers: Record<string, string> = {
    deprecation: `@${Math.floor(DeprecationRule.utcMidnight(finding.deprecatedOn) / 1000)}`,
    link: "</docs>; rel=\"deprecation\"; type=\"text/html\""
  }
  if (finding.removedOn !== undefined) {
    headers["sunset"] = new Date(DeprecationRule.utcMidnight(finding.removedOn)).toUTCString()
  }
  return headers
}

/** @category layers */
export const layer = HttpRouter.middleware(
  (httpEffect) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const response = yield* httpEffect
      if (response.status >= 400) return response
      const headers = headersFor(
        request.method,
        request.url.split("?")[0] ?? request.url,
        yield* Clock.currentTimeMillis
      )
      return Object.keys(headers).length === 0 ? response : HttpServerResponse.setHeaders(response, headers)
    }),
  { global: true }
)
