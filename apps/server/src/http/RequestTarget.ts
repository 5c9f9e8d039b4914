/**
 * The request target (path and query) checked like a body, before routing (issue 16, items 4 and 7:
 * `GET /get-contact/a%00b` reached PostgreSQL, which rejects NUL, and answered 500; `%FF` and long
 * ids answered a misleading 404). One rule for every path parameter and query value: valid
 * percent-encoded UTF-8, no control characters (U+0000-U+001F, U+007F), at most 100 characters
 * (the router's own limit for a path parameter). A violation is a 400 naming the parameter.
 *
 * Decision record: docs/decisions/0011-request-target-rules.md
 */

/** Longest path parameter or query value, in characters (find-my-way's `maxParamLength`). */
export const MAX_VALUE_LENGTH = 100

/** Path prefixes whose next segment is a named parameter (packages/api's endpoints). */
const PARAMETERS: ReadonlyArray<readonly [prefix: string, name: string]> = [
  ["/get-contact/", "contact_id"],
  ["/update-contact/", "contact_id"],
  ["/delete-contact/", "contact_id"],
  ["/get-batch-test/", "test_case_batch_job_id"],
  ["/get-batch-call/", "batch_call_id"],
  ["/cancel-batch-call/", "batch_call_id"]
]

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/

const problem = (what: string, raw: string): string | undefined => {
  let value: string
  try {
    value = decodeURIComponent(raw)
  } catch {
    return `${what} is not valid percent-encoded UTF-8`
  }
  if (CONTROL.test(value)) return `${what} must not contain control characters such as NUL (U+0000)`
  if (value.length > MAX_VALUE_LENGTH) return `${what} is longer than ${MAX_VALUE_LENGTH} characters`
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
    const found = problem(`path parameter ${parameter[1]}`, path.slice(parameter[0].length))
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
    if (CONTROL.test(name) || name.length > MAX_VALUE_LENGTH) return "a query parameter name is not acceptable"
    const found = problem(`query parameter ${name}`, (equals === -1 ? "" : pair.slice(equals + 1)).replaceAll("+", " "))
    if (found !== undefined) return found
  }
  return undefined
}
