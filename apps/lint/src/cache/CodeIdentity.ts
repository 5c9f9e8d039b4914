/**
 * Which code of the linter is running, for the cache key (LintCache.ts, decision 0630): problems
 * found by one version of a rule's code must never be reused by another, even when the package
 * version and the schedule's data did not change (a developer editing a rule in this repository).
 *
 * The bundle and the start-up snapshot carry the hash of the sources they were built from
 * (`scripts/build.mjs` defines `SVC_LINT_SOURCE_HASH`); run from the TypeScript sources, the hash is
 * computed from those files, only when `--cache` is used.
 */
import { hash } from "node:crypto"
import * as fs from "node:fs"
import * as nodePath from "node:path"

// Replaced by a string literal in the bundle and the snapshot; not defined when run from sources.
declare const SVC_LINT_SOURCE_HASH: string | undefined

const collect = (root: string, dir: string, out: Array<string>): void => {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = nodePath.join(dir, entry.name)
    if (entry.isDirectory()) collect(root, full, out)
    else if (entry.isFile()) out.push(full)
  }
}

/** A hash of every file under `roots` (relative path and bytes, in a stable order). */
export const hashSources = (roots: ReadonlyArray<string>): string => {
  const parts: Array<string> = []
  for (const root of roots) {
    const files: Array<string> = []
    collect(root, root, files)
    files.sort()
    for (const file of files) {
      parts.push(nodePath.relative(root, file).split(nodePath.sep).join("/"), hash("sha256", fs.readFileSync(file)))
    }
  }
  return hash("sha256", parts.join("\u0000"))
}

/** The linter's own sources and the domain's (the rule engine). */
export const sourceRoots = (here: string): ReadonlyArray<string> => [
  here,
  nodePath.resolve(here, "..", "..", "..", "packages", "domain", "src")
]

let computed: string | undefined

/** The identity of the running code. */
export const codeIdentity = (): string => {
  if (typeof SVC_LINT_SOURCE_HASH === "string") return SVC_LINT_SOURCE_HASH
  return computed ??= hashSources(sourceRoots(nodePath.resolve(import.meta.dirname, "..")))
}
