/**
 * HTTP method + path checks against the schedule's endpoint rules (spec rows 5, 6, 7, 8, 9, 10).
 *
 * A request path is compared segment by segment with the rules' path templates: the query string
 * and fragment are ignored, a scheme and host (a full URL found in source code) are dropped, empty
 * segments (trailing or doubled slashes) are ignored, and a `{param}` segment matches any one
 * non-empty segment (ids stay percent-encoded; an encoded `/` never splits a segment). `HEAD` is
 * checked as `GET`. Paths are case-sensitive, as routes are. The templates are indexed by their
 * first segment once, so a check looks at one or two candidates.
 *
 * @category models
 */
import {
  type AsOf,
  classify,
  deprecatedOn,
  describeStatus,
  type EndpointPattern,
  removedOn,
  type Rule,
  type RuleId,
  type Status,
  toEpochMillis
} from "./Rule.ts"
import { rules } from "./Schedule.ts"

/**
 * The result of checking a method and path.
 *
 * @category models
 */
export interface EndpointFinding {
  readonly ruleId: RuleId
  readonly rule: Rule
  /** The template that matched. */
  readonly endpoint: EndpointPattern
  readonly status: Status
  /** The milestone date that sets the status; the next milestone's date when `upcoming`. */
  readonly date: string
  /** First date the endpoint is deprecated (the `Deprecation` header), if ever. */
  readonly deprecatedOn: string | undefined
  /** Date the endpoint is removed (the `Sunset` header, the 404 message), if ever. */
  readonly removedOn: string | undefined
  /** What to call instead. */
  readonly replacement: string
  /** A sentence naming the endpoint, its status and date, and the replacement. */
  readonly message: string
}

interface Compiled {
  readonly rule: Rule
  readonly endpoint: EndpointPattern
  /** Literal segments, `undefined` for a parameter. */
  readonly segments: ReadonlyArray<string | undefined>
}

const splitPath = (path: string): Array<string> => path.split("/").filter((segment) => segment.length > 0)

const compile = (rule: Rule, endpoint: EndpointPattern): Compiled => ({
  rule,
  endpoint,
  segments: splitPath(endpoint.path).map((segment) => segment.startsWith("{") ? undefined : segment)
})

/**
 * Every endpoint template of the schedule with its rule, in schedule order (for a server that
 * registers routes for removed paths, or documentation).
 *
 * @category models
 */
export const endpointRules: ReadonlyArray<{ readonly rule: Rule; readonly endpoint: EndpointPattern }> = rules
  .flatMap((rule) => rule.endpoints.map((endpoint) => ({ rule, endpoint })))

const index: ReadonlyMap<string, ReadonlyArray<Compiled>> = (() => {
  const map = new Map<string, Array<Compiled>>()
  for (const { endpoint, rule } of endpointRules) {
    const compiled = compile(rule, endpoint)
    const first = compiled.segments[0] ?? ""
    const bucket = map.get(first)
    if (bucket === undefined) map.set(first, [compiled])
    else bucket.push(compiled)
  }
  return map
})()

const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//

/**
 * The path segments a request path or URL is compared on: no scheme/host, no query string or
 * fragment, no empty segments.
 *
 * @category combinators
 */
export const pathSegments = (pathOrUrl: string): ReadonlyArray<string> => {
  let path = pathOrUrl
  const scheme = SCHEME.exec(path)
  if (scheme !== null) {
    const slash = path.indexOf("/", scheme[0].length)
    // Stryker disable next-line StringLiteral: equivalent — splitPath("/") and splitPath("") are both []
    path = slash === -1 ? "/" : path.slice(slash)
  }
  const query = path.search(/[?#]/)
  if (query !== -1) path = path.slice(0, query)
  return splitPath(path)
}

const matches = (compiled: Compiled, method: string, segments: ReadonlyArray<string>): boolean => {
  if (compiled.endpoint.method !== "*" && compiled.endpoint.method !== method) return false
  if (compiled.segments.length !== segments.length) return false
  for (let i = 0; i < segments.length; i++) {
    const literal = compiled.segments[i]
    if (literal !== undefined && literal !== segments[i]) return false
  }
  return true
}

/**
 * The schedule's verdict on an HTTP method and path at `asOf`, or `undefined` when no rule names
 * the endpoint. Removed endpoints get status `removed` from their date on (the server answers 404
 * naming `replacement` and `removedOn`); deprecated ones get `deprecated` (the server adds
 * `Deprecation`/`Sunset`/`Link` headers).
 *
 * @category combinators
 */
export const checkEndpoint = (method: string, pathOrUrl: string, asOf: AsOf): EndpointFinding | undefined => {
  const segments = pathSegments(pathOrUrl)
  const bucket = index.get(segments[0] ?? "")
  if (bucket === undefined) return undefined
  const upper = method.toUpperCase()
  const verb = upper === "HEAD" ? "GET" : upper
  const compiled = bucket.find((candidate) => matches(candidate, verb, segments))
  if (compiled === undefined) return undefined
  const { endpoint, rule } = compiled
  const at = toEpochMillis(asOf)
  const { date, status } = classify(rule, at)
  const removal = removedOn(rule)
  const subject = `${verb} ${endpoint.path}${endpoint.partial === undefined ? "" : ` ${endpoint.partial}`}`
  return {
    ruleId: rule.id,
    rule,
    endpoint,
    status,
    date,
    deprecatedOn: deprecatedOn(rule),
    removedOn: removal,
    replacement: endpoint.replacement,
    message: `${subject} ${describeStatus(rule, at)}; use ${endpoint.replacement}`
  }
}
