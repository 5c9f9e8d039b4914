/**
 * `--baseline FILE`: adopt the linter on a legacy repository. `--update-baseline` writes every
 * current problem to the file; later runs hide the problems the file lists, so only new ones are
 * reported and fail.
 *
 * Problems are matched on their fingerprint (rule, file and JSON path for configs, rule, file and
 * line text for sources), as a multiset, so moving code does not resurface a problem and a second
 * copy of the same line is new. A baselined problem whose level has risen since (a deprecation
 * whose removal date has now passed) is reported again: the baseline accepted a warning, not an
 * error.
 */
import { compare as compareLevels, isLevel, type Level } from "../rules/Level.ts"
import type { Problem } from "../rules/Problem.ts"

/** One accepted problem. */
export interface BaselineEntry {
  readonly file: string
  readonly ruleId: string
  readonly level: Level
  readonly fingerprint: string
  readonly message: string
}

/** The file's content, ready to write (sorted, so the file diffs well). */
export const render = (asOf: string, problems: ReadonlyArray<Problem>): string => {
  const entries: Array<BaselineEntry> = problems.map((p) => ({
    file: p.file,
    ruleId: p.ruleId,
    level: p.level,
    fingerprint: p.fingerprint,
    message: p.message
  }))
  return `${JSON.stringify({ version: 1, asOf, problems: entries }, null, 2)}\n`
}

/** Reads a baseline document; throws a readable `Error` when it is not one. */
export const decode = (document: unknown): Array<BaselineEntry> => {
  const problems = typeof document === "object" && document !== null
    ? (document as Record<string, unknown>).problems
    : undefined
  if (!Array.isArray(problems)) throw new Error("not a svc-lint baseline (expected a `problems` list)")
  return problems.map((entry, i) => {
    const e = entry as Record<string, unknown>
    if (typeof e.fingerprint !== "string" || typeof e.ruleId !== "string" || !isLevel(e.level)) {
      throw new Error(`problems[${i}]: expected fingerprint, ruleId and level`)
    }
    return {
      file: String(e.file ?? ""),
      ruleId: e.ruleId,
      level: e.level,
      fingerprint: e.fingerprint,
      message: String(e.message ?? "")
    }
  })
}

/** Splits problems into new ones and baselined ones; also counts entries that matched nothing. */
export const apply = (
  entries: ReadonlyArray<BaselineEntry>,
  problems: ReadonlyArray<Problem>
): { readonly fresh: Array<Problem>; readonly baselined: number; readonly stale: number } => {
  const pool = new Map<string, Array<Level>>()
  for (const e of entries) {
    const list = pool.get(e.fingerprint)
    if (list === undefined) pool.set(e.fingerprint, [e.level])
    else list.push(e.level)
  }
  const fresh: Array<Problem> = []
  let baselined = 0
  for (const p of problems) {
    const list = pool.get(p.fingerprint)
    const level = list?.pop()
    // compareLevels(a, b) > 0 when b is more serious than a.
    if (level === undefined || compareLevels(level, p.level) > 0) fresh.push(p)
    else baselined++
  }
  let stale = 0
  for (const list of pool.values()) stale += list.length
  return { fresh, baselined, stale }
}
