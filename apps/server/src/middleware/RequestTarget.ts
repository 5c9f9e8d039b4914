/**
 * The request target (path and query) checked like a body, before routing (decision 0011:
 * `GET /get-contact/a%00b` reached PostgreSQL, which rejects NUL, and answered 500; `%FF` and long
 * ids answered a misleading 404). One rule for every path parameter and query value: valid
 * percent-encoded UTF-8, no control characters (U+0000-U+001F, U+007F); a path parameter at most 255
 * characters (the ids' own bound, `maxIdLength`), a query value at most 1,024 (a pagination key fits). A
 * violation is a 400 naming the parameter. The router's own bound on a parameter is raised above these
 * (InputRules.routerConfig), so a long id is named here rather than answered with a misleading 404.
 *
 * Decision record: docs/decisions/0011-request-target-rules.md
 */
import { Api } from "@svc/api/Api.ts"
import { maxIdLength } from "@svc/domain/models/Ids.ts"
import { HttpApi } from "effect/http-api"

/** Longest path parameter, in characters: an id's bound. */
export const MAX_PARAMETER_LENGTH = maxIdLength

/** Longest query value or name, in characters. */
export const MAX_QUERY_LENGTH = 1024

/**
 * Path prefixes whose next (last) segment is a named parameter, from the API's own endpoints, so that a new
 * endpoint is covered without a list to keep in step.
 */
const PARAMETERS: ReadonlyArray<readonly [prefix: string, name: string]> = (() => {
  const found: Array<readonly [string, string]> = []
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const match = /^(.*\/):([A-Za-z_]+)$/.exec(endpoint.path)
      if (match !== null && !found.some(([prefix]) => prefix === match[1])) found.push([match[1]!, match[2]!])
    }
  })
  return found
})()

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/

const problem = (what: string, raw: string, max: number): string | undefined => {
  let value: string
  try {
    value = decodeURIComponent(raw)
  } catch {
    return `${what} is not valid percent-encoded UTF-8`
  }
  if (CONTROL.test(value)) return `${what} must not contain control characters such as NUL (U+0000)`
  if (value.length > max) return `${what} is longer than ${max} characters`
  return undefined
}

/**
 * The 400 message for a request target that breaks the rule, or undefined when it is fine.
 *
 * @category validation
 */
export const check = (url: string): string | undefined => {
  const queryAt = url.indexOf("?")
  const path = queryAt === -1 ? url : url.slice(0, queryAt)
  const parameter = PARAMETERS.find(([prefix]) => path.startsWith(prefix))
  if (parameter !== undefined) {
    const found = problem(`path parameter ${parameter[1]}`, path.slice(parameter[0].length), MAX_PARAMETER_LENGTH)
    if (found !== undefined) return found
  } else {
    for (const segment of path.split("/")) {
      try {
        decodeURIComponent(segment)
      } catch {
        return "the request path is not valid percent-encoded UTF-8"
      }
    }
  }
  if (queryAt === -1) return undefined
  for (const pair of url.slice(queryAt + 1).split("&")) {
    if (pair === "") continue
    const equals = pair.indexOf("=")
    const rawName = equals === -1 ? pair : pair.slice(0, equals)
    let name: string
    try {
      name = decodeURIComponent(rawName.replaceAll("+", " "))
    } catch {
      return "a query parameter name is not valid percent-encoded UTF-8"
    }
    if (CONTROL.test(name) || name.length > MAX_QUERY_LENGTH) return "a query parameter name is not acceptable"
    const found = problem(
      `query parameter ${name}`,
      (equals === -1 ? "" : pair.slice(equals + 1)).replaceAll("+", " "),
      MAX_QUERY_LENGTH
    )
    if (found !== undefined) return found
  }
  return undefined
}
