#!/usr/bin/env node
// npm links this file as the `svc-lint` bin. It runs the bundle `dist/svc-lint.mjs` (built by
// `npm run build -w @svc/lint`, one file: no module resolution or type stripping at start-up, which
// is most of a small run) when the bundle is newer than every source file of the linter and the
// domain it uses; otherwise the TypeScript sources directly (Node >= 22.18), so a stale or missing
// bundle never runs old code.
import * as fs from "node:fs"
import * as Module from "node:module"
import * as path from "node:path"

// Before the bundle loads: V8 then reuses its compiled code from the second run on.
Module.enableCompileCache?.()

const here = path.dirname(new URL(import.meta.url).pathname)
const bundle = path.join(here, "..", "dist", "svc-lint.mjs")

const newestSource = (dir) => {
  let newest = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : fs.statSync(full).mtimeMs)
  }
  return newest
}

const bundleIsFresh = () => {
  try {
    const built = fs.statSync(bundle).mtimeMs
    return built >= newestSource(path.join(here, "..", "src")) &&
      built >= newestSource(path.join(here, "..", "..", "..", "packages", "domain", "src"))
  } catch {
    return false
  }
}

await import(bundleIsFresh() ? bundle : "../src/bin.ts")
