/**
 * Scans source code as text (any language) for what the schedule removes or deprecates:
 *
 * - endpoint paths of the schedule's endpoint rules inside string literals or URLs
 *   (`"/list-agents"`, `` `${base}/get-agent-versions/${id}` ``, `f"{BASE}/publish-agent/{agent_id}"`,
 *   `https://api.example.com/v2/create-web-call`, `GET /list-agents` in `.http` files), with the
 *   HTTP method taken from the same statement when it is written there;
 * - request-body keys that are removed or deprecated (`analysis_summary_prompt:`,
 *   `"inbound_agent_id":`, `inbound_agent_id=`, Go `json:"inbound_agent_id"` tags);
 * - the calendar tool type strings and the scalar language `"multi"`;
 * - SIP URIs on a legacy SIP host and URLs on a legacy tool-protocol (MCP) host.
 *
 * A path is a finding only in a string or URL context (after a quote, `}` of an interpolation, a
 * `://host`, `$VAR` or an HTTP method word), so prose such as "the /list-agents endpoint" in a
 * comment is not reported. Matching of the path itself is the domain's `checkEndpoint`.
 */
import { checkEndpoint, endpointRules } from "@svc/domain/Deprecation/Endpoints.ts"
import { makeFinding, type RuleId, type Status } from "@svc/domain/Deprecation/Rule.ts"
import { getRule } from "@svc/domain/Deprecation/Schedule.ts"
import { globSource } from "../files/Glob.ts"
import { fieldPatterns, valuePatterns } from "../rules/SourcePatterns.ts"

/** A match in a source text. */
export interface SourceHit {
  readonly ruleId: RuleId
  readonly status: Status
  readonly date: string
  readonly message: string
  readonly replacement: string
  readonly start: number
  readonly end: number
}

/** Host lists for the integration rules. */
export interface Integrations {
  readonly legacySipHosts: ReadonlyArray<string>
  readonly legacyMcpHosts: ReadonlyArray<string>
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&")

// The first literal segments of every endpoint template, e.g. `list-agents`, `v2/create-web-call`.
const endpointHeads = [
  ...new Set(endpointRules.map(({ endpoint }) => {
    const segments = endpoint.path.split("/").filter((s) => s.length > 0)
    return /^v\d+$/.test(segments[0] ?? "") ? `${segments[0]}/${segments[1]}` : segments[0] ?? ""
  }))
].sort((a, b) => b.length - a.length)

const ENDPOINT = new RegExp(`/(?:v\\d+/)?(?:${endpointHeads.map(escape).join("|")})(?![\\w-])`, "g")

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]
const METHOD_WORD = /\b(GET|POST|PUT|PATCH|DELETE|HEAD)\b/
const METHOD_CALL =
  /\.(get|post|put|patch|delete|head)\s*[(<]|\bhttp\.(Get|Post|Head)\s*\(|Net::HTTP::(Get|Post|Put|Patch|Delete)\b|HttpMethod\.(GET|POST|PUT|PATCH|DELETE)\b|-X\s*(GET|POST|PUT|PATCH|DELETE)\b|--request\s+(GET|POST|PUT|PATCH|DELETE)\b|method\s*[:=]\s*["'`](GET|POST|PUT|PATCH|DELETE|get|post|put|patch|delete)["'`]/

const STRING_CONTEXT = /(?:["'`}]|(?:https?|wss?):\/\/[^\s"'`]*|\$\{?\w+\}?|\b(?:GET|POST|PUT|PATCH|DELETE|HEAD)\s+)$/

const FIELD = new RegExp(
  `(?<![\\w.$])(["']?)(${fieldPatterns.map((f) => escape(f.field)).join("|")})\\1\\s*\\??\\s*(?::(?!:)|=>|=(?!=))|` +
    `json:"(${fieldPatterns.map((f) => escape(f.field)).join("|")})[",]`,
  "g"
)
const fieldRule: ReadonlyMap<string, RuleId> = new Map(fieldPatterns.map((f) => [f.field, f.rule]))

const VALUE = new RegExp(`(["'\`])(${valuePatterns.map((v) => escape(v.value)).join("|")})\\1`, "g")
const valueRule: ReadonlyMap<string, RuleId> = new Map(valuePatterns.map((v) => [v.value, v.rule]))

const LANGUAGE_MULTI = /(["']?)language\1\s*(?::|=>|=)\s*(["'`])multi\2/g

const lineBounds = (text: string, offset: number) => {
  const start = text.lastIndexOf("\n", offset - 1) + 1
  const newline = text.indexOf("\n", offset)
  return { start, end: newline === -1 ? text.length : newline }
}

/** The path text starting at `start` (a `/`), interpolations kept as `{p}` segments. */
const readPath = (text: string, start: number): { path: string; end: number } => {
  let i = start
  let path = ""
  while (i < text.length) {
    const c = text[i]!
    if ((c === "$" || c === "#") && text[i + 1] === "{") {
      const close = text.indexOf("}", i + 2)
      if (close === -1) break
      path += "{p}"
      i = close + 1
      continue
    }
    if (c === "{") {
      const close = text.indexOf("}", i + 1)
      if (close === -1 || close - i > 80) break
      path += "{p}"
      i = close + 1
      continue
    }
    if (/[\s"'`<>()[\]{},;|\\]/.test(c)) break
    path += c
    i++
  }
  // `"/get-agent-versions/" + id`, `"/get-agent-versions/", id`: the id follows the literal.
  if (path.endsWith("/") && /^["'`]\s*(?:\+|,|\.\.|<<|%)/.test(text.slice(i, i + 8))) path += "{p}"
  return { path, end: i }
}

/** The method written near a path, if any: on its line, or in the next three lines. */
const methodNear = (text: string, offset: number): string | undefined => {
  const line = lineBounds(text, offset)
  const sameLine = text.slice(line.start, line.end)
  const found = (s: string) => {
    const call = METHOD_CALL.exec(s)
    if (call !== null) return call.slice(1).find((g) => g !== undefined)?.toUpperCase()
    return METHOD_WORD.exec(s)?.[1]
  }
  const here = found(sameLine)
  if (here !== undefined) return here
  // Options on the following lines belong to this call only while its parentheses are open.
  let depth = 0
  for (let i = offset; i < line.end; i++) {
    if (text[i] === "(" || text[i] === "{") depth++
    else if (text[i] === ")" || text[i] === "}") depth--
  }
  if (depth <= 0) return undefined
  let end = line.end
  for (let k = 0; k < 5 && end < text.length && depth > 0; k++) {
    const next = text.indexOf("\n", end + 1)
    const stop = next === -1 ? text.length : next
    for (let i = end; i < stop; i++) {
      if (text[i] === "(" || text[i] === "{") depth++
      else if (text[i] === ")" || text[i] === "}") depth--
    }
    end = stop
  }
  const after = text.slice(line.end, end)
  const option = /method\s*[:=]\s*["'`]?(GET|POST|PUT|PATCH|DELETE|get|post|put|patch|delete)\b/.exec(after)
  return option?.[1]?.toUpperCase()
}

const hostMatcher = (hosts: ReadonlyArray<string>): RegExp | undefined =>
  hosts.length === 0 ? undefined : new RegExp(`^(?:${hosts.map((h) => globSource(h.toLowerCase())).join("|")})$`)

const ruleHit = (rule: RuleId, at: number, subject: string, start: number, end: number): SourceHit => {
  const finding = makeFinding(getRule(rule), at, [], subject)
  return {
    ruleId: rule,
    status: finding.severity,
    date: finding.date,
    message: finding.message,
    replacement: finding.replacement,
    start,
    end
  }
}

/** Every hit in a source text at epoch milliseconds `at`, in text order. */
export const scan = (text: string, at: number, integrations: Integrations): Array<SourceHit> => {
  const hits: Array<SourceHit> = []

  for (const match of text.matchAll(ENDPOINT)) {
    const start = match.index
    if (!STRING_CONTEXT.test(text.slice(Math.max(0, start - 200), start))) continue
    const { end, path } = readPath(text, start)
    const method = methodNear(text, start)
    const candidates = method === undefined ? METHODS : [method]
    for (const candidate of candidates) {
      const found = checkEndpoint(candidate, path, at)
      if (found === undefined) continue
      hits.push({
        ruleId: found.ruleId,
        status: found.status,
        date: found.date,
        message: found.message,
        replacement: found.replacement,
        start,
        end
      })
      break
    }
  }

  for (const match of text.matchAll(FIELD)) {
    const field = match[2] ?? match[3]!
    const start = match.index + match[0].indexOf(field)
    hits.push(ruleHit(fieldRule.get(field)!, at, `the request field "${field}"`, start, start + field.length))
  }

  for (const match of text.matchAll(VALUE)) {
    const value = match[2]!
    hits.push(
      ruleHit(valueRule.get(value)!, at, `the tool type "${value}"`, match.index, match.index + match[0].length)
    )
  }

  for (const match of text.matchAll(LANGUAGE_MULTI)) {
    hits.push(
      ruleHit("agent-language-multi", at, "the scalar language \"multi\"", match.index, match.index + match[0].length)
    )
  }

  scanHosts(text, at, integrations.legacySipHosts, "legacy-sip-endpoint", "the legacy SIP host", hits)
  scanHosts(text, at, integrations.legacyMcpHosts, "legacy-mcp-server", "the legacy tool-protocol server host", hits)
  return hits.sort((a, b) => a.start - b.start)
}

/**
 * Host names matching host globs, wherever they appear (`sip:x@host`, `https://host/...`, a bare
 * `host` in a string). A cheap substring test on each glob's literal tail runs first, so texts
 * without the host cost one `includes`.
 */
const scanHosts = (
  text: string,
  at: number,
  hosts: ReadonlyArray<string>,
  rule: RuleId,
  subject: string,
  hits: Array<SourceHit>
) => {
  const matcher = hostMatcher(hosts)
  if (matcher === undefined) return
  const lower = text.toLowerCase()
  const tails = hosts.map((h) => h.toLowerCase().split(/[*?[\]{}]/).pop()!).filter((t) => t.length > 0)
  if (tails.length === hosts.length && !tails.some((t) => lower.includes(t))) return
  for (
    const match of lower.matchAll(
      /(?<![A-Za-z0-9.-])[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+/g
    )
  ) {
    if (!matcher.test(match[0])) continue
    hits.push(ruleHit(rule, at, `${subject} "${match[0]}"`, match.index, match.index + match[0].length))
  }
}

/**
 * The web client library in a `package.json`: a dependency on a major-2 version of the browser
 * client library (row 10). Returns the dependency section and package name of each hit.
 */
export const webClientDependencies = (
  json: unknown,
  packages: ReadonlyArray<string>
): Array<{ readonly section: string; readonly name: string; readonly range: string }> => {
  const hits: Array<{ section: string; name: string; range: string }> = []
  if (typeof json !== "object" || json === null) return hits
  for (const section of ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"]) {
    const deps = (json as Record<string, unknown>)[section]
    if (typeof deps !== "object" || deps === null) continue
    for (const name of packages) {
      const range = (deps as Record<string, unknown>)[name]
      if (typeof range === "string" && /^\s*(?:[~^=v]|>=?\s*)?2(?:\.|\s*$|\.x)/.test(range)) {
        hits.push({ section, name, range })
      }
    }
  }
  return hits
}
