/**
 * The input rule of every endpoint that its schemas cannot state (docs/decisions/0105-input-rules.md), checked
 * after the API key and before decoding: an endpoint that declares no query parameters accepts none. The builder
 * never reads an undeclared query, so `?limit=5` on get-contact would be dropped silently; declared queries
 * reject unknown parameters through their schemas (RequestDecoding.ts). A 400 names the parameter.
 *
 * The text rules of path parameters, query values and bodies (valid UTF-8, no NUL, no unpaired surrogate, length)
 * are checked before routing, for every request, by RequestTarget.ts and BodyText.ts (decision 0011).
 */
import { badRequest } from "@svc/api/Errors.ts"
import { InputRules } from "@svc/api/InputRules.ts"
import * as Text from "@svc/domain/models/Text.ts"
import { Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"

/**
 * The router's bound on one decoded path parameter: far above `maxIdLength`, so that an id of up to 255
 * characters reaches its schema (whose message names the rule) however it is percent-encoded.
 */
export const routerConfig = { maxParamLength: 4096 } as const

const maxShown = 80

const show = (value: string): string => {
  const text = JSON.stringify(value)
  return text.length > maxShown ? `${text.slice(0, maxShown - 1)}…` : text
}

const decodeComponent = (raw: string): string | undefined => {
  try {
    return decodeURIComponent(raw)
  } catch {
    return undefined
  }
}

const notPercentUtf8 = "is not valid percent-encoded UTF-8"

/** The parameters of a raw query string, in order, as sent (still percent-encoded). */
export const queryParameters = (url: string): ReadonlyArray<{ readonly name: string; readonly value: string }> => {
  const mark = url.indexOf("?")
  if (mark === -1) return []
  const parameters: Array<{ name: string; value: string }> = []
  for (const piece of url.slice(mark + 1).split("#")[0]!.split("&")) {
    if (piece === "") continue
    const equals = piece.indexOf("=")
    parameters.push(
      equals === -1 ? { name: piece, value: "" } : { name: piece.slice(0, equals), value: piece.slice(equals + 1) }
    )
  }
  return parameters
}

/** What is wrong with a query string, as the message of a 400; `undefined` when nothing is. */
export const queryProblem = (url: string, declaresQuery: boolean): string | undefined => {
  for (const raw of queryParameters(url)) {
    // form encoding: "+" is a space
    const name = decodeComponent(raw.name.replace(/\+/g, " "))
    if (name === undefined) return `a query parameter name ${notPercentUtf8} (got ${show(raw.name)})`
    const nameProblem = Text.textProblem(name)
    if (nameProblem !== undefined) return `a query parameter name ${nameProblem} (got ${show(name)})`
    if (!declaresQuery) return `query parameter ${name} is not a known parameter of this endpoint (it takes none)`
    const value = decodeComponent(raw.value.replace(/\+/g, " "))
    if (value === undefined) return `query parameter ${name} ${notPercentUtf8} (got ${show(raw.value)})`
    const valueProblem = Text.textProblem(value)
    if (valueProblem !== undefined) return `query parameter ${name} ${valueProblem} (got ${show(value)})`
  }
  return undefined
}

/** @category layers */
export const layer = Layer.succeed(InputRules)((httpEffect, { endpoint }) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const query = queryProblem(request.url, endpoint.query !== undefined)
    if (query !== undefined) return yield* badRequest(query)
    return yield* httpEffect
  })
)
