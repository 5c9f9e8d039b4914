/**
 * Lints files: reads each one, checks it and turns findings into problems with positions,
 * applying the config file's settings and the suppressions.
 *
 * The fast path is what every file pays: one read, `JSON.parse` or js-yaml, kind detection and the
 * domain engine's single walk. Only a file with findings pays for positions (a second, position-
 * keeping parse), so 10,000 mostly clean files cost about what parsing them costs. Plain
 * synchronous code on purpose: this is the hot loop, and the command wraps it in one Effect.
 */
import { checkConfig } from "@svc/domain/Deprecation/Engine.ts"
import type { Fix, JsonPath } from "@svc/domain/Deprecation/Fixes.ts"
import { detectKind } from "@svc/domain/Deprecation/Kind.ts"
import {
  classify,
  type ConfigKind,
  type Finding,
  makeFinding,
  type Status,
  utcMidnight
} from "@svc/domain/Deprecation/Rule.ts"
import { getRule, isRuleId } from "@svc/domain/Deprecation/Schedule.ts"
import { constructFromEvents, parseEvents, YAMLException } from "js-yaml"
import * as nodePath from "node:path"
import { type FileSettings, type LintConfig, settingsFor } from "../commands/LintConfig.ts"
import * as JsonTree from "../documents/JsonTree.ts"
import { lineStarts, position } from "../documents/LineIndex.ts"
import { type Integrations, scan, webClientDependencies } from "../documents/SourceScan.ts"
import * as YamlPositions from "../documents/YamlPositions.ts"
import type { InputFile, SkippedFile } from "../files/Discovery.ts"
import { type FileInput, readInput } from "../files/ReadInput.ts"
import { type Directive, directives, type FileSuppression, underPath } from "../suppressions/Suppressions.ts"
import { BATCH_CALL_KIND, checkBatchCall, isBatchCallBody } from "./BatchWindow.ts"
import { ofStatus, type Setting } from "./Level.ts"
import { getLinterRule, type LinterRuleId } from "./LinterRules.ts"
import { fingerprint, formatJsonPath, type Problem } from "./Problem.ts"
import { webClientPackages } from "./SourcePatterns.ts"

/** Everything a run needs besides the files. */
export interface LintContext {
  /** As-of instant, epoch milliseconds (00:00 UTC of the as-of date). */
  readonly at: number
  /** Upcoming findings whose date is after this instant are not reported. */
  readonly upcomingUntil: number
  readonly config: LintConfig
  readonly integrations: Integrations
  readonly maxFileSize: number
  readonly fileSuppressions: ReadonlyArray<FileSuppression>
  /** Honour inline `svc-lint-disable` comments (the timeline shows what breaks, suppressed or not). */
  readonly inlineSuppressions: boolean
}

/** What linting one file produced. */
export interface FileOutcome {
  readonly problems: Array<Problem>
  readonly suppressed: number
}

/** The totals of a run, with every visible problem (unsorted). */
export interface LintRun {
  readonly problems: Array<Problem>
  readonly suppressed: number
  readonly files: number
  /** Indexes of the suppressions-file entries that suppressed something. */
  readonly usedEntries: ReadonlySet<number>
}

const DAY = 86_400_000

interface Located {
  readonly ruleId: string
  readonly level: Problem["level"]
  readonly message: string
  readonly status?: Status
  readonly date?: string
  readonly replacement?: string
  readonly start: number
  readonly end: number
  readonly path?: JsonPath
  readonly kind?: ConfigKind
  readonly fix?: Fix
  readonly suggestion?: Fix
  readonly fingerprint: string
}

/** The level a finding is reported at, or undefined when it is not reported. */
const levelFor = (
  ctx: LintContext,
  settings: FileSettings,
  ruleId: string,
  status: Status,
  date: string
): Problem["level"] | undefined => {
  const setting = settings.setting(ruleId)
  if (setting === "off") return undefined
  if (status === "upcoming" && utcMidnight(date) > ctx.upcomingUntil) return undefined
  return setting ?? ofStatus(status)
}

const linterLevel = (settings: FileSettings, id: LinterRuleId): Problem["level"] | undefined => {
  const setting: Setting | undefined = settings.setting(id)
  return setting === "off" ? undefined : setting ?? getLinterRule(id)!.level
}

/** Whether a rule would report anything at the as-of date (for unused-suppression checks). */
const isActive = (ctx: LintContext, settings: FileSettings, ruleId: string): boolean => {
  if (settings.setting(ruleId) === "off") return false
  if (!isRuleId(ruleId)) return true
  const { date, status } = classify(getRule(ruleId), ctx.at)
  return status !== "upcoming" || utcMidnight(date) <= ctx.upcomingUntil
}

const linterProblem = (
  file: string,
  id: LinterRuleId,
  level: Problem["level"],
  message: string,
  line = 1,
  column = 1,
  endColumn = column + 1
): Problem => ({
  file,
  line,
  column,
  endLine: line,
  endColumn,
  ruleId: id,
  level,
  message,
  fingerprint: fingerprint(id, file, message)
})

/** The problem for a file the walk or the reader skipped. */
export const skippedProblem = (
  config: LintConfig,
  cwd: string,
  skipped: SkippedFile
): Problem | undefined => {
  const settings = settingsFor(config, nodePath.resolve(cwd, skipped.relative))
  const level = linterLevel(settings, "file-skipped")
  return level === undefined
    ? undefined
    : linterProblem(skipped.relative, "file-skipped", level, `not checked: ${skipped.reason}`)
}

/** A finding of one parsed document, before positions. */
type DocumentFinding = Omit<Located, "start" | "end"> & { readonly path: JsonPath }

/** The findings of one parsed document (`docIndex`: its place in a multi-document file). */
type CheckDocument = (
  ctx: LintContext,
  settings: FileSettings,
  file: InputFile,
  doc: unknown,
  docIndex: number
) => Array<DocumentFinding>

const toFindingsLocated = (
  ctx: LintContext,
  settings: FileSettings,
  file: InputFile,
  findings: ReadonlyArray<Finding>,
  docIndex: number,
  kind: ConfigKind | undefined
): Array<DocumentFinding> => {
  const out: Array<DocumentFinding> = []
  for (const f of findings) {
    const level = levelFor(ctx, settings, f.ruleId, f.severity, f.date)
    if (level === undefined) continue
    const jsonPath = formatJsonPath(f.path)
    out.push({
      ruleId: f.ruleId,
      level,
      message: f.message,
      status: f.severity,
      date: f.date,
      replacement: f.replacement,
      path: f.path,
      ...(kind === undefined ? {} : { kind }),
      ...(f.fix === undefined ? {} : f.fix.safe ? { fix: f.fix } : { suggestion: f.fix }),
      fingerprint: fingerprint(f.ruleId, file.relative, docIndex, jsonPath)
    })
  }
  return out
}

/** Findings of a create-batch-call body (decision 0627: legal hours at the called parties). */
const checkBatchDocument: CheckDocument = (ctx, settings, file, doc, docIndex) => {
  const out: Array<DocumentFinding> = []
  for (const f of checkBatchCall(doc, ctx.at)) {
    const level = linterLevel(settings, f.ruleId)
    if (level === undefined) continue
    out.push({
      ruleId: f.ruleId,
      level,
      message: f.message,
      ...(f.date === undefined ? {} : { date: f.date }),
      path: f.path,
      fingerprint: fingerprint(f.ruleId, file.relative, docIndex, f.key)
    })
  }
  return out
}

/** Findings of one parsed config document (before positions). */
const checkDocument: CheckDocument = (ctx, settings, file, doc, docIndex) => {
  const forced = settings.kind
  if (forced === BATCH_CALL_KIND || (forced === undefined && isBatchCallBody(doc))) {
    return checkBatchDocument(ctx, settings, file, doc, docIndex)
  }
  const kind = forced ?? detectKind(doc)
  if (kind !== undefined) {
    const findings = checkConfig(kind, doc, ctx.at)
    return findings.length === 0 ? [] : toFindingsLocated(ctx, settings, file, findings, docIndex, kind)
  }
  if (docIndex === 0 && nodePath.basename(file.path) === "package.json") {
    const rule = getRule("web-client-v2")
    const findings = webClientDependencies(doc, webClientPackages).map((dep) =>
      makeFinding(rule, ctx.at, [dep.section, dep.name], `the browser client library ${dep.name}@${dep.range}`)
    )
    // a package.json is no config kind: its findings carry none
    return toFindingsLocated(ctx, settings, file, findings, 0, undefined)
  }
  return []
}

const lintJson = (ctx: LintContext, settings: FileSettings, file: InputFile, text: string): Array<Located> => {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  let doc: unknown
  try {
    doc = JSON.parse(body)
  } catch {
    let offset = body.length
    let message = "not valid JSON"
    try {
      JsonTree.parse(text)
    } catch (error) {
      if (error instanceof JsonTree.JsonSyntaxError) {
        offset = error.offset
        message = `not valid JSON: ${error.message}`
      }
    }
    const level = linterLevel(settings, "parse-error")
    if (level === undefined) return []
    return [{
      ruleId: "parse-error",
      level,
      message,
      start: offset,
      end: Math.min(offset + 1, text.length),
      fingerprint: fingerprint("parse-error", file.relative)
    }]
  }
  const found = checkDocument(ctx, settings, file, doc, 0)
  if (found.length === 0) return []
  const tree = JsonTree.parse(text)
  return found.map((f) => ({ ...f, ...JsonTree.rangeOf(tree, f.path) }))
}

const lintYaml = (ctx: LintContext, settings: FileSettings, file: InputFile, text: string): Array<Located> => {
  // js-yaml's loadAll, in its two steps: the event stream is kept, so a file with findings locates
  // them in it instead of parsing the text again (YamlPositions.locate).
  let events: ReturnType<typeof parseEvents>
  let docs: Array<unknown>
  try {
    events = parseEvents(text, {})
    docs = constructFromEvents(events, { source: text })
  } catch (error) {
    const level = linterLevel(settings, "parse-error")
    if (level === undefined) return []
    const mark = error instanceof YAMLException ? error.mark : undefined
    const offset = mark?.position ?? 0
    const reason = error instanceof YAMLException ? error.reason : String(error)
    return [{
      ruleId: "parse-error",
      level,
      message: `not valid YAML: ${reason}`,
      start: offset,
      end: Math.min(offset + 1, text.length),
      fingerprint: fingerprint("parse-error", file.relative)
    }]
  }
  const out: Array<Located> = []
  for (let d = 0; d < docs.length; d++) {
    const found = checkDocument(ctx, settings, file, docs[d], d)
    if (found.length === 0) continue
    const ranges = YamlPositions.locate(text, d, found.map((f) => f.path), events)
    for (const f of found) {
      const range = ranges.get(YamlPositions.pathKey(f.path)) ?? { start: 0, end: 0 }
      out.push({ ...f, start: range.start, end: range.end })
    }
  }
  return out
}

const lintSource = (ctx: LintContext, settings: FileSettings, file: InputFile, text: string): Array<Located> => {
  const hits = scan(text, ctx.at, ctx.integrations)
  if (hits.length === 0) return []
  const out: Array<Located> = []
  const seen = new Map<string, number>()
  for (const hit of hits) {
    const level = levelFor(ctx, settings, hit.ruleId, hit.status, hit.date)
    if (level === undefined) continue
    // Fingerprint on the line's text and its occurrence count, not its number: moving code keeps it.
    const lineStart = text.lastIndexOf("\n", hit.start - 1) + 1
    const lineEnd = text.indexOf("\n", hit.start)
    const lineText = text.slice(lineStart, lineEnd === -1 ? text.length : lineEnd).trim()
    const key = `${hit.ruleId}\u0000${lineText}`
    const occurrence = (seen.get(key) ?? 0) + 1
    seen.set(key, occurrence)
    out.push({
      ruleId: hit.ruleId,
      level,
      message: hit.message,
      status: hit.status,
      date: hit.date,
      replacement: hit.replacement,
      start: hit.start,
      end: hit.end,
      fingerprint: fingerprint(hit.ruleId, file.relative, lineText, occurrence)
    })
  }
  return out
}

const applyDirectives = (
  ctx: LintContext,
  settings: FileSettings,
  file: InputFile,
  found: ReadonlyArray<Problem>,
  list: ReadonlyArray<Directive>
): { problems: Array<Problem>; suppressed: number } => {
  const used = new Set<string>()
  const problems: Array<Problem> = []
  let suppressed = 0
  for (const problem of found) {
    const directive = list.find((d) => d.target === problem.line && d.rules.includes(problem.ruleId))
    if (directive === undefined) {
      problems.push(problem)
      continue
    }
    suppressed++
    used.add(`${directive.line}\u0000${problem.ruleId}`)
  }
  for (const d of list) {
    const meta = (id: LinterRuleId, message: string) => {
      const level = linterLevel(settings, id)
      if (level !== undefined) {
        problems.push({
          ...linterProblem(file.relative, id, level, message, d.line, d.column, d.endColumn),
          fingerprint: fingerprint(id, file.relative, d.line, message)
        })
      }
    }
    if (d.rules.length === 0) meta("suppression-invalid", "suppression names no rule")
    if (d.reason === undefined) {
      meta("suppression-without-reason", `suppression of ${d.rules.join(", ")} has no reason (add "-- why")`)
    }
    for (const rule of d.rules) {
      if (!isRuleId(rule) && getLinterRule(rule) === undefined) {
        meta("suppression-invalid", `suppression names an unknown rule "${rule}"`)
      } else if (isRuleId(rule) && classify(getRule(rule), ctx.at).status === "removed") {
        const date = classify(getRule(rule), ctx.at).date
        meta("suppression-expired", `suppression of ${rule}, removed on ${date}: fix the code instead`)
      } else if (!used.has(`${d.line}\u0000${rule}`) && isActive(ctx, settings, rule)) {
        meta("suppression-unused", `suppression of ${rule} on line ${d.target} matches no problem`)
      }
    }
  }
  return { problems, suppressed }
}

/** Lints one file. */
export const lintFile = (
  ctx: LintContext,
  file: InputFile,
  usedEntries: Set<number>
): FileOutcome => lintInput(ctx, file, readInput(file, ctx.maxFileSize), usedEntries)

/** Lints one file already read by `readInput`. */
export const lintInput = (
  ctx: LintContext,
  file: InputFile,
  input: FileInput,
  usedEntries: Set<number>
): FileOutcome => {
  const settings = settingsFor(ctx.config, file.path)
  if ("skipped" in input) {
    const level = linterLevel(settings, "file-skipped")
    return {
      problems: level === undefined
        ? []
        : [linterProblem(file.relative, "file-skipped", level, `not checked: ${input.skipped}`)],
      suppressed: 0
    }
  }
  const text = input.buffer.toString("utf8")
  const located = file.format === "json"
    ? lintJson(ctx, settings, file, text)
    : file.format === "yaml"
    ? lintYaml(ctx, settings, file, text)
    : lintSource(ctx, settings, file, text)
  const list = file.format === "json" || !ctx.inlineSuppressions ? [] : directives(text)
  if (located.length === 0 && list.length === 0) return { problems: [], suppressed: 0 }

  const starts = lineStarts(text)
  let problems: Array<Problem> = located.map((l) => {
    const from = position(starts, l.start)
    const to = position(starts, Math.max(l.end, l.start + 1))
    const jsonPath = l.path === undefined ? undefined : formatJsonPath(l.path)
    return {
      file: file.relative,
      line: from.line,
      column: from.column,
      endLine: to.line,
      endColumn: to.column,
      ruleId: l.ruleId,
      level: l.level,
      message: l.message,
      ...(l.status === undefined ? {} : { status: l.status }),
      ...(l.date === undefined ? {} : { date: l.date }),
      ...(l.replacement === undefined ? {} : { replacement: l.replacement }),
      ...(jsonPath === undefined ? {} : { jsonPath, path: l.path! }),
      ...(l.kind === undefined ? {} : { kind: l.kind }),
      ...(l.fix === undefined ? {} : { fix: l.fix }),
      ...(l.suggestion === undefined ? {} : { suggestion: l.suggestion }),
      fingerprint: l.fingerprint
    }
  })
  let suppressed = 0
  if (list.length > 0) {
    const result = applyDirectives(ctx, settings, file, problems, list)
    problems = result.problems
    suppressed += result.suppressed
  }
  if (ctx.fileSuppressions.length > 0) {
    const kept: Array<Problem> = []
    for (const problem of problems) {
      const entry = ctx.fileSuppressions.find((e) =>
        e.rule === problem.ruleId && underPath(problem.jsonPath, e.path) && e.matches(file.path)
      )
      if (entry === undefined) kept.push(problem)
      else {
        suppressed++
        usedEntries.add(entry.index)
      }
    }
    problems = kept
  }
  return { problems, suppressed }
}

/** Lints files in order. */
export const lintAll = (ctx: LintContext, files: ReadonlyArray<InputFile>): LintRun => {
  const problems: Array<Problem> = []
  const usedEntries = new Set<number>()
  let suppressed = 0
  for (const file of files) {
    const outcome = lintFile(ctx, file, usedEntries)
    for (const p of outcome.problems) problems.push(p)
    suppressed += outcome.suppressed
  }
  return { problems, suppressed, files: files.length, usedEntries }
}

/** The upcoming-window end for an as-of instant and a number of days. */
export const upcomingUntil = (at: number, days: number): number => at + days * DAY
