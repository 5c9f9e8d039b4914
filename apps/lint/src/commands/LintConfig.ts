/**
 * The config file `svc-lint.config.json` / `.yaml` / `.yml`: found upward from the working
 * directory (stopping at the repository root), or named with `--config`.
 *
 * ```yaml
 * upcomingDays: 45             # default for --upcoming-days
 * failOn: warning              # default for --fail-on
 * ignores: ["fixtures/**"]     # like --ignore, relative to this file's folder
 * sources:
 *   extensions: [".kt"]        # more source extensions to scan
 *   legacySipHosts: ["*.sip.livekit.cloud"]
 *   legacyMcpHosts: ["mcp.old.example.com"]
 * rules:                       # error | warning | note | off, for every file
 *   model-retirements: off
 * overrides:                   # later entries win over earlier ones and over `rules`
 *   - files: ["legacy/**"]
 *     kind: agent              # force the config kind instead of detecting it (or batch-call)
 *     rules: { agent-language-multi: warning }
 * suppressions: svc-lint.suppressions.yaml
 * baseline: svc-lint.baseline.json
 * ```
 *
 * Every key is checked: an unknown key, rule id or kind is a config error (exit code 2), so a typo
 * never silently disables a check.
 */
import type { ConfigKind } from "@svc/domain/Deprecation/Rule.ts"
import { configKinds } from "@svc/domain/Deprecation/Rule.ts"
import { isRuleId } from "@svc/domain/Deprecation/Schedule.ts"
import * as fs from "node:fs"
import * as nodePath from "node:path"
import { compileAll } from "../files/Glob.ts"
import { BATCH_CALL_KIND } from "../rules/BatchWindow.ts"
import { isLevel, isSetting, type Level, type Setting } from "../rules/Level.ts"
import { isLinterRuleId } from "../rules/LinterRules.ts"

/**
 * What a document is read as: a config kind of the deprecation engine, or a create-batch-call body (checked by the
 * legal-hours rules, BatchWindow.ts).
 */
export type DocumentKind = ConfigKind | typeof BATCH_CALL_KIND

const documentKinds: ReadonlyArray<DocumentKind> = [...configKinds, BATCH_CALL_KIND]

/** A config file that cannot be used. */
export class ConfigError extends Error {}

/** One `overrides` entry, compiled. */
export interface Override {
  /** The globs as written, relative to the config file's folder (the cache key hashes them). */
  readonly files: ReadonlyArray<string>
  readonly matches: (relativeToConfig: string) => boolean
  readonly kind: DocumentKind | undefined
  readonly rules: ReadonlyMap<string, Setting>
}

/** The loaded config (all fields optional in the file). */
export interface LintConfig {
  /** Absolute path of the file, when there is one. */
  readonly file: string | undefined
  /** Folder that relative paths and patterns in the file are relative to. */
  readonly dir: string
  readonly upcomingDays: number | undefined
  readonly failOn: Level | undefined
  readonly ignores: ReadonlyArray<string>
  readonly extensions: ReadonlyArray<string>
  readonly legacySipHosts: ReadonlyArray<string> | undefined
  readonly legacyMcpHosts: ReadonlyArray<string>
  readonly rules: ReadonlyMap<string, Setting>
  readonly overrides: ReadonlyArray<Override>
  readonly suppressions: string | undefined
  readonly baseline: string | undefined
}

export const CONFIG_NAMES = ["svc-lint.config.json", "svc-lint.config.yaml", "svc-lint.config.yml"]

/** The config used when there is no file. */
export const empty = (cwd: string): LintConfig => ({
  file: undefined,
  dir: cwd,
  upcomingDays: undefined,
  failOn: undefined,
  ignores: [],
  extensions: [],
  legacySipHosts: undefined,
  legacyMcpHosts: [],
  rules: new Map(),
  overrides: [],
  suppressions: undefined,
  baseline: undefined
})

/** The config file for `cwd`: the nearest one upward, not above the repository root. */
export const find = (cwd: string): string | undefined => {
  let dir = cwd
  for (;;) {
    for (const name of CONFIG_NAMES) {
      const candidate = nodePath.join(dir, name)
      if (fs.existsSync(candidate)) return candidate
    }
    if (fs.existsSync(nodePath.join(dir, ".git"))) return undefined
    const parent = nodePath.dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}

/** Reads a JSON or YAML file (by extension) as a plain value; throws `ConfigError`. */
export const readDocument = async (file: string): Promise<unknown> => {
  let text: string
  try {
    text = fs.readFileSync(file, "utf8")
  } catch (error) {
    throw new ConfigError(`${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? String(error)})`)
  }
  try {
    if (file.endsWith(".json")) return JSON.parse(text)
    const { load } = await import("js-yaml")
    return load(text)
  } catch (error) {
    throw new ConfigError(`${file}: not valid ${file.endsWith(".json") ? "JSON" : "YAML"}: ${String(error)}`)
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const stringList = (where: string, u: unknown): Array<string> => {
  if (!Array.isArray(u) || !u.every((s) => typeof s === "string")) {
    throw new ConfigError(`${where}: expected a list of strings`)
  }
  return u
}

const ruleSettings = (where: string, u: unknown): Map<string, Setting> => {
  if (!isRecord(u)) throw new ConfigError(`${where}: expected a map of rule id to error | warning | note | off`)
  const map = new Map<string, Setting>()
  for (const [id, setting] of Object.entries(u)) {
    if (!isRuleId(id) && !isLinterRuleId(id)) {
      throw new ConfigError(`${where}.${id}: unknown rule (svc-lint rules lists them)`)
    }
    if (!isSetting(setting)) throw new ConfigError(`${where}.${id}: expected error | warning | note | off`)
    map.set(id, setting)
  }
  return map
}

const TOP_KEYS = new Set([
  "$schema",
  "upcomingDays",
  "failOn",
  "ignores",
  "sources",
  "rules",
  "overrides",
  "suppressions",
  "baseline"
])

/** Validates a parsed config document. */
export const decode = (file: string, u: unknown): LintConfig => {
  const name = nodePath.basename(file)
  if (!isRecord(u)) throw new ConfigError(`${name}: expected a map at the top level`)
  for (const key of Object.keys(u)) {
    if (!TOP_KEYS.has(key)) throw new ConfigError(`${name}: unknown key "${key}"`)
  }
  const dir = nodePath.dirname(file)
  let upcomingDays: number | undefined
  if (u.upcomingDays !== undefined) {
    if (typeof u.upcomingDays !== "number" || !Number.isInteger(u.upcomingDays) || u.upcomingDays < 0) {
      throw new ConfigError(`${name}: upcomingDays: expected a whole number of days >= 0`)
    }
    upcomingDays = u.upcomingDays
  }
  if (u.failOn !== undefined && !isLevel(u.failOn)) {
    throw new ConfigError(`${name}: failOn: expected error | warning | note`)
  }
  const sources = u.sources ?? {}
  if (!isRecord(sources)) throw new ConfigError(`${name}: sources: expected a map`)
  for (const key of Object.keys(sources)) {
    if (!["extensions", "legacySipHosts", "legacyMcpHosts"].includes(key)) {
      throw new ConfigError(`${name}: sources: unknown key "${key}"`)
    }
  }
  const extensions = sources.extensions === undefined
    ? []
    : stringList(`${name}: sources.extensions`, sources.extensions)
  const overrides = u.overrides === undefined ? [] : u.overrides
  if (!Array.isArray(overrides)) throw new ConfigError(`${name}: overrides: expected a list`)
  const relativePath = (key: string, value: unknown) => {
    if (value === undefined) return undefined
    if (typeof value !== "string") throw new ConfigError(`${name}: ${key}: expected a path`)
    return nodePath.resolve(dir, value)
  }
  return {
    file,
    dir,
    upcomingDays,
    failOn: u.failOn as Level | undefined,
    ignores: u.ignores === undefined ? [] : stringList(`${name}: ignores`, u.ignores),
    extensions: extensions.map((e) => (e.startsWith(".") ? e : `.${e}`).toLowerCase()),
    legacySipHosts: sources.legacySipHosts === undefined
      ? undefined
      : stringList(`${name}: sources.legacySipHosts`, sources.legacySipHosts),
    legacyMcpHosts: sources.legacyMcpHosts === undefined
      ? []
      : stringList(`${name}: sources.legacyMcpHosts`, sources.legacyMcpHosts),
    rules: u.rules === undefined ? new Map() : ruleSettings(`${name}: rules`, u.rules),
    overrides: overrides.map((entry, i): Override => {
      const where = `${name}: overrides[${i}]`
      if (!isRecord(entry)) throw new ConfigError(`${where}: expected a map`)
      for (const key of Object.keys(entry)) {
        if (!["files", "kind", "rules"].includes(key)) throw new ConfigError(`${where}: unknown key "${key}"`)
      }
      const files = stringList(`${where}.files`, entry.files)
      if (entry.kind !== undefined && !documentKinds.includes(entry.kind as DocumentKind)) {
        throw new ConfigError(`${where}.kind: expected one of ${documentKinds.join(", ")}`)
      }
      return {
        files,
        matches: compileAll(files),
        kind: entry.kind as DocumentKind | undefined,
        rules: entry.rules === undefined ? new Map() : ruleSettings(`${where}.rules`, entry.rules)
      }
    }),
    suppressions: relativePath("suppressions", u.suppressions),
    baseline: relativePath("baseline", u.baseline)
  }
}

/** Loads the config named by `--config`, or the one found upward from `cwd`, or none. */
export const load = async (cwd: string, explicit: string | undefined): Promise<LintConfig> => {
  const file = explicit === undefined ? find(cwd) : nodePath.resolve(cwd, explicit)
  if (file === undefined) return empty(cwd)
  if (explicit !== undefined && !fs.existsSync(file)) throw new ConfigError(`${explicit}: no such config file`)
  return decode(file, await readDocument(file))
}

/** The settings and kind that apply to one file. */
export interface FileSettings {
  readonly setting: (ruleId: string) => Setting | undefined
  readonly kind: DocumentKind | undefined
}

const NO_OVERRIDES: FileSettings = { setting: () => undefined, kind: undefined }

/** Resolves the rules and kind override for the file at absolute `path`. */
export const settingsFor = (config: LintConfig, path: string): FileSettings => {
  if (config.overrides.length === 0) {
    return config.rules.size === 0 ? NO_OVERRIDES : { setting: (id) => config.rules.get(id), kind: undefined }
  }
  const relative = nodePath.relative(config.dir, path).split(nodePath.sep).join("/")
  const matching = config.overrides.filter((o) => o.matches(relative))
  if (matching.length === 0) return { setting: (id) => config.rules.get(id), kind: undefined }
  let kind: DocumentKind | undefined
  for (const o of matching) kind = o.kind ?? kind
  return {
    kind,
    setting: (id) => {
      let value = config.rules.get(id)
      for (const o of matching) value = o.rules.get(id) ?? value
      return value
    }
  }
}
