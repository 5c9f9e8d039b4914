/**
 * Loading the suppressions file and reporting its entries' own problems (no reason, an expired
 * rule, unused, malformed) at the entry's position in that file.
 */
import { classify, utcMidnight } from "@svc/domain/Deprecation/Rule.ts"
import { getRule, isRuleId } from "@svc/domain/Deprecation/Schedule.ts"
import * as fs from "node:fs"
import * as nodePath from "node:path"
import type { LintConfig } from "../commands/LintConfig.ts"
import * as JsonTree from "../documents/JsonTree.ts"
import { lineStarts, position } from "../documents/LineIndex.ts"
import * as YamlPositions from "../documents/YamlPositions.ts"
import { relativeTo } from "../files/Discovery.ts"
import type { Level } from "../rules/Level.ts"
import { getLinterRule, type LinterRuleId } from "../rules/LinterRules.ts"
import { fingerprint, type Problem } from "../rules/Problem.ts"
import { compileFile, type FileSuppression } from "./Suppressions.ts"

/** A loaded suppressions file. */
export interface SuppressionsFile {
  readonly path: string
  readonly entries: ReadonlyArray<FileSuppression>
  /** Malformed entries, already positioned. */
  readonly problems: ReadonlyArray<Problem>
  /** Where each entry is, for later problems. */
  readonly positionOf: (index: number) => { line: number; column: number }
}

/** Reads and compiles a suppressions file; throws `Error` when it cannot be read or parsed. */
export const load = async (cwd: string, path: string, config: LintConfig): Promise<SuppressionsFile> => {
  const text = fs.readFileSync(path, "utf8")
  const isJson = path.endsWith(".json")
  let document: unknown
  if (isJson) document = JSON.parse(text)
  else {
    const { load: loadYaml } = await import("js-yaml")
    document = loadYaml(text)
  }
  const { entries, problems } = compileFile(nodePath.dirname(path), document)
  const starts = lineStarts(text)
  const count = Array.isArray((document as { suppressions?: unknown } | null)?.suppressions)
    ? ((document as { suppressions: Array<unknown> }).suppressions.length)
    : 0
  const paths = Array.from({ length: count }, (_, i) => ["suppressions", i] as const)
  const offsets = new Map<number, number>()
  if (isJson) {
    const tree = JsonTree.parse(text)
    paths.forEach((p, i) => offsets.set(i, JsonTree.rangeOf(tree, p).start))
  } else if (count > 0) {
    const ranges = YamlPositions.locate(text, 0, paths)
    paths.forEach((p, i) => offsets.set(i, ranges.get(YamlPositions.pathKey(p))?.start ?? 0))
  }
  const positionOf = (index: number) => position(starts, offsets.get(index) ?? 0)
  const file = relativeTo(cwd, path)
  const levelOf = (id: LinterRuleId): Level | undefined => {
    const setting = config.rules.get(id)
    return setting === "off" ? undefined : setting ?? getLinterRule(id)!.level
  }
  return {
    path,
    entries,
    positionOf,
    problems: problems.flatMap((p) => {
      const level = levelOf(p.ruleId)
      return level === undefined ? [] : [entryProblem(file, p.index, positionOf(p.index), p.ruleId, level, p.message)]
    })
  }
}

const entryProblem = (
  file: string,
  index: number,
  at: { line: number; column: number },
  ruleId: LinterRuleId,
  level: Level,
  message: string
): Problem => ({
  file,
  line: at.line,
  column: at.column,
  endLine: at.line,
  endColumn: at.column + 1,
  ruleId,
  level,
  message: index >= 0 ? `suppressions[${index}]: ${message}` : message,
  fingerprint: fingerprint(ruleId, file, index, message)
})

/** The problems of the entries themselves, once the run knows which entries were used. */
export const entryProblems = (
  cwd: string,
  file: SuppressionsFile,
  config: LintConfig,
  used: ReadonlySet<number>,
  at: number,
  upcomingUntil: number
): Array<Problem> => {
  const relative = relativeTo(cwd, file.path)
  const out: Array<Problem> = []
  const push = (entry: FileSuppression, id: LinterRuleId, message: string) => {
    const setting = config.rules.get(id)
    if (setting === "off") return
    out.push(
      entryProblem(
        relative,
        entry.index,
        file.positionOf(entry.index),
        id,
        setting ?? getLinterRule(id)!.level,
        message
      )
    )
  }
  for (const entry of file.entries) {
    if (entry.reason === undefined) {
      push(entry, "suppression-without-reason", `suppression of ${entry.rule} has no reason`)
    }
    if (isRuleId(entry.rule)) {
      const { date, status } = classify(getRule(entry.rule), at)
      if (status === "removed") {
        push(entry, "suppression-expired", `suppression of ${entry.rule}, removed on ${date}: fix the configs instead`)
        continue
      }
      const active = config.rules.get(entry.rule) !== "off" &&
        (status !== "upcoming" || utcMidnight(date) <= upcomingUntil)
      if (active && !used.has(entry.index)) {
        push(entry, "suppression-unused", `suppression of ${entry.rule} matches no problem`)
      }
    } else if (!used.has(entry.index)) {
      push(entry, "suppression-unused", `suppression of ${entry.rule} matches no problem`)
    }
  }
  return out
}
