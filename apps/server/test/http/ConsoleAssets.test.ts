// When svc-server rebuilds the console (decision 0800): its files missing, or a source listed in
// console.inputs.json newer than the bundle.
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { staleness } from "../../src/http/ConsoleAssets.ts"

const project = () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "svc-console-"))
  fs.mkdirSync(path.join(root, "src"))
  fs.mkdirSync(path.join(root, "scripts"))
  fs.writeFileSync(path.join(root, "src", "main.tsx"), "")
  fs.writeFileSync(path.join(root, "scripts", "build.mjs"), "")
  return root
}

const build = (root: string, at: Date) => {
  const dist = path.join(root, "dist")
  fs.mkdirSync(dist, { recursive: true })
  for (const name of ["index.html", "console.js", "console.css"]) fs.writeFileSync(path.join(dist, name), "x")
  fs.writeFileSync(path.join(dist, "console.inputs.json"), JSON.stringify(["../src/main.tsx"]))
  for (const name of ["index.html", "console.js", "console.css"]) fs.utimesSync(path.join(dist, name), at, at)
}

describe("ConsoleAssets.staleness", () => {
  it("asks for a build when nothing was built", () => {
    assert.strictEqual(staleness(project()), "not built yet")
  })

  it("serves a bundle newer than every source", () => {
    const root = project()
    const old = new Date(Date.now() - 60_000)
    fs.utimesSync(path.join(root, "src", "main.tsx"), old, old)
    fs.utimesSync(path.join(root, "scripts", "build.mjs"), old, old)
    build(root, new Date())
    assert.strictEqual(staleness(root), undefined)
  })

  it("rebuilds when a source changed after the bundle, naming it", () => {
    const root = project()
    build(root, new Date(Date.now() - 60_000))
    assert.strictEqual(staleness(root), path.join("src", "main.tsx") + " changed")
  })

  it("rebuilds when a built file is missing", () => {
    const root = project()
    build(root, new Date())
    fs.rmSync(path.join(root, "dist", "console.css"))
    assert.strictEqual(staleness(root), "console.css is missing")
  })
})
