/**
 * `--format sarif`: SARIF 2.1.0 for GitHub code scanning. One run (GitHub rejects several runs of
 * one tool and category), every rule's metadata with its level at the as-of date, paths relative
 * to the working directory under `%SRCROOT%`, and our own stable `partialFingerprints` (the REST
 * upload does not compute them). Suppressed problems are left out rather than marked, since code
 * scanning shows marked ones anyway.
 */
import { utcMidnight } from "@svc/domain/Deprecation/Rule.ts"
import { catalog, markdown } from "../rules/Catalog.ts"
import type { Reporter } from "./Report.ts"

const uriOf = (file: string) => file.split("/").map(encodeURIComponent).join("/")

export const sarif: Reporter = (report) => {
  const at = utcMidnight(report.asOf)
  const index = new Map(catalog.map((doc, i) => [doc.id, i]))
  const rules = catalog.map((doc) => ({
    id: doc.id,
    name: doc.id.replace(/(^|-)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase()),
    shortDescription: { text: doc.title },
    fullDescription: { text: doc.summary },
    help: {
      text: doc.replacement === undefined ? doc.summary : `${doc.summary} Replacement: ${doc.replacement}`,
      markdown: markdown(doc)
    },
    defaultConfiguration: { level: doc.levelAt(at) },
    properties: {
      tags: doc.source === "schedule" ? ["deprecation", `schedule-row-${doc.schedule!.row}`] : ["svc-lint"],
      ...(doc.schedule === undefined
        ? {}
        : { milestones: doc.schedule.milestones.map((m) => ({ date: m.date, status: m.status })) })
    }
  }))
  const results = report.problems.map((p) => ({
    ruleId: p.ruleId,
    ruleIndex: index.get(p.ruleId) ?? -1,
    level: p.level,
    message: { text: p.message },
    locations: [{
      physicalLocation: {
        artifactLocation: { uri: uriOf(p.file), uriBaseId: "%SRCROOT%" },
        region: { startLine: p.line, startColumn: p.column, endLine: p.endLine, endColumn: p.endColumn }
      }
    }],
    partialFingerprints: { "svcLint/v1": p.fingerprint },
    properties: {
      ...(p.status === undefined ? {} : { status: p.status }),
      ...(p.date === undefined ? {} : { date: p.date }),
      ...(p.replacement === undefined ? {} : { replacement: p.replacement }),
      ...(p.jsonPath === undefined ? {} : { jsonPath: p.jsonPath }),
      fixable: p.fix !== undefined
    }
  }))
  const log = {
    $schema: "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
    version: "2.1.0",
    runs: [{
      tool: {
        driver: {
          name: "svc-lint",
          version: report.version,
          semanticVersion: report.version,
          rules
        }
      },
      columnKind: "utf16CodeUnits",
      results,
      properties: { asOf: report.asOf, failOn: report.failOn, files: report.files, suppressed: report.suppressed }
    }]
  }
  return `${JSON.stringify(log, null, 2)}\n`
}
