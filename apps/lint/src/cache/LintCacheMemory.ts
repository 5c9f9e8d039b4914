/**
 * The resident linter's copy of each `--cache` file it last wrote (decision 0642), so a re-lint
 * does not read and parse the cache file it wrote itself a moment ago.
 *
 * The copy stands for the file only while the file is exactly the one it wrote (same size, mtime,
 * ctime and inode): a plain `svc-lint --cache` run in between, a deleted or restored cache file,
 * and the copy is dropped and the file read, as any run would. A process of its own has no memory
 * (the reference's default), and every run reads the file.
 */
import { Context } from "effect"
import * as fs from "node:fs"
import type { FileWatch } from "../files/FileWatch.ts"

/** What a run keeps of a cache it loaded or saved. */
export interface Remembered {
  readonly key: string
  /** What LintCache.ts read or wrote (its entries and journal position). */
  readonly loaded: unknown
  /** The cache file's stat right after this process wrote or read it. */
  readonly stamp: string
}

/** The store: one copy per cache location. */
export interface Memory {
  readonly get: (location: string, key: string) => unknown
  readonly set: (location: string, key: string, loaded: unknown) => void
  readonly forget: (location: string) => void
  /** The watch that vouches for unchanged files, when the folders can be watched. */
  readonly watch: FileWatch | undefined
}

/** The file's identity as far as a stat can tell; `undefined` when it cannot be read. */
export const stampOf = (location: string): string | undefined => {
  const stat = fs.statSync(location, { throwIfNoEntry: false })
  return stat === undefined ? undefined : `${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}:${stat.ino}:${stat.dev}`
}

/** A store held by one process. */
export const make = (watch?: FileWatch): Memory => {
  const copies = new Map<string, Remembered>()
  return {
    get: (location, key) => {
      const copy = copies.get(location)
      if (copy === undefined) return undefined
      if (copy.key !== key || stampOf(location) !== copy.stamp) {
        copies.delete(location)
        return undefined
      }
      return copy.loaded
    },
    set: (location, key, loaded) => {
      const stamp = stampOf(location)
      if (stamp === undefined) copies.delete(location)
      else copies.set(location, { key, loaded, stamp })
    },
    forget: (location) => void copies.delete(location),
    watch
  }
}

/** The current process's store: none (every run reads its cache file) unless the daemon provides one. */
export const LintCacheMemory = Context.Reference<Memory | undefined>("@svc/lint/LintCacheMemory/LintCacheMemory", {
  defaultValue: () => undefined
})
