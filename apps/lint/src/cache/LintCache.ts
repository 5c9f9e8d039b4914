/**
 * The incremental mode (`--cache`, decision 0630): each file's problems are kept
 * under its content hash, so a re-run parses only the files whose bytes changed.
 *
 * - Key. One run key hashes everything a file's problems depend on besides its bytes and path: the
 *   cache format, the linter's version, dependencies and code (CodeIdentity.ts), the rules' data,
 *   the resolved config, the as-of instant and upcoming window, `--max-file-size`, the integrations
 *   and the suppressions file. A different run key discards every entry. Per file, the entry is
 *   keyed by its path (relative to the working directory, as reports show it), its format and the
 *   SHA-256 of its bytes.
 * - Stat fast path. Hashing needs the bytes, and reading 10,000 files costs more than the whole
 *   budget of a warm run, so an entry also records size, mtime, ctime and inode, as git's index
 *   does: when all four are unchanged the file is not read. ctime cannot be set by a program, so
 *   any write changes it; a file whose mtime or ctime was within `RACY_MS` of the run's start when
 *   it was read could have changed again within the same timestamp tick, so its stat is not
 *   recorded and the next run checks its bytes ("racily clean" in git's terms).
 * - File. A header line (format, version, run key, SHA-256 of the body), one JSON line of entries,
 *   then journal lines: a run that changed few entries appends them (`<checksum> [[path, entry or
 *   null], ...]`, the checksum chained to the body's) instead of rewriting ~1 MB for 10,000 files;
 *   past a share of the body the file is rewritten whole, to a temporary file renamed over the old
 *   one. A journal line that does not check out (torn by a crash, or appended to a file another run
 *   replaced meanwhile) is skipped: any subset of entries is sound, each being checked against the
 *   file's stat or bytes before use. A missing, unreadable,
 *   corrupt (checksum) or foreign (format, version, key) cache is ignored and rewritten, never an
 *   error. Entries of deleted files are dropped; entries of files this run did not visit are kept
 *   while the file exists.
 * - Outcomes that cannot survive JSON (a fix value with `NaN`, `-0` or `undefined` from YAML) are not
 *   stored, so a cached run always reports the same bytes as an uncached one. Fix objects shared by
 *   several problems stay shared (the fixer applies each fix object once).
 */
import { hash } from "node:crypto"
import * as fs from "node:fs"
import * as nodePath from "node:path"
import { type FileFormat, type InputFile, relativeTo } from "../files/Discovery.ts"
import type { FileWatch } from "../files/FileWatch.ts"
import { readInput } from "../files/ReadInput.ts"
import { type FileOutcome, type LintContext, lintInput, type LintRun } from "../rules/Linter.ts"
import type { Problem } from "../rules/Problem.ts"
import type { Memory } from "./LintCacheMemory.ts"
import { configIdentity, rulesHash } from "./RunIdentity.ts"

/** The name of the cache file, in the working directory or in a `--cache-location` folder. */
export const DEFAULT_FILE = ".svc-lint-cache"

const FORMAT = "svc-lint-cache"
/** Bumped whenever the entry layout or what an outcome holds changes. */
const VERSION_OF_FORMAT = 2

/** A journal longer than this share of the entries (or than `JOURNAL_MIN`) is folded into a rewrite. */
const JOURNAL_SHARE = 0.125
const JOURNAL_MIN = 1_024

/** How recent a file's mtime/ctime may be at read time before its stat is not trusted. */
export const RACY_MS = 3_000

/** What a file produced, as stored: 0 when nothing (the common case). */
type StoredOutcome =
  | 0
  | {
    /** Problems, with `fix` / `suggestion` replaced by an index into `f`. */
    readonly p: ReadonlyArray<unknown>
    /** Distinct fix objects of the file. */
    readonly f: ReadonlyArray<unknown>
    readonly s: number
    readonly u: ReadonlyArray<number>
  }

/** `[format, size, mtimeMs, ctimeMs, ino, sha256, outcome]`; stat fields are -1 when not trusted. */
type Entry = readonly [FileFormat, number, number, number, number, string, StoredOutcome]

/** Why the previous cache was not used. */
export type LoadStatus = "loaded" | "missing" | "corrupt" | "foreign" | "stale"

/** A cache being used by one run. */
export interface CacheState {
  readonly location: string
  readonly cwd: string
  readonly key: string
  readonly status: LoadStatus
  readonly previous: ReadonlyMap<string, Entry>
  /** The loaded file's body checksum, which journal lines chain to; with the entries they hold. */
  readonly base: { readonly checksum: string; readonly journalled: number } | undefined
  readonly next: Map<string, Entry>
  readonly visited: Set<string>
  /** The resident linter's watch: files it vouches for are not stat'ed (FileWatch.ts). */
  readonly watch: Pick<FileWatch, "trusted" | "checked"> | undefined
  /** Files whose problems came from the cache / were linted. */
  hits: number
  misses: number
  dirty: boolean
}

const sha256 = (data: string | Buffer): string => hash("sha256", data, "base64")

/** `--cache-location`: a file, or a folder (existing, or written with a trailing slash) to hold one. */
export const resolveLocation = (cwd: string, flag: string | undefined): string => {
  if (flag === undefined) return nodePath.join(cwd, DEFAULT_FILE)
  const path = nodePath.resolve(cwd, flag)
  if (/[\\/]$/.test(flag)) return nodePath.join(path, DEFAULT_FILE)
  try {
    if (fs.statSync(path).isDirectory()) return nodePath.join(path, DEFAULT_FILE)
  } catch {
    // not there yet: a file path
  }
  return path
}

/** The run key: everything besides a file's path and bytes that its problems depend on. */
export const runKey = (input: {
  readonly cwd: string
  readonly ctx: LintContext
  /** The suppressions file's path and bytes, when there is one. */
  readonly suppressions: { readonly path: string; readonly bytes: Buffer } | undefined
}): string =>
  sha256(JSON.stringify({
    format: VERSION_OF_FORMAT,
    rules: rulesHash(),
    config: configIdentity(input.cwd, input.ctx.config),
    at: input.ctx.at,
    upcomingUntil: input.ctx.upcomingUntil,
    maxFileSize: input.ctx.maxFileSize,
    inlineSuppressions: input.ctx.inlineSuppressions,
    integrations: input.ctx.integrations,
    suppressions: input.suppressions === undefined
      ? null
      : { path: relativeTo(input.cwd, input.suppressions.path), bytes: sha256(input.suppressions.bytes) }
  }))

const isEntry = (u: unknown): u is [string, Entry] => {
  if (!Array.isArray(u) || u.length !== 2 || typeof u[0] !== "string") return false
  const e: unknown = u[1]
  return Array.isArray(e) && e.length === 7 && (e[0] === "json" || e[0] === "yaml" || e[0] === "source") &&
    typeof e[1] === "number" && typeof e[2] === "number" && typeof e[3] === "number" &&
    typeof e[4] === "number" && typeof e[5] === "string" &&
    (e[6] === 0 || (typeof e[6] === "object" && e[6] !== null && Array.isArray(e[6].p) && Array.isArray(e[6].f) &&
      typeof e[6].s === "number" && Array.isArray(e[6].u)))
}

/** What a cache file holds for a run: its entries, and where journal lines may be appended. */
export interface Loaded {
  readonly status: LoadStatus
  readonly entries: Map<string, Entry>
  readonly base?: { readonly checksum: string; readonly journalled: number } | undefined
}

const journalChecksum = (base: string, changes: string) => sha256(`${base}\n${changes}`)

/** Applies the journal lines after the body; returns how many entries they held. */
const replay = (journal: string, base: string, entries: Map<string, Entry>): number => {
  let journalled = 0
  for (const line of journal.split("\n")) {
    const space = line.indexOf(" ")
    if (space < 0) continue
    const changes = line.slice(space + 1)
    if (line.slice(0, space) !== journalChecksum(base, changes)) continue
    let list: unknown
    try {
      list = JSON.parse(changes)
    } catch {
      continue
    }
    if (
      !Array.isArray(list) ||
      !list.every((c) =>
        isEntry(c) || (Array.isArray(c) && c.length === 2 && typeof c[0] === "string" && c[1] === null)
      )
    ) {
      continue
    }
    for (const [path, entry] of list as Array<[string, Entry | null]>) {
      if (entry === null) entries.delete(path)
      else entries.set(path, entry)
      journalled++
    }
  }
  return journalled
}

/** Reads the cache at `location` for a run with `key`; anything unusable reads as empty. */
export const load = (location: string, key: string): Loaded => {
  let text: string
  try {
    text = fs.readFileSync(location, "utf8")
  } catch {
    return { status: "missing", entries: new Map() }
  }
  try {
    const newline = text.indexOf("\n")
    if (newline < 0) return { status: "corrupt", entries: new Map() }
    const header: unknown = JSON.parse(text.slice(0, newline))
    if (
      typeof header !== "object" || header === null || !("format" in header) || header.format !== FORMAT ||
      !("version" in header) || header.version !== VERSION_OF_FORMAT
    ) return { status: "foreign", entries: new Map() }
    if (!("key" in header) || header.key !== key) return { status: "stale", entries: new Map() }
    const end = text.indexOf("\n", newline + 1)
    const body = end < 0 ? text.slice(newline + 1) : text.slice(newline + 1, end)
    if (!("checksum" in header) || typeof header.checksum !== "string" || header.checksum !== sha256(body)) {
      return { status: "corrupt", entries: new Map() }
    }
    const list: unknown = JSON.parse(body)
    if (!Array.isArray(list) || !list.every(isEntry)) return { status: "corrupt", entries: new Map() }
    const entries = new Map(list)
    const journalled = end < 0 ? 0 : replay(text.slice(end + 1), header.checksum, entries)
    return { status: "loaded", entries, base: { checksum: header.checksum, journalled } }
  } catch {
    return { status: "corrupt", entries: new Map() }
  }
}

/**
 * Opens the cache for one run. A resident linter's `memory` (LintCacheMemory.ts) stands in for the
 * file it wrote itself, while the file is unchanged.
 */
export const open = (location: string, cwd: string, key: string, memory?: Memory): CacheState => {
  const remembered = memory?.get(location, key) as Loaded | undefined
  const { base, entries, status } = remembered ?? load(location, key)
  return {
    location,
    cwd,
    key,
    status,
    previous: entries,
    base,
    next: new Map(),
    visited: new Set(),
    watch: memory?.watch,
    hits: 0,
    misses: 0,
    dirty: status !== "loaded"
  }
}

/** Whether a value comes back from JSON exactly as it went in. */
const survivesJson = (u: unknown): boolean => {
  switch (typeof u) {
    case "string":
    case "boolean":
      return true
    case "number":
      return Number.isFinite(u) && !Object.is(u, -0)
    case "object": {
      if (u === null) return true
      if (Array.isArray(u)) {
        for (let i = 0; i < u.length; i++) if (!(i in u) || !survivesJson(u[i])) return false
        return true
      }
      const proto = Object.getPrototypeOf(u)
      if (proto !== Object.prototype && proto !== null) return false
      for (const key of Object.keys(u)) if (!survivesJson((u as Record<string, unknown>)[key])) return false
      return true
    }
    default:
      return false
  }
}

const encode = (outcome: FileOutcome, used: ReadonlySet<number>): StoredOutcome | undefined => {
  if (outcome.problems.length === 0 && outcome.suppressed === 0 && used.size === 0) return 0
  const fixes: Array<unknown> = []
  const indexOf = (fix: unknown) => {
    const i = fixes.indexOf(fix)
    return i >= 0 ? i : fixes.push(fix) - 1
  }
  const p = outcome.problems.map((problem) => ({
    ...problem,
    ...(problem.fix === undefined ? {} : { fix: indexOf(problem.fix) }),
    ...(problem.suggestion === undefined ? {} : { suggestion: indexOf(problem.suggestion) })
  }))
  const stored = { p, f: fixes, s: outcome.suppressed, u: [...used] }
  return survivesJson(stored) ? stored : undefined
}

const decode = (
  stored: StoredOutcome
): { problems: ReadonlyArray<Problem>; suppressed: number; used: ReadonlyArray<number> } => {
  if (stored === 0) return { problems: [], suppressed: 0, used: [] }
  const problems = stored.p.map((raw) => {
    const p = raw as Problem & { fix?: number; suggestion?: number }
    if (p.fix === undefined && p.suggestion === undefined) return p as Problem
    return {
      ...p,
      ...(p.fix === undefined ? {} : { fix: stored.f[p.fix] }),
      ...(p.suggestion === undefined ? {} : { suggestion: stored.f[p.suggestion] })
    } as Problem
  })
  return { problems, suppressed: stored.s, used: stored.u }
}

const sameEntry = (a: Entry, b: Entry) =>
  a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3] && a[4] === b[4] && a[5] === b[5] &&
  a[6] === b[6]

/**
 * Lints `files` as `Linter.lintAll` does, taking each unchanged file's problems from the cache and
 * recording every file's outcome in `state.next`. `now` is the run's start (epoch ms, from the
 * Clock): files changed within `RACY_MS` of it get no trusted stat.
 */
export const lintAll = (
  ctx: LintContext,
  files: ReadonlyArray<InputFile>,
  state: CacheState,
  now: number
): LintRun => {
  const problems: Array<Problem> = []
  const usedEntries = new Set<number>()
  let suppressed = 0
  const racyAfter = now - RACY_MS
  const take = (stored: StoredOutcome) => {
    if (stored === 0) return // a clean file: most of them
    const outcome = decode(stored)
    for (const p of outcome.problems) problems.push(p)
    for (const u of outcome.used) usedEntries.add(u)
    suppressed += outcome.suppressed
  }
  for (const file of files) {
    const key = file.relative
    state.visited.add(key)
    const old = state.previous.get(key)
    const known = old !== undefined && old[0] === file.format ? old : undefined
    const watch = file.linked === true ? undefined : state.watch
    if (known !== undefined && known[2] >= 0) {
      if (watch?.trusted(file.path) === true) {
        state.hits++
        state.next.set(key, known)
        take(known[6])
        continue
      }
      const stat = fs.statSync(file.path, { throwIfNoEntry: false })
      if (
        stat !== undefined && stat.size === known[1] && stat.mtimeMs === known[2] && stat.ctimeMs === known[3] &&
        stat.ino === known[4]
      ) {
        watch?.checked(file.path, stat)
        state.hits++
        state.next.set(key, known)
        take(known[6])
        continue
      }
    }
    const input = readInput(file, ctx.maxFileSize)
    if ("skipped" in input) {
      // Not stored: an unreadable or oversized file is cheap to report, and why it is skipped
      // depends on more than its bytes.
      state.misses++
      state.dirty ||= old !== undefined
      const outcome = lintInput(ctx, file, input, usedEntries)
      for (const p of outcome.problems) problems.push(p)
      suppressed += outcome.suppressed
      continue
    }
    const { buffer, stat } = input
    const digest = sha256(buffer)
    const trusted = stat.mtimeMs < racyAfter && stat.ctimeMs < racyAfter
    const head = [file.format, stat.size, trusted ? stat.mtimeMs : -1, trusted ? stat.ctimeMs : -1] as const
    const ino = trusted ? stat.ino : -1
    if (trusted) watch?.checked(file.path, stat)
    if (known !== undefined && known[5] === digest) {
      const entry: Entry = [...head, ino, digest, known[6]]
      state.hits++
      state.next.set(key, entry)
      state.dirty ||= !sameEntry(entry, known)
      take(known[6])
      continue
    }
    state.misses++
    const used = new Set<number>()
    const outcome = lintInput(ctx, file, input, used)
    for (const p of outcome.problems) problems.push(p)
    for (const u of used) usedEntries.add(u)
    suppressed += outcome.suppressed
    const stored = encode(outcome, used)
    if (stored !== undefined) state.next.set(key, [...head, ino, digest, stored])
    else state.next.delete(key)
    state.dirty = true
  }
  return { problems, suppressed, files: files.length, usedEntries }
}

/** Appends `line` to an existing file; the error code or message when it cannot. */
const append = (location: string, line: string): string | undefined => {
  let fd: number
  try {
    fd = fs.openSync(location, fs.constants.O_WRONLY | fs.constants.O_APPEND)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === "ENOENT" ? code : error instanceof Error ? error.message : String(error)
  }
  try {
    fs.writeSync(fd, line)
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * Writes the cache when it changed: the entries of this run, then those of files it did not visit
 * that still exist. Atomic (temporary file, then rename). Returns an error message instead of
 * failing: the lint's result never depends on whether its cache could be written.
 */
export const save = (state: CacheState, memory?: Memory): string | undefined => {
  for (const [key, entry] of state.previous) {
    if (state.visited.has(key) || state.next.has(key)) continue
    if (fs.existsSync(nodePath.resolve(state.cwd, key))) state.next.set(key, entry)
    else state.dirty = true
  }
  const remember = (base: Loaded["base"]) =>
    memory?.set(state.location, state.key, { status: "loaded", entries: state.next, base } satisfies Loaded)
  if (!state.dirty) {
    remember(state.base)
    return undefined
  }
  // Few changes to a file this run loaded: append them.
  if (state.base !== undefined) {
    const changes: Array<[string, Entry | null]> = []
    for (const [key, entry] of state.next) if (state.previous.get(key) !== entry) changes.push([key, entry])
    for (const key of state.previous.keys()) if (!state.next.has(key)) changes.push([key, null])
    const journalled = state.base.journalled + changes.length
    if (journalled <= Math.max(JOURNAL_MIN, state.next.size * JOURNAL_SHARE)) {
      if (changes.length === 0) {
        remember(state.base)
        return undefined
      }
      const json = JSON.stringify(changes)
      const appended = append(state.location, `${journalChecksum(state.base.checksum, json)} ${json}\n`)
      if (appended === undefined) {
        remember({ checksum: state.base.checksum, journalled })
        return undefined
      }
      // Gone since it was read: written whole below. Any other failure is the warning a rewrite would give.
      if (appended !== "ENOENT") {
        memory?.forget(state.location)
        return `cannot write the cache ${state.location}: ${appended}`
      }
    }
  }
  const body = JSON.stringify([...state.next])
  const checksum = sha256(body)
  const header = JSON.stringify({ format: FORMAT, version: VERSION_OF_FORMAT, key: state.key, checksum })
  const temporary = `${state.location}.${process.pid}.tmp`
  try {
    fs.mkdirSync(nodePath.dirname(state.location), { recursive: true })
    fs.writeFileSync(temporary, `${header}\n${body}\n`)
    fs.renameSync(temporary, state.location)
    remember({ checksum, journalled: 0 })
    return undefined
  } catch (error) {
    memory?.forget(state.location)
    try {
      fs.rmSync(temporary, { force: true })
    } catch {
      // the folder itself is unusable: nothing was written
    }
    return `cannot write the cache ${state.location}: ${error instanceof Error ? error.message : String(error)}`
  }
}
