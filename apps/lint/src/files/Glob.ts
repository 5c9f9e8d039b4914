/**
 * Glob patterns for inputs, `--ignore`, config-file overrides and suppressions, compiled once to
 * regular expressions over `/`-separated relative paths.
 *
 * Syntax: `*` (any run of characters except `/`), `?` (one character except `/`), `**` (any number
 * of path segments, including none), `{a,b}` (alternatives, may nest), `[abc]` / `[!abc]`
 * (character classes) and `\` to escape. `*` also matches names that start with a dot: configs
 * under `.github/` or `.svc/` are ordinary inputs here. A pattern without a `/` matches a name at
 * any depth (as in `.gitignore`), so `--ignore "*.generated.yaml"` works without a leading globstar segment.
 */

const MAGIC = /[*?[\]{}]/

/** Whether an input names a glob rather than a file or folder. */
export const isGlob = (input: string): boolean => MAGIC.test(input)

const escapeChar = (c: string) => /[.+^$()|\\/]/.test(c) ? `\\${c}` : c

/** The regular-expression source of a glob, anchored by the caller. */
export const globSource = (glob: string): string => {
  let out = ""
  let depth = 0
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (c === "\\" && i + 1 < glob.length) {
      out += escapeChar(glob[++i]!)
    } else if (c === "*") {
      if (glob[i + 1] === "*") {
        const atStart = i === 0 || glob[i - 1] === "/"
        const next = glob[i + 2]
        i++
        if (atStart && next === "/") {
          // `**/` = zero or more whole segments
          out += "(?:[^/]*/)*"
          i++
        } else if (atStart && next === undefined) {
          out += ".*"
        } else {
          out += "[^/]*"
        }
      } else {
        out += "[^/]*"
      }
    } else if (c === "?") {
      out += "[^/]"
    } else if (c === "[") {
      const close = glob.indexOf("]", i + 2)
      if (close === -1) {
        out += "\\["
      } else {
        let body = glob.slice(i + 1, close)
        if (body.startsWith("!")) body = `^${body.slice(1)}`
        out += `[${body.replace(/\\/g, "\\\\")}]`
        i = close
      }
    } else if (c === "{") {
      depth++
      out += "(?:"
    } else if (c === "}" && depth > 0) {
      depth--
      out += ")"
    } else if (c === "," && depth > 0) {
      out += "|"
    } else {
      out += escapeChar(c)
    }
  }
  return out
}

/** A compiled pattern: matches a relative path, or any path below a matching folder. */
export interface PathMatcher {
  readonly source: string
  readonly test: (relativePath: string) => boolean
}

const normalize = (pattern: string): string => {
  let p = pattern.replace(/\\(?![*?[\]{}!\\])/g, "/")
  while (p.startsWith("./")) p = p.slice(2)
  return p
}

/**
 * Compiles a pattern: one without a `/` (other than a trailing one) matches a name at any depth;
 * a match on a folder covers everything below it.
 */
export const compile = (pattern: string): PathMatcher => {
  let p = normalize(pattern)
  if (p.endsWith("/")) p = p.slice(0, -1)
  const anchored = p.includes("/")
  if (p.startsWith("/")) p = p.slice(1)
  const body = globSource(p)
  const regex = new RegExp(`^${anchored ? "" : "(?:.*/)?"}${body}(?:/.*)?$`)
  return { source: pattern, test: (relativePath) => regex.test(relativePath) }
}

/** A set of patterns; matches when any one does. */
export const compileAll = (patterns: ReadonlyArray<string>): (relativePath: string) => boolean => {
  const matchers = patterns.map(compile)
  return (relativePath) => matchers.some((m) => m.test(relativePath))
}

/**
 * Splits an input glob into the folder to walk (its literal leading segments) and a matcher for
 * the paths below the current directory.
 */
export const splitGlob = (glob: string): { readonly base: string; readonly regex: RegExp } => {
  const p = normalize(glob)
  const segments = p.split("/")
  const literal: Array<string> = []
  for (const segment of segments) {
    if (isGlob(segment)) break
    literal.push(segment)
  }
  // A trailing literal segment is a file name, not a folder to walk.
  if (literal.length === segments.length) literal.pop()
  const base = literal.length === 0 ? "." : literal.join("/") || "/"
  return { base, regex: new RegExp(`^${globSource(p)}$`) }
}
