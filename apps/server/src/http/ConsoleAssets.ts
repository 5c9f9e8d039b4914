/**
 * The console's static files (apps/console/dist, docs/decisions/0800), built from the repository when they are missing
 * or older than their sources: the first request for `/console` after a fresh clone, or after a pull that changed
 * apps/console, runs `apps/console/scripts/build.mjs` (esbuild, about a second) and the result is kept in memory for
 * the life of the process. No build happens at start-up, so the server's start time does not change.
 *
 * The server reads the console's files; it imports none of its code (apps never import each other).
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

/** apps/console, next to apps/server in the repository. */
export const consoleRoot = path.resolve(import.meta.dirname, "..", "..", "..", "console")

/** The files served, by URL name, with their content type. */
export const FILES = {
  "index.html": "text/html; charset=utf-8",
  "console.js": "text/javascript; charset=utf-8",
  "console.css": "text/css; charset=utf-8"
} as const
export type FileName = keyof typeof FILES

export type Assets = Readonly<Record<FileName, Uint8Array>>

const mtime = (file: string): number => {
  try {
    return fs.statSync(file).mtimeMs
  } catch {
    return -1
  }
}

/**
 * Why the built files cannot be served as they are (missing, or a source newer than the bundle), or undefined when
 * they can. The bundle's sources are listed by the build in `console.inputs.json` (esbuild's metafile).
 */
export const staleness = (root: string = consoleRoot): string | undefined => {
  const dist = path.join(root, "dist")
  const built = mtime(path.join(dist, "console.js"))
  if (built < 0) return "not built yet"
  for (const name of Object.keys(FILES)) {
    if (mtime(path.join(dist, name)) < 0) return `${name} is missing`
  }
  let inputs: Array<string>
  try {
    inputs = JSON.parse(fs.readFileSync(path.join(dist, "console.inputs.json"), "utf8")) as Array<string>
  } catch {
    return "console.inputs.json is missing"
  }
  for (const input of [...inputs, "../scripts/build.mjs"]) {
    const file = path.resolve(dist, input)
    const changed = mtime(file)
    // a source that is gone (renamed) also means a rebuild
    if (changed < 0 || changed > built) return `${path.relative(root, file)} changed`
  }
  return undefined
}

const build = (root: string) =>
  new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(root, "scripts", "build.mjs")],
      { cwd: root, timeout: 120_000, maxBuffer: 4 * 1024 * 1024 },
      (error, _stdout, stderr) =>
        error === null
          ? resolve()
          : reject(new Error(`the console's build failed: ${(stderr || error.message).trim().split("\n")[0]}`))
    )
  })

const read = (root: string): Assets => {
  const dist = path.join(root, "dist")
  const files = {} as Record<FileName, Uint8Array>
  for (const name of Object.keys(FILES) as Array<FileName>) files[name] = fs.readFileSync(path.join(dist, name))
  return files
}

/** Builds when needed, then reads the files; a failure is not kept, so the next request tries again. */
export const makeLoader = (root: string = consoleRoot) => {
  let loading: Promise<Assets> | undefined
  return (): Promise<Assets> => {
    if (loading === undefined) {
      loading = (async () => {
        // another process may be rebuilding the same dist/ (tests run in parallel): a read that meets its swap
        // tries again
        for (let attempt = 1;; attempt++) {
          try {
            if (staleness(root) !== undefined) await build(root)
            return read(root)
          } catch (error) {
            if (attempt >= 3) throw error
          }
        }
      })()
      loading.catch(() => {
        loading = undefined
      })
    }
    return loading
  }
}
