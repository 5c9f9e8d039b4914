#!/usr/bin/env node
// npm links this file as the `svc-test` bin (decision 0705). Two ways to run, faster first, the first only when it is
// current (built after every source file it is made of), so a stale build never runs old code (as svc-lint's bin,
// decision 0202):
// 1. the bundle `dist/svc-test.mjs` (one file: no module resolution or type stripping), built by
//    `npm run build -w @svc/lint`, when no workspace file it was made of changed since;
// 2. the TypeScript sources (Node >= 22.18).
// `SVC_TEST_NO_BUNDLE=1` runs the sources (the start-up bench and the same-output test compare the two).
import * as fs from "node:fs"
import * as Module from "node:module"
import * as path from "node:path"

const here = path.dirname(new URL(import.meta.url).pathname)
const bundle = path.join(here, "..", "dist", "svc-test.mjs")

// Current when newer than each workspace file it was built from (dist/svc-test.inputs.json, written by the build);
// an edit elsewhere in the tree leaves it current.
const bundleCurrent = () => {
  if (process.env.SVC_TEST_NO_BUNDLE !== undefined) return false
  try {
    const dist = path.dirname(bundle)
    const inputs = JSON.parse(fs.readFileSync(path.join(dist, "svc-test.inputs.json"), "utf8"))
    const built = fs.statSync(bundle).mtimeMs
    return inputs.every((input) => fs.statSync(path.resolve(dist, input)).mtimeMs <= built)
  } catch {
    // no build, or a file it was made of is gone: the sources
    return false
  }
}

// Before the program loads: V8 then reuses its compiled code from the second run on (as svc-lint's bin).
Module.enableCompileCache?.()
await import(bundleCurrent() ? bundle : path.join(here, "..", "src", "svcTest", "main.ts"))
