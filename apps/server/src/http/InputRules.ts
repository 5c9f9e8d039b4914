/**
 * The input rules of every endpoint that its schemas cannot state (docs/decisions/0105-input-rules.md),
 * checked after the API key and before decoding:
 *
 * - an endpoint that declares no query parameters accepts none: the builder never reads an undeclared
 *   query, so without this check `?limit=5` on get-contact would be dropped silently, while declared
 *   queries reject unknown parameters through their schemas (RequestDecoding.ts).
 */
import { badRequest } from "@svc/api/Errors.ts"
import { InputRules } from "@svc/api/InputRules.ts"
import { Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"

/** The names of the parameters of a raw query string, in order, as sent (still percent-encoded). */
export const queryParameterNames = (url: string): ReadonlyArray<string> => {
  const mark = url.indexOf("?")
  if (mark === -1) return []
  const names: Array<string> = []
  for (const piece of url.slice(mark + 1).split("&")) {
    if (piece === "") continue
    const equals = piece.indexOf("=")
    names.push(equals === -1 ? piece : piece.slice(0, equals))
  }
  return names
}

const shownName = (raw: string): string => {
  try {
    return decodeURIComponent(raw.replace(/\+/g, " "))
  } catch {
    return raw
  }
}

/** @category layers */
export const layer = Layer.succeed(InputRules)((httpEffect, { endpoint }) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (endpoint.query === undefined) {
      const [first] = queryParameterNames(request.url)
      if (first !== undefined) {
        return yield* badRequest(
          `query parameter ${shownName(first)} is not a known parameter of this endpoint (it takes none)`
        )
      }
    }
    return yield* httpEffect
  })
)
