/**
 * `--fix` and `--fix-dry-run`: applies the safe fixes of the reported problems, file by file.
 *
 * The domain decides what a fix is (`applyFixes` over the parsed document); this module only
 * writes it into the text without disturbing the rest (JsonEdit / YamlEdit). Every edited text is
 * parsed again and must equal the domain's result exactly, so the linter can never write a change
 * beyond the schedule's stated replacement: when a text edit disagrees, JSON falls back to
 * re-serializing in the file's indentation and key order, and YAML is left alone and reported.
 */
import { applyFixes, type Fix } from "@svc/domain/Deprecation/Fixes.ts"
import { loadAll } from "js-yaml"
import * as fs from "node:fs"
import * as nodePath from "node:path"
import type { Problem } from "../rules/Problem.ts"
import { unifiedDiff } from "./Diff.ts"
import * as JsonEdit from "./JsonEdit.ts"
import * as YamlEdit from "./YamlEdit.ts"

/** What a fix pass did. */
export interface FixResult {
  /** Files changed (or that would change), relative paths. */
  readonly files: Array<string>
  /** Unified diff of every change. */
  readonly diff: string
  /** Files that could not be fixed, with the reason. */
  readonly failures: Array<string>
}

/** The fixed text of one file, or why there is none. */
export const fixText = (
  text: string,
  format: "json" | "yaml",
  fixes: ReadonlyArray<Fix>
): { text: string } | { error: string } => {
  const operations = fixes.flatMap((f) => f.operations)
  if (format === "json") {
    const bom = text.charCodeAt(0) === 0xfeff
    const expected = applyFixes(JSON.parse(bom ? text.slice(1) : text), fixes)
    let edited: string | undefined
    try {
      edited = JsonEdit.applyOperations(text, operations)
    } catch {
      edited = undefined
    }
    if (edited !== undefined) {
      try {
        if (YamlEdit.sameJson(JSON.parse(bom ? edited.slice(1) : edited), expected)) return { text: edited }
      } catch {
        // fall through to the re-serialization
      }
    }
    return { text: (bom ? "\ufeff" : "") + JsonEdit.reserialize(text, expected) }
  }
  const docs = loadAll(text)
  if (docs.length !== 1) return { error: "multi-document YAML is not fixed automatically" }
  const expected = applyFixes(docs[0], fixes)
  let edited: string | undefined
  try {
    edited = YamlEdit.applyOperations(text, operations)
  } catch {
    edited = undefined
  }
  if (edited === undefined) return { error: "the fix cannot be written without reformatting the file" }
  let actual: Array<unknown>
  try {
    actual = loadAll(edited)
  } catch {
    return { error: "the fix cannot be written without reformatting the file" }
  }
  if (actual.length !== 1 || !YamlEdit.sameJson(actual[0], expected)) {
    return { error: "the fix cannot be written without reformatting the file" }
  }
  return { text: edited }
}

/** Applies (or, with `write: false`, only diffs) the fixes of `problems`. */
export const applyAll = (
  cwd: string,
  problems: ReadonlyArray<Problem>,
  options: { readonly write: boolean }
): FixResult => {
  const byFile = new Map<string, Array<Fix>>()
  for (const p of problems) {
    if (p.fix === undefined) continue
    const list = byFile.get(p.file)
    if (list === undefined) byFile.set(p.file, [p.fix])
    else if (!list.includes(p.fix)) list.push(p.fix)
  }
  const files: Array<string> = []
  const failures: Array<string> = []
  let diff = ""
  for (const [file, fixes] of [...byFile].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const path = nodePath.resolve(cwd, file)
    const format = /\.json$/i.test(file) ? "json" : /\.ya?ml$/i.test(file) ? "yaml" : undefined
    if (format === undefined) continue
    let text: string
    try {
      text = fs.readFileSync(path, "utf8")
    } catch (error) {
      failures.push(`${file}: ${String(error)}`)
      continue
    }
    const result = fixText(text, format, fixes)
    if ("error" in result) {
      failures.push(`${file}: ${result.error}`)
      continue
    }
    if (result.text === text) continue
    files.push(file)
    diff += unifiedDiff(file, text, result.text)
    if (options.write) fs.writeFileSync(path, result.text)
  }
  return { files, diff, failures }
}
