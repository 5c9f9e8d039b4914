/**
 * `--format github`: GitHub Actions workflow commands. GitHub shows at most 10 error and 10
 * warning annotations per step (50 per job) and drops the rest silently, so the most serious
 * problems are annotated first (10 per level), every other problem is printed as a plain log line,
 * and `stepSummary` renders the whole list as a Markdown table for `$GITHUB_STEP_SUMMARY`.
 */
import { compare as compareLevel } from "../rules/Level.ts"
import type { Problem } from "../rules/Problem.ts"
import { counts, plural, type Report, type Reporter } from "./Report.ts"

/** Annotations shown per level and step. */
export const ANNOTATIONS_PER_LEVEL = 10

const escapeData = (s: string) => s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A")
const escapeProperty = (s: string) => escapeData(s).replace(/:/g, "%3A").replace(/,/g, "%2C")

const command = { error: "error", warning: "warning", note: "notice" } as const

const annotation = (p: Problem) => {
  const props = [`file=${escapeProperty(p.file)}`, `line=${p.line}`, `col=${p.column}`]
  // A column range is only valid on a single line.
  if (p.endLine === p.line) props.push(`endColumn=${p.endColumn}`)
  else props.push(`endLine=${p.endLine}`)
  props.push(`title=${escapeProperty(`svc-lint ${p.ruleId}`)}`)
  return `::${command[p.level]} ${props.join(",")}::${escapeData(p.message)}`
}

export const github: Reporter = (report) => {
  const ordered = [...report.problems].sort((a, b) => compareLevel(a.level, b.level))
  const shown = { error: 0, warning: 0, note: 0 }
  const lines: Array<string> = []
  const rest: Array<Problem> = []
  for (const p of ordered) {
    if (shown[p.level] < ANNOTATIONS_PER_LEVEL) {
      shown[p.level]++
      lines.push(annotation(p))
    } else rest.push(p)
  }
  if (rest.length > 0) {
    lines.push(`${plural(rest.length, "more problem")} (GitHub shows ${ANNOTATIONS_PER_LEVEL} annotations per level):`)
    for (const p of rest) lines.push(`${p.file}:${p.line}:${p.column}: ${p.level}: ${p.message} [${p.ruleId}]`)
  }
  const { errors, notes, warnings } = counts(report.problems)
  lines.push(
    `svc-lint: ${plural(report.problems.length, "problem")} (${plural(errors, "error")}, ${
      plural(warnings, "warning")
    }, ` +
      `${plural(notes, "note")}) in ${plural(report.files, "file")} as of ${report.asOf}`
  )
  return `${lines.join("\n")}\n`
}

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ")

// $GITHUB_STEP_SUMMARY holds 1 MiB per step; stay well below it.
const SUMMARY_LIMIT = 900 * 1024

/** The Markdown appended to `$GITHUB_STEP_SUMMARY`. */
export const stepSummary = (report: Report): string => {
  const { errors, notes, warnings } = counts(report.problems)
  const head = [
    `### svc-lint: ${plural(errors, "error")}, ${plural(warnings, "warning")}, ${plural(notes, "note")}`,
    "",
    `${plural(report.files, "file")} checked as of ${report.asOf}; fails on ${report.failOn}.`,
    ""
  ]
  if (report.problems.length === 0) return `${head.join("\n")}\n`
  head.push("| level | file | line | rule | message |", "| --- | --- | --- | --- | --- |")
  let text = head.join("\n")
  const ordered = [...report.problems].sort((a, b) => compareLevel(a.level, b.level))
  for (let i = 0; i < ordered.length; i++) {
    const p = ordered[i]!
    const row = `\n| ${p.level} | ${cell(p.file)} | ${p.line} | ${p.ruleId} | ${cell(p.message)} |`
    if (text.length + row.length > SUMMARY_LIMIT) {
      text += `\n\n${plural(ordered.length - i, "more problem")} not shown (summary size limit).`
      break
    }
    text += row
  }
  return `${text}\n\n`
}
