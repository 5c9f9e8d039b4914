/**
 * The default format, for people: problems grouped by file with `line:column`, level, message and
 * rule id, then a summary line. Colour only when asked (a TTY, unless NO_COLOR is set).
 */
import { counts, plural, type Reporter } from "./Report.ts"

const paint = (on: boolean) => (code: string, text: string) => on ? `\u001b[${code}m${text}\u001b[0m` : text

export const stylish: Reporter = (report, { color }) => {
  const c = paint(color)
  const lines: Array<string> = []
  let file: string | undefined
  let fixable = 0
  const rows = report.problems
  const width = Math.max(0, ...rows.map((p) => `${p.line}:${p.column}`.length))
  for (const p of rows) {
    if (p.file !== file) {
      if (file !== undefined) lines.push("")
      file = p.file
      lines.push(c("4", p.file))
    }
    if (p.fix !== undefined) fixable++
    const level = p.level === "error"
      ? c("31", "error  ")
      : p.level === "warning"
      ? c("33", "warning")
      : c("36", "note   ")
    lines.push(`  ${`${p.line}:${p.column}`.padEnd(width)}  ${level}  ${p.message}  ${c("2", p.ruleId)}`)
  }
  if (rows.length > 0) lines.push("")
  const { errors, notes, warnings } = counts(rows)
  const extra = [
    report.suppressed > 0 ? `${report.suppressed} suppressed` : "",
    report.baselined > 0 ? `${report.baselined} in baseline` : "",
    report.fixed > 0 ? `${report.fixed} fixed` : ""
  ].filter((s) => s.length > 0)
  const summary = `${plural(rows.length, "problem")} (${plural(errors, "error")}, ${plural(warnings, "warning")}, ` +
    `${plural(notes, "note")}) in ${plural(report.files, "file")} checked as of ${report.asOf}` +
    (extra.length > 0 ? `; ${extra.join(", ")}` : "")
  lines.push(rows.length === 0 ? c("32", summary) : errors > 0 ? c("31;1", summary) : c("33;1", summary))
  if (fixable > 0) lines.push(`  ${plural(fixable, "problem")} fixable with --fix`)
  return `${lines.join("\n")}\n`
}
