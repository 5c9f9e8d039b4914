/**
 * `--format junit`: one test suite per file with problems, one test case per problem. Problems at
 * or above `--fail-on` are failures; the others are skipped test cases, so a CI test view fails
 * exactly when the exit code does.
 */
import { atLeast } from "../rules/Level.ts"
import type { Problem } from "../rules/Problem.ts"
import type { Reporter } from "./Report.ts"

// XML 1.0 has no place for control characters other than tab, newline and carriage return.
const allowed = (c: string) => c >= " " || c === "\t" || c === "\n" || c === "\r"

const xml = (s: string) =>
  [...s].filter(allowed).join("").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")

export const junit: Reporter = (report) => {
  const byFile = new Map<string, Array<Problem>>()
  for (const p of report.problems) {
    const list = byFile.get(p.file)
    if (list === undefined) byFile.set(p.file, [p])
    else list.push(p)
  }
  const total = report.problems.length
  const failures = report.problems.filter((p) => atLeast(p.level, report.failOn)).length
  const lines = [
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
    `<testsuites name="svc-lint" tests="${total}" failures="${failures}" errors="0">`
  ]
  for (const [file, problems] of byFile) {
    const failed = problems.filter((p) => atLeast(p.level, report.failOn)).length
    lines.push(
      `  <testsuite name="${xml(file)}" tests="${problems.length}" failures="${failed}" errors="0" ` +
        `skipped="${problems.length - failed}">`
    )
    for (const p of problems) {
      const name = xml(`${p.ruleId} at ${p.line}:${p.column}`)
      lines.push(`    <testcase classname="${xml(file)}" name="${name}">`)
      const detail = xml(
        `${p.file}:${p.line}:${p.column} ${p.level} ${p.message}` +
          (p.jsonPath === undefined ? "" : ` (${p.jsonPath})`)
      )
      if (atLeast(p.level, report.failOn)) {
        lines.push(`      <failure type="${p.level}" message="${xml(p.message)}">${detail}</failure>`)
      } else {
        lines.push(`      <skipped message="${xml(`${p.level}: ${p.message}`)}"/>`)
      }
      lines.push("    </testcase>")
    }
    lines.push("  </testsuite>")
  }
  lines.push("</testsuites>")
  return `${lines.join("\n")}\n`
}
