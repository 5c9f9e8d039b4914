/**
 * `.gitignore` semantics for the folder walk: one rule list per `.gitignore` file, each rule
 * relative to the folder that holds the file. The last matching rule across the applicable files
 * (outer first, inner last) decides; `!` re-includes; a trailing `/` matches folders only; a
 * pattern with a `/` before its end is anchored to its folder. As in git, a file inside an ignored
 * folder cannot be re-included (the walk never enters the folder).
 */
import { globSource } from "./Glob.ts"

interface IgnoreRule {
  readonly negate: boolean
  readonly dirOnly: boolean
  readonly regex: RegExp
}

/** The rules of one `.gitignore` file. */
export interface IgnoreFile {
  /** Folder of the file, as a `/`-separated path relative to the walk's reference folder ("" = it). */
  readonly base: string
  readonly rules: ReadonlyArray<IgnoreRule>
}

const parseLine = (raw: string): IgnoreRule | undefined => {
  let line = raw.replace(/\r$/, "")
  // Trailing spaces are ignored unless escaped.
  line = line.replace(/(?<!\\)\s+$/, "")
  if (line === "" || line.startsWith("#")) return undefined
  let negate = false
  if (line.startsWith("!")) {
    negate = true
    line = line.slice(1)
  } else if (line.startsWith("\\!") || line.startsWith("\\#")) {
    line = line.slice(1)
  }
  let dirOnly = false
  if (line.endsWith("/")) {
    dirOnly = true
    line = line.slice(0, -1)
  }
  if (line === "") return undefined
  const anchored = line.includes("/")
  if (line.startsWith("/")) line = line.slice(1)
  const regex = new RegExp(`^${anchored ? "" : "(?:.*/)?"}${globSource(line)}$`)
  return { negate, dirOnly, regex }
}

/** Parses the text of a `.gitignore` file whose folder is `base`. */
export const parse = (base: string, text: string): IgnoreFile => {
  const rules: Array<IgnoreRule> = []
  for (const line of text.split("\n")) {
    const rule = parseLine(line)
    if (rule !== undefined) rules.push(rule)
  }
  return { base, rules }
}

/**
 * Whether `path` (relative to the same reference folder as the files' `base`) is ignored by the
 * stack of files that apply to it, outer first.
 */
export const isIgnored = (stack: ReadonlyArray<IgnoreFile>, path: string, isDir: boolean): boolean => {
  let ignored = false
  for (const file of stack) {
    let relative: string
    if (file.base === "") relative = path
    else if (path.startsWith(`${file.base}/`)) relative = path.slice(file.base.length + 1)
    else continue
    for (const rule of file.rules) {
      if (rule.dirOnly && !isDir) continue
      if (rule.regex.test(relative)) ignored = !rule.negate
    }
  }
  return ignored
}
