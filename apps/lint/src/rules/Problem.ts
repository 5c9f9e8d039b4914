/**
 * One reported problem: a schedule finding placed in a file, or a problem of the linter's own
 * (parse errors, skipped files, bad suppressions). Every reporter reads this shape.
 */
import type { Fix, JsonPath } from "@svc/domain/Deprecation/Fixes.ts"
import type { ConfigKind, Status } from "@svc/domain/Deprecation/Rule.ts"
import { createHash } from "node:crypto"
import type { Level } from "./Level.ts"

/** A reported problem. Lines and columns are 1-based; `endColumn` is exclusive. */
export interface Problem {
  readonly file: string
  readonly line: number
  readonly column: number
  readonly endLine: number
  readonly endColumn: number
  readonly ruleId: string
  readonly level: Level
  readonly message: string
  /** The schedule status at the as-of date (schedule rules only). */
  readonly status?: Status
  /**
   * The milestone date that sets the status (the next one when upcoming); for `batch-window-seasonal`, the first
   * UTC date on which the batch's tasks cannot be dialled.
   */
  readonly date?: string
  readonly replacement?: string
  /** JSON path of the offending key or value (config documents only), e.g. `$.nodes[2].tools`. */
  readonly jsonPath?: string
  readonly path?: JsonPath
  readonly kind?: ConfigKind
  /** The safe fix `--fix` would apply. */
  readonly fix?: Fix
  /** An edit that needs a person's review (never applied by `--fix`). */
  readonly suggestion?: Fix
  /** Stable across runs and line moves: file, rule and JSON path (configs) or line text (sources). */
  readonly fingerprint: string
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** `$.nodes[2]["odd key"]` form of a path. */
export const formatJsonPath = (path: JsonPath): string => {
  let out = "$"
  for (const step of path) {
    if (typeof step === "number") out += `[${step}]`
    else if (IDENTIFIER.test(step)) out += `.${step}`
    else out += `[${JSON.stringify(step)}]`
  }
  return out
}

/** A stable 16-hex-digit fingerprint of some parts. */
export const fingerprint = (...parts: ReadonlyArray<string | number>): string =>
  createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 16)

/** The sort order of every report: file, line, column, rule, message. */
export const compare = (a: Problem, b: Problem): number =>
  a.file < b.file
    ? -1
    : a.file > b.file
    ? 1
    : a.line - b.line || a.column - b.column || (a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0) ||
      (a.message < b.message ? -1 : a.message > b.message ? 1 : 0)
