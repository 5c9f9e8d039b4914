/**
 * Documentation of every rule the linter reports: the schedule's rules (from the domain) and the
 * linter's own. `svc-lint explain`, `svc-lint rules` and the SARIF rule metadata read it.
 */
import { kindsChecked } from "@svc/domain/Deprecation/Engine.ts"
import { multiLanguageFix } from "@svc/domain/Deprecation/Language.ts"
import { classify, type Rule } from "@svc/domain/Deprecation/Rule.ts"
import { rules as scheduleRules } from "@svc/domain/Deprecation/Schedule.ts"
import { type Level, ofStatus } from "./Level.ts"
import { linterRules } from "./LinterRules.ts"
import { fieldPatterns } from "./SourcePatterns.ts"

/** One rule's documentation. */
export interface RuleDoc {
  readonly id: string
  readonly title: string
  readonly summary: string
  readonly replacement: string | undefined
  /** `schedule` rules come from the spec's table; `linter` rules are the linter's own. */
  readonly source: "schedule" | "linter"
  readonly schedule: Rule | undefined
  /** The level at an instant (schedule rules move with the date). */
  readonly levelAt: (at: number) => Level
  /** Where the rule looks. */
  readonly checks: ReadonlyArray<string>
}

const where = (rule: Rule): Array<string> => {
  const out: Array<string> = []
  const kinds = kindsChecked(rule.id)
  if (kinds.length > 0) out.push(`config documents: ${kinds.join(", ")}`)
  for (const e of rule.endpoints) out.push(`source code: ${e.method === "*" ? "any method" : e.method} ${e.path}`)
  const fields = fieldPatterns.filter((f) => f.rule === rule.id).map((f) => f.field)
  if (fields.length > 0) out.push(`source code: request fields ${fields.join(", ")}`)
  if (rule.id === "calendar-cal-tools") out.push("source code: the tool type strings")
  if (rule.id === "agent-language-multi") out.push("source code: language \"multi\"")
  if (rule.id === "legacy-sip-endpoint") {
    out.push("source code: sip: URIs on a legacy SIP host (sources.legacySipHosts)")
  }
  if (rule.id === "legacy-mcp-server") out.push("source code: URLs on a legacy MCP host (sources.legacyMcpHosts)")
  if (rule.id === "web-client-v2") out.push("package.json: a major-2 dependency on the browser client library")
  return out
}

export const catalog: ReadonlyArray<RuleDoc> = [
  ...scheduleRules.map((rule): RuleDoc => ({
    id: rule.id,
    title: rule.title,
    summary: rule.summary,
    replacement: rule.replacement,
    source: "schedule",
    schedule: rule,
    levelAt: (at) => ofStatus(classify(rule, at).status),
    checks: where(rule)
  })),
  ...linterRules.map((rule): RuleDoc => ({
    id: rule.id,
    title: rule.title,
    summary: rule.summary,
    replacement: undefined,
    source: "linter",
    schedule: undefined,
    levelAt: () => rule.level,
    checks: rule.checks ?? []
  }))
]

/**
 * How a rule is fixed. The engine marks a rule `fixable` when it proposes any edit, but the scalar
 * `multi` replacement is a suggestion (`safe: false`) that `--fix` never applies.
 */
export const fixText = (rule: Rule): string =>
  !rule.fixable
    ? "by hand"
    : rule.id === "agent-language-multi" && !multiLanguageFix(["language"]).safe
    ? "by hand; the JSON output carries a suggested locale list to review (never applied by --fix)"
    : "svc-lint --fix migrates the mechanical cases"

const byId: ReadonlyMap<string, RuleDoc> = new Map(catalog.map((doc) => [doc.id, doc]))

export const getDoc = (id: string): RuleDoc | undefined => byId.get(id)

/** The rule's page in Markdown (SARIF `help.markdown`, `svc-lint explain --markdown`). */
export const markdown = (doc: RuleDoc): string => {
  const lines = [`## ${doc.id}`, "", `**${doc.title}**`, "", doc.summary]
  if (doc.schedule !== undefined) {
    lines.push("", "| date (00:00 UTC) | becomes | what happens |", "| --- | --- | --- |")
    for (const m of doc.schedule.milestones) lines.push(`| ${m.date} | ${m.status} | ${m.note} |`)
    lines.push("", `Replacement: ${doc.replacement}`, "", `Spec: deprecation schedule, row ${doc.schedule.row}.`)
    lines.push(`Fix: ${fixText(doc.schedule)}.`)
  }
  if (doc.checks.length > 0) lines.push("", "Checked in:", ...doc.checks.map((c) => `- ${c}`))
  return `${lines.join("\n")}\n`
}
