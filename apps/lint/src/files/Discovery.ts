/**
 * Finds the files to lint from the command line's paths and globs.
 *
 * Folders are walked depth first in name order, honouring `.gitignore` files (the walked folders'
 * own and those of their ancestors up to the repository root) and the ignore patterns; `.git` and
 * `node_modules` are never entered. Symbolic links are followed; a link back to a folder being
 * walked (a loop) and a broken link are reported as skipped, never followed. A file reached twice
 * (named twice, or through a link) is linted once. A file named explicitly is linted whatever its
 * extension (as source code when it is neither JSON nor YAML); a walked file only when its
 * extension is a config or source extension.
 */
import * as fs from "node:fs"
import * as nodePath from "node:path"
import * as GitIgnore from "./GitIgnore.ts"
import { isGlob, splitGlob } from "./Glob.ts"

/** How a file is read: a JSON or YAML config document, or source code scanned as text. */
export type FileFormat = "json" | "yaml" | "source"

/** A file to lint. */
export interface InputFile {
  readonly path: string
  /** Path relative to the working directory, `/`-separated: what every report shows. */
  readonly relative: string
  readonly format: FileFormat
  /**
   * Reached through a symbolic link, or named on the command line: a watch of the folder it was
   * listed in cannot see it change (FileWatch.ts).
   */
  readonly linked?: true
}

/** A file or folder the walk could not or would not read. */
export interface SkippedFile {
  readonly relative: string
  readonly reason: string
}

/** The result of a walk. */
export interface Discovery {
  readonly files: ReadonlyArray<InputFile>
  readonly skipped: ReadonlyArray<SkippedFile>
  /** Inputs that matched no file. */
  readonly unmatched: ReadonlyArray<string>
}

/** What the walk needs to know. */
export interface DiscoveryOptions {
  readonly cwd: string
  /** Ignore patterns (`--ignore` and config `ignores`) over paths relative to `cwd`. */
  readonly ignored: (relative: string) => boolean
  /** Lower-case extensions with the dot, e.g. `.ts`. */
  readonly sourceExtensions: ReadonlySet<string>
  /** Told of each folder the walk lists (the resident linter watches them: FileWatch.ts). */
  readonly onFolder?: ((dir: string) => void) | undefined
}

/** The source extensions scanned by default. */
export const defaultSourceExtensions: ReadonlyArray<string> = [
  ".ts",
  ".tsx",
  ".mts",
  ".cts",
  ".js",
  ".jsx",
  ".mjs",
  ".cjs",
  ".py",
  ".go",
  ".rb",
  ".java",
  ".kt",
  ".cs",
  ".php",
  ".rs",
  ".swift",
  ".sh",
  ".bash",
  ".http",
  ".rest"
]

const NEVER_WALKED: ReadonlySet<string> = new Set([".git", "node_modules"])

const toPosix = (p: string) => nodePath.sep === "/" ? p : p.split(nodePath.sep).join("/")

/**
 * `path.join(dir, name)` for a normalised folder path and an entry name read from it: a slice of the
 * walk's time on 10,000 files went to normalising paths that are normal already.
 */
const child = (dir: string, name: string): string => dir.endsWith(nodePath.sep) ? dir + name : dir + nodePath.sep + name

/** The path of a file relative to `cwd`, `/`-separated. */
export const relativeTo = (cwd: string, path: string): string => toPosix(nodePath.relative(cwd, path)) || "."

const formatOf = (name: string, sourceExtensions: ReadonlySet<string>): FileFormat | undefined => {
  const dot = name.lastIndexOf(".")
  if (dot <= 0 && !name.startsWith(".")) return undefined
  const ext = name.slice(dot).toLowerCase()
  if (ext === ".json") return "json"
  if (ext === ".yaml" || ext === ".yml") return "yaml"
  return sourceExtensions.has(ext) ? "source" : undefined
}

const repositoryRoot = (dir: string): string | undefined => {
  let current = dir
  for (;;) {
    if (fs.existsSync(nodePath.join(current, ".git"))) return current
    const parent = nodePath.dirname(current)
    if (parent === current) return undefined
    current = parent
  }
}

const readIgnoreFile = (dir: string): GitIgnore.IgnoreFile | undefined => {
  let text: string
  try {
    text = fs.readFileSync(nodePath.join(dir, ".gitignore"), "utf8")
  } catch {
    return undefined
  }
  return GitIgnore.parse(toPosix(dir), text)
}

/** The `.gitignore` files above `dir` (not its own), outermost first, up to the repository root. */
const ancestorIgnores = (dir: string): Array<GitIgnore.IgnoreFile> => {
  const root = repositoryRoot(dir)
  if (root === undefined) return []
  const files: Array<GitIgnore.IgnoreFile> = []
  let current = dir
  while (current !== root) {
    current = nodePath.dirname(current)
    const file = readIgnoreFile(current)
    if (file !== undefined) files.unshift(file)
  }
  return files
}

/** Walks the inputs and returns the files to lint in a stable order. */
export const discover = (inputs: ReadonlyArray<string>, options: DiscoveryOptions): Discovery => {
  const files: Array<InputFile> = []
  const skipped: Array<SkippedFile> = []
  const unmatched: Array<string> = []
  const seenFiles = new Set<string>()
  const seenSkips = new Set<string>()
  // Per input: two inputs may cover the same folder with different filters.
  let walkedDirs = new Set<string>()

  const skip = (path: string, reason: string) => {
    const relative = relativeTo(options.cwd, path)
    if (seenSkips.has(relative)) return
    seenSkips.add(relative)
    skipped.push({ relative, reason })
  }

  // Below the working folder (the common case) a relative path is a slice; `path.relative`, which
  // resolves both sides, was a third of a 10,000-file walk (--cache re-lints, decision 0630).
  const cwdPrefix = options.cwd.endsWith(nodePath.sep) ? options.cwd : `${options.cwd}${nodePath.sep}`
  const relativeOf = (path: string): string =>
    // Every path here comes from path.join / path.resolve, so it is normalised like `cwd`.
    path.startsWith(cwdPrefix) && path.length > cwdPrefix.length
      ? toPosix(path.slice(cwdPrefix.length))
      : relativeTo(options.cwd, path)

  /** Adds a file once per real path; the first path it was reached by is the one reported. */
  const addFile = (
    path: string,
    real: string,
    format: FileFormat,
    relative = relativeOf(path),
    linked = false
  ): boolean => {
    if (seenFiles.has(real)) return true
    seenFiles.add(real)
    files.push(linked ? { path, relative, format, linked } : { path, relative, format })
    return true
  }

  /** Walks `dir`; `accept` decides for each file; returns how many files were accepted. */
  const walk = (
    dir: string,
    realDir: string,
    ancestors: ReadonlySet<string>,
    stack: ReadonlyArray<GitIgnore.IgnoreFile>,
    accept: (path: string, relative: string, name: string) => FileFormat | undefined
  ): number => {
    if (walkedDirs.has(realDir)) return 0
    walkedDirs.add(realDir)
    let entries: Array<fs.Dirent>
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch (error) {
      skip(dir, `unreadable folder (${(error as NodeJS.ErrnoException).code ?? "error"})`)
      return 0
    }
    options.onFolder?.(dir)
    const own = entries.some((e) => e.name === ".gitignore") ? readIgnoreFile(dir) : undefined
    const ignores = own === undefined ? stack : [...stack, own]
    const inside = new Set(ancestors).add(realDir)
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    let count = 0
    for (const entry of entries) {
      if (NEVER_WALKED.has(entry.name)) continue
      const path = child(dir, entry.name)
      let isDir = entry.isDirectory()
      let isFile = entry.isFile()
      let real = child(realDir, entry.name)
      if (entry.isSymbolicLink()) {
        try {
          const stat = fs.statSync(path)
          isDir = stat.isDirectory()
          isFile = stat.isFile()
          real = fs.realpathSync(path)
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code
          skip(path, code === "ELOOP" ? "symbolic link loop" : "broken symbolic link")
          continue
        }
      }
      const relative = relativeOf(path)
      if (options.ignored(relative)) continue
      if (GitIgnore.isIgnored(ignores, toPosix(path), isDir)) continue
      if (isDir) {
        if (inside.has(real)) {
          skip(path, "symbolic link loop")
          continue
        }
        count += walk(path, real, inside, ignores, accept)
      } else if (isFile) {
        const format = accept(path, relative, entry.name)
        if (format !== undefined && addFile(path, real, format, relative, entry.isSymbolicLink())) count++
      }
    }
    return count
  }

  const walkRoot = (
    dir: string,
    accept: (path: string, relative: string, name: string) => FileFormat | undefined
  ): number => {
    let real: string
    try {
      real = fs.realpathSync(dir)
    } catch {
      return 0
    }
    return walk(dir, real, new Set(), ancestorIgnores(dir), accept)
  }

  const byExtension = (_path: string, _relative: string, name: string) => formatOf(name, options.sourceExtensions)

  for (const input of inputs) {
    const before = files.length
    walkedDirs = new Set()
    let matched = 0
    const resolved = nodePath.resolve(options.cwd, input)
    let stat: fs.Stats | undefined
    try {
      stat = fs.statSync(resolved)
    } catch {
      stat = undefined
    }
    if (stat?.isDirectory()) {
      matched = walkRoot(resolved, byExtension)
    } else if (stat?.isFile()) {
      const relative = relativeTo(options.cwd, resolved)
      if (!options.ignored(relative)) {
        addFile(
          resolved,
          fs.realpathSync(resolved),
          formatOf(nodePath.basename(resolved), options.sourceExtensions) ?? "source",
          relativeTo(options.cwd, resolved),
          true
        )
        matched = 1
      }
    } else if (isGlob(input)) {
      const { base, regex } = splitGlob(input)
      const absolute = nodePath.isAbsolute(input)
      const baseDir = nodePath.resolve(options.cwd, base)
      matched = walkRoot(baseDir, (path, relative, name) => {
        const candidate = absolute ? toPosix(path) : relative
        if (!regex.test(candidate)) return undefined
        return formatOf(name, options.sourceExtensions) ?? "source"
      })
    }
    if (matched === 0 && files.length === before) unmatched.push(input)
  }
  files.sort((a, b) => (a.relative < b.relative ? -1 : a.relative > b.relative ? 1 : 0))
  skipped.sort((a, b) => (a.relative < b.relative ? -1 : a.relative > b.relative ? 1 : 0))
  return { files, skipped, unmatched }
}
