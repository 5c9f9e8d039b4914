/**
 * Suppressions: inline comments in source files and YAML configs, and a suppressions file for
 * configs (JSON has no comments).
 *
 * Inline, in any comment syntax (`//`, `#`, `--`, `/* *\/`):
 *
 *     svc-lint-disable-next-line list-agents-v1, get-agent-versions -- migrating in TICKET-12
 *     svc-lint-disable-line list-agents-v1 -- reason
 *
 * The suppressions file (`--suppressions FILE` or `suppressions:` in the config file):
 *
 *     suppressions:
 *       - rule: phone-number-single-agent-fields
 *         files: ["phone-numbers/legacy-*.yaml"]   # relative to the suppressions file's folder
 *         path: $.inbound_agent_id                 # optional: only this JSON path and below
 *         reason: carrier cut-over on 2026-05-01, TICKET-9
 *
 * A suppression without a reason still applies but is reported (`suppression-without-reason`);
 * one for a rule whose removal date has passed is reported (`suppression-expired`); one that
 * matched nothing while its rule is active is reported (`suppression-unused`); one naming an
 * unknown rule is reported (`suppression-invalid`).
 */
import { isRuleId } from "@svc/domain/Deprecation/Schedule.ts"
import * as nodePath from "node:path"
import { compileAll } from "../files/Glob.ts"
import { isLinterRuleId } from "../rules/LinterRules.ts"

/** An inline directive. */
export interface Directive {
  /** 1-based line of the comment. */
  readonly line: number
  readonly column: number
  readonly endColumn: number
  /** The line whose problems it suppresses. */
  readonly target: number
  readonly rules: ReadonlyArray<string>
  readonly reason: string | undefined
}

const DIRECTIVE = /svc-lint-disable-(next-line|line)\b([^\n]*)/g

/** The directives in a text, in order. Cheap when there are none. */
export const directives = (text: string): Array<Directive> => {
  if (!text.includes("svc-lint-disable-")) return []
  const out: Array<Directive> = []
  let line = 1
  let lineStart = 0
  let scanned = 0
  for (const match of text.matchAll(DIRECTIVE)) {
    for (let i = text.indexOf("\n", scanned); i !== -1 && i < match.index; i = text.indexOf("\n", i + 1)) {
      line++
      lineStart = i + 1
    }
    scanned = match.index
    // Block-comment closers and trailing markup are not part of the reason.
    const rest = match[2]!.replace(/\s*(?:\*\/|-->|\*\)|%>)\s*$/, "")
    const dashes = rest.indexOf(" -- ")
    const list = dashes === -1 ? rest.replace(/\s+--\s*$/, "") : rest.slice(0, dashes)
    const reason = dashes === -1 ? undefined : rest.slice(dashes + 4).trim()
    out.push({
      line,
      column: match.index - lineStart + 1,
      endColumn: match.index - lineStart + 1 + match[0].length,
      target: match[1] === "next-line" ? line + 1 : line,
      rules: list.split(/[\s,]+/).filter((r) => r.length > 0),
      reason: reason === undefined || reason.length === 0 ? undefined : reason
    })
  }
  return out
}

/** One entry of a suppressions file, compiled. */
export interface FileSuppression {
  readonly index: number
  readonly rule: string
  readonly matches: (absolutePath: string) => boolean
  /** A JSON path prefix such as `$.nodes[2]`; every path when undefined. */
  readonly path: string | undefined
  readonly reason: string | undefined
}

/** A problem found while reading a suppressions file. */
export interface EntryProblem {
  readonly index: number
  readonly ruleId: "suppression-invalid"
  readonly message: string
}

/** Compiles the entries of a parsed suppressions file whose folder is `dir`. */
export const compileFile = (
  dir: string,
  document: unknown
): { entries: Array<FileSuppression>; problems: Array<EntryProblem> } => {
  const entries: Array<FileSuppression> = []
  const problems: Array<EntryProblem> = []
  const list = typeof document === "object" && document !== null && !Array.isArray(document)
    ? (document as Record<string, unknown>).suppressions
    : undefined
  if (!Array.isArray(list)) {
    problems.push({ index: -1, ruleId: "suppression-invalid", message: "expected a top-level `suppressions:` list" })
    return { entries, problems }
  }
  list.forEach((entry: unknown, index) => {
    if (typeof entry !== "object" || entry === null) {
      problems.push({ index, ruleId: "suppression-invalid", message: "expected a map with rule, files and reason" })
      return
    }
    const e = entry as Record<string, unknown>
    const files = typeof e.files === "string" ? [e.files] : e.files
    if (typeof e.rule !== "string" || !Array.isArray(files) || !files.every((f) => typeof f === "string")) {
      problems.push({ index, ruleId: "suppression-invalid", message: "an entry needs `rule` and `files`" })
      return
    }
    if (!isRuleId(e.rule) && !isLinterRuleId(e.rule)) {
      problems.push({ index, ruleId: "suppression-invalid", message: `unknown rule "${e.rule}"` })
      return
    }
    const matches = compileAll(files)
    entries.push({
      index,
      rule: e.rule,
      matches: (absolutePath) => matches(nodePath.relative(dir, absolutePath).split(nodePath.sep).join("/")),
      path: typeof e.path === "string" ? e.path : undefined,
      reason: typeof e.reason === "string" && e.reason.trim().length > 0 ? e.reason.trim() : undefined
    })
  })
  return { entries, problems }
}

/** Whether a JSON path is `prefix` or below it. */
export const underPath = (jsonPath: string | undefined, prefix: string | undefined): boolean =>
  prefix === undefined ||
  (jsonPath !== undefined &&
    (jsonPath === prefix || jsonPath.startsWith(`${prefix}.`) || jsonPath.startsWith(`${prefix}[`)))
