/**
 * What a cache's run key is made of besides the run's own settings (decision 0630): the identity of the rule set
 * (the linter's version, dependencies and code, every rule's data) and the resolved config as plain data. A change
 * to either gives another run key, which discards every entry of the cache (LintCache.ts).
 */
import { defaultPolicy } from "@svc/domain/compliance/CallingPolicy.ts"
import { rules } from "@svc/domain/Deprecation/Schedule.ts"
import { hash } from "node:crypto"
import type { LintConfig } from "../commands/LintConfig.ts"
import { DEPENDENCIES, VERSION } from "../commands/Version.ts"
import { relativeTo } from "../files/Discovery.ts"
import { HORIZON_DAYS, MAX_TASK_PROBLEMS } from "../rules/BatchWindow.ts"
import { MIN_BREAK_DAYS } from "../rules/LegalTimeline.ts"
import { linterRules } from "../rules/LinterRules.ts"
import * as SourcePatterns from "../rules/SourcePatterns.ts"
import { codeIdentity } from "./CodeIdentity.ts"

const sha256 = (data: string): string => hash("sha256", data, "base64")

let rulesIdentity: string | undefined

/** The rule set: the linter's version, dependencies and code, and every rule's data. */
export const rulesHash = (): string =>
  rulesIdentity ??= sha256(JSON.stringify({
    version: VERSION,
    dependencies: DEPENDENCIES,
    code: codeIdentity(),
    schedule: rules,
    linterRules,
    sourcePatterns: SourcePatterns,
    // The batch legal-hours rules read the calling policy (its rows are data) over a fixed horizon. The zone
    // tables are code under packages/domain/src, which codeIdentity() already hashes.
    batchWindow: { policy: defaultPolicy, horizonDays: HORIZON_DAYS, minBreakDays: MIN_BREAK_DAYS, MAX_TASK_PROBLEMS }
  }))

const relativeOrUndefined = (cwd: string, path: string | undefined) => path === undefined ? null : relativeTo(cwd, path)

/**
 * The resolved config as plain data. Paths are relative to the working directory, so a cache
 * restored into another checkout of the same repository still applies.
 */
export const configIdentity = (cwd: string, config: LintConfig): unknown => ({
  file: relativeOrUndefined(cwd, config.file),
  dir: relativeTo(cwd, config.dir),
  upcomingDays: config.upcomingDays ?? null,
  failOn: config.failOn ?? null,
  ignores: config.ignores,
  extensions: config.extensions,
  legacySipHosts: config.legacySipHosts ?? null,
  legacyMcpHosts: config.legacyMcpHosts,
  rules: [...config.rules],
  overrides: config.overrides.map((o) => ({ files: o.files, kind: o.kind ?? null, rules: [...o.rules] })),
  suppressions: relativeOrUndefined(cwd, config.suppressions),
  baseline: relativeOrUndefined(cwd, config.baseline)
})
