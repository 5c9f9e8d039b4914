/**
 * What every reporter renders: the visible problems of a run (sorted, suppressed and baselined
 * ones removed) and the run's totals. Nothing in it depends on the clock or the machine, so the
 * same inputs always render the same bytes.
 */
import { atLeast, type Level } from "../rules/Level.ts"
import type { Problem } from "../rules/Problem.ts"

export interface Report {
  readonly version: string
  /** The as-of date, `YYYY-MM-DD`. */
  readonly asOf: string
  readonly failOn: Level
  readonly problems: ReadonlyArray<Problem>
  /** Files checked. */
  readonly files: number
  readonly suppressed: number
  readonly baselined: number
  /** Problems fixed by `--fix` in this run. */
  readonly fixed: number
}

/** A renderer of a report. */
export type Reporter = (report: Report, options: { readonly color: boolean }) => string

/** Problems per level. */
export const counts = (problems: ReadonlyArray<Problem>): { errors: number; warnings: number; notes: number } => {
  let errors = 0
  let warnings = 0
  let notes = 0
  for (const p of problems) {
    if (p.level === "error") errors++
    else if (p.level === "warning") warnings++
    else notes++
  }
  return { errors, warnings, notes }
}

/** How many problems are at or above the `--fail-on` level. */
export const failing = (report: Report): number => report.problems.filter((p) => atLeast(p.level, report.failOn)).length

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`
