/**
 * The shape of one deprecation rule and how a rule is classified at an instant.
 *
 * A rule is one dated entry of the spec's deprecation schedule (spec: Versioning, "Deprecation
 * schedule"): a stable id, the row it comes from, what it affects (config kinds and/or HTTP
 * endpoints), the replacement and one or more milestones. A milestone is a date on which the rule
 * becomes `deprecated` or `removed`; the status at an instant is the status of the last milestone
 * that has started, or `upcoming` before the first one. Every date takes effect at 00:00 UTC of
 * that day (design: decisions table, "deprecation dates").
 *
 * @category models
 */
import { DateTime } from "effect"
import type { Fix, JsonPath } from "./Fixes.ts"

/**
 * The stable ids of the rules. They appear in linter output, inline disable comments and config
 * files, so an id never changes once published.
 *
 * @category models
 */
export type RuleId =
  | "cold-transfer-mode"
  | "phone-number-single-agent-fields"
  | "model-retirements"
  | "conversation-node-tools"
  | "legacy-list-endpoints"
  | "legacy-analysis-prompts"
  | "publish-agent-endpoints"
  | "legacy-mcp-server"
  | "list-agents-v1"
  | "agent-language-multi"
  | "update-call-live-fields"
  | "get-agent-versions"
  | "web-client-v2"
  | "create-web-call-v2"
  | "legacy-sip-endpoint"
  | "calendar-cal-tools"

/**
 * The kinds of configuration document the engine checks.
 *
 * @category models
 */
export type ConfigKind = "agent" | "llm" | "conversation-flow" | "flow-component" | "phone-number" | "tool"

/**
 * Every config kind, in a stable order.
 *
 * @category models
 */
export const configKinds: ReadonlyArray<ConfigKind> = [
  "agent",
  "llm",
  "conversation-flow",
  "flow-component",
  "phone-number",
  "tool"
]

/**
 * What a rule is about: a whole HTTP endpoint, a field of a config, one value of a field, or an
 * integration outside the JSON API (client library, SIP server, hosted tool-protocol server).
 *
 * @category models
 */
export type RuleKind = "endpoint" | "field" | "value" | "integration"

/**
 * Where a rule stands at an instant. Also the severity of a finding.
 *
 * @category models
 */
export type Status = "upcoming" | "deprecated" | "removed"

/**
 * A date (`YYYY-MM-DD`, UTC) on which a rule moves to `status`.
 *
 * @category models
 */
export interface Milestone {
  readonly date: string
  /** 00:00 UTC of `date`, epoch milliseconds. */
  readonly at: number
  readonly status: "deprecated" | "removed"
  /** What happens on that date, in the spec's words. */
  readonly note: string
}

/**
 * An HTTP method and path template named by a rule. `method` `*` matches every method (used where
 * the spec names a path but not its method). Path parameters are written `{name}`.
 *
 * @category models
 */
export interface EndpointPattern {
  readonly method: string
  readonly path: string
  /** The endpoint to use instead, e.g. `POST /v2/list-agents with a channel filter`. */
  readonly replacement: string
  /**
   * Present when the endpoint itself stays and only part of its behaviour is deprecated: says
   * which part (update-call keeps working for ended calls).
   */
  readonly partial?: string
}

/**
 * One entry of the deprecation schedule.
 *
 * @category models
 */
export interface Rule {
  readonly id: RuleId
  /** 1-based row of the spec's schedule table (rows 1..12). */
  readonly row: number
  readonly kind: RuleKind
  /** Short title for reports. */
  readonly title: string
  /** The documentation summary of the change. */
  readonly summary: string
  readonly replacement: string
  /** Sorted by date; never empty. */
  readonly milestones: ReadonlyArray<Milestone>
  /** Config kinds whose documents the rule inspects. */
  readonly configs: ReadonlyArray<ConfigKind>
  readonly endpoints: ReadonlyArray<EndpointPattern>
  /** Whether the engine proposes a mechanical fix for some findings of the rule. */
  readonly fixable: boolean
}

/**
 * One problem found in a config document.
 *
 * @category models
 */
export interface Finding {
  readonly ruleId: RuleId
  /** JSON path of the offending key or value, from the document root. */
  readonly path: JsonPath
  readonly severity: Status
  /** The milestone date that sets the severity; the next milestone's date when `upcoming`. */
  readonly date: string
  readonly message: string
  readonly replacement: string
  /** A proposed edit, only where the migration is mechanical. */
  readonly fix?: Fix
}

/**
 * An instant to classify against: epoch milliseconds, a `Date` or an Effect `DateTime`.
 *
 * @category models
 */
export type AsOf = number | Date | DateTime.DateTime

/**
 * Epoch milliseconds of an `AsOf`.
 *
 * @category combinators
 */
export const toEpochMillis = (asOf: AsOf): number =>
  typeof asOf === "number" ? asOf : asOf instanceof Date ? asOf.getTime() : DateTime.toEpochMillis(asOf)

/**
 * 00:00 UTC of a `YYYY-MM-DD` date, epoch milliseconds (design: "a date takes effect at 00:00 UTC").
 *
 * @category constructors
 */
export const utcMidnight = (date: string): number => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date)
  if (match === null) throw new Error(`not a YYYY-MM-DD date: ${date}`)
  return Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))
}

/**
 * A milestone from its date.
 *
 * @category constructors
 */
export const milestone = (date: string, status: Milestone["status"], note: string): Milestone => ({
  date,
  at: utcMidnight(date),
  status,
  note
})

/**
 * The milestone in effect at `asOf` (the last one that has started), if any.
 *
 * @category combinators
 */
export const milestoneAt = (rule: Rule, asOf: AsOf): Milestone | undefined => {
  const at = toEpochMillis(asOf)
  let current: Milestone | undefined
  for (const m of rule.milestones) {
    if (m.at <= at) current = m
    else break
  }
  return current
}

/**
 * The first milestone that has not started at `asOf`, if any.
 *
 * @category combinators
 */
export const nextMilestone = (rule: Rule, asOf: AsOf): Milestone | undefined => {
  const at = toEpochMillis(asOf)
  return rule.milestones.find((m) => m.at > at)
}

/**
 * The status of a rule at `asOf`: `upcoming` before its first date, then the status of the last
 * milestone that has started.
 *
 * @category combinators
 */
export const statusAt = (rule: Rule, asOf: AsOf): Status => milestoneAt(rule, asOf)?.status ?? "upcoming"

/**
 * The first date on which the rule is deprecated, if it ever is.
 *
 * @category combinators
 */
export const deprecatedOn = (rule: Rule): string | undefined =>
  rule.milestones.find((m) => m.status === "deprecated")?.date

/**
 * The date on which the rule's subject is removed, if it ever is.
 *
 * @category combinators
 */
export const removedOn = (rule: Rule): string | undefined => rule.milestones.find((m) => m.status === "removed")?.date

/**
 * The status and the date that goes with it, at epoch milliseconds `at`: the milestone in effect,
 * else the next one (the rule is `upcoming` until then).
 *
 * @category combinators
 */
export const classify = (rule: Rule, at: number): { readonly status: Status; readonly date: string } => {
  let current: Milestone | undefined
  for (const m of rule.milestones) {
    if (m.at <= at) current = m
    else break
  }
  if (current !== undefined) return { status: current.status, date: current.date }
  // Milestones are never empty (checked by the schedule tests).
  return { status: "upcoming", date: rule.milestones[0]?.date ?? "" }
}

/**
 * How a rule's status reads in a message: "was removed on 2026-07-31", "is deprecated since
 * 2026-03-31 and will be removed on 2026-10-31", "will be removed on 2026-06-15".
 *
 * @category combinators
 */
export const describeStatus = (rule: Rule, at: number): string => {
  const { date, status } = classify(rule, at)
  const removal = removedOn(rule)
  switch (status) {
    case "removed":
      return `was removed on ${date}`
    case "deprecated":
      return removal !== undefined && removal > date
        ? `is deprecated since ${date} and will be removed on ${removal}`
        : `is deprecated since ${date}`
    case "upcoming": {
      const first = rule.milestones[0]
      return first?.status === "removed" ? `will be removed on ${date}` : `will be deprecated on ${date}`
    }
  }
}

/**
 * Builds a finding of `rule` at epoch milliseconds `at`: severity and date from the rule's
 * milestones, message = subject + status phrase + replacement. `replacement` narrows the rule's
 * replacement for this finding (e.g. the one weighted list that replaces one field).
 *
 * @category constructors
 */
export const makeFinding = (
  rule: Rule,
  at: number,
  path: JsonPath,
  subject: string,
  fix?: Fix,
  replacement: string = rule.replacement
): Finding => {
  const { date, status } = classify(rule, at)
  const message = `${subject} ${describeStatus(rule, at)}; use ${replacement}`
  return fix === undefined
    ? { ruleId: rule.id, path, severity: status, date, message, replacement }
    : { ruleId: rule.id, path, severity: status, date, message, replacement, fix }
}
