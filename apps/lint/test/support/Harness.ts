/**
 * Test helpers: temporary folders with file trees, the linter run in-process (fast, for rule and
 * suppression tests) and the real bin run as a child process (for exit codes and formats).
 */
import { utcMidnight } from "@svc/domain/Deprecation/Rule.ts"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import * as LintConfig from "../../src/commands/LintConfig.ts"
import { defaultSourceExtensions, discover } from "../../src/files/Discovery.ts"
import { lintAll, type LintContext, upcomingUntil } from "../../src/rules/Linter.ts"
import { compare, type Problem } from "../../src/rules/Problem.ts"
import { defaultLegacySipHosts } from "../../src/rules/SourcePatterns.ts"
import type { FileSuppression } from "../../src/suppressions/Suppressions.ts"

const created: Array<string> = []
afterAll(() => {
  for (const dir of created) fs.rmSync(dir, { recursive: true, force: true })
})

/** A fresh folder under the system temp folder, removed after the test file. */
export const tempDir = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-lint-test-"))
  created.push(dir)
  return dir
}

/** Writes files (path -> content) under `dir`. */
export const writeTree = (dir: string, files: Record<string, string | Buffer>): string => {
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, content)
  }
  return dir
}

/** A temp folder holding `files`. */
export const project = (files: Record<string, string | Buffer>): string => writeTree(tempDir(), files)

/** The context an in-process run uses. */
export const context = (
  asOf: string,
  options: {
    readonly days?: number
    readonly config?: LintConfig.LintConfig
    readonly fileSuppressions?: ReadonlyArray<FileSuppression>
    readonly cwd?: string
    /** `--max-file-size` in bytes; default 20 MiB, the CLI's default */
    readonly maxFileSize?: number
  } = {}
): LintContext => {
  const at = utcMidnight(asOf)
  const config = options.config ?? LintConfig.empty(options.cwd ?? "/")
  return {
    at,
    upcomingUntil: upcomingUntil(at, options.days ?? 30),
    config,
    integrations: {
      legacySipHosts: config.legacySipHosts ?? defaultLegacySipHosts,
      legacyMcpHosts: config.legacyMcpHosts
    },
    maxFileSize: options.maxFileSize ?? 20 * 1024 * 1024,
    fileSuppressions: options.fileSuppressions ?? [],
    inlineSuppressions: true
  }
}

/** Lints `inputs` under `cwd` in-process and returns the sorted problems and totals. */
export const lintIn = (
  cwd: string,
  asOf: string,
  options: {
    readonly inputs?: ReadonlyArray<string>
    readonly days?: number
    readonly config?: LintConfig.LintConfig
    readonly maxFileSize?: number
    /** Runs between the walk and the reads (a file changed while a run is under way). */
    readonly afterDiscovery?: () => void
  } = {}
) => {
  const found = discover(options.inputs ?? ["."], {
    cwd,
    ignored: () => false,
    sourceExtensions: new Set(defaultSourceExtensions)
  })
  options.afterDiscovery?.()
  const run = lintAll(context(asOf, { ...options, cwd }), found.files)
  return { ...run, problems: [...run.problems].sort(compare), found }
}

/** `file:line:column rule level` per problem, for compact assertions. */
export const summary = (problems: ReadonlyArray<Problem>): Array<string> =>
  problems.map((p) => `${p.file}:${p.line}:${p.column} ${p.ruleId} ${p.level}`)

const bin = path.resolve(import.meta.dirname, "..", "..", "bin", "svc-lint.mjs")

/** Runs the real bin in `cwd`. */
export const runBin = (cwd: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const result = spawnSync(process.execPath, [bin, ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", GITHUB_STEP_SUMMARY: "", ...env },
    maxBuffer: 256 * 1024 * 1024
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}
