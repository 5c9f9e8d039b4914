/**
 * `--format json`: one document with the run's totals and every problem. Lines and columns are
 * 1-based, `endColumn` exclusive; `jsonPath`/`path` only for config documents; `suggestion` is an
 * edit for a person to review (the engine's unsafe fixes, e.g. the locale list for `multi`).
 */
import { counts, failing, type Reporter } from "./Report.ts"

export const json: Reporter = (report) => {
  const { errors, notes, warnings } = counts(report.problems)
  const document = {
    tool: { name: "svc-lint", version: report.version },
    asOf: report.asOf,
    failOn: report.failOn,
    summary: {
      files: report.files,
      problems: report.problems.length,
      errors,
      warnings,
      notes,
      failing: failing(report),
      suppressed: report.suppressed,
      baselined: report.baselined,
      fixed: report.fixed
    },
    problems: report.problems.map((p) => ({
      file: p.file,
      line: p.line,
      column: p.column,
      endLine: p.endLine,
      endColumn: p.endColumn,
      ruleId: p.ruleId,
      level: p.level,
      message: p.message,
      ...(p.status === undefined ? {} : { status: p.status }),
      ...(p.date === undefined ? {} : { date: p.date }),
      ...(p.replacement === undefined ? {} : { replacement: p.replacement }),
      ...(p.jsonPath === undefined ? {} : { jsonPath: p.jsonPath, path: p.path }),
      ...(p.kind === undefined ? {} : { kind: p.kind }),
      fixable: p.fix !== undefined,
      ...(p.suggestion === undefined
        ? {}
        : { suggestion: { description: p.suggestion.description, operations: p.suggestion.operations } }),
      fingerprint: p.fingerprint
    }))
  }
  return `${JSON.stringify(document, null, 2)}\n`
}
