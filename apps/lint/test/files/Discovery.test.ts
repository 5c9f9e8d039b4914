import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { defaultSourceExtensions, discover } from "../../src/files/Discovery.ts"
import { compileAll } from "../../src/files/Glob.ts"
import { project } from "../support/Harness.ts"

const walk = (cwd: string, inputs: ReadonlyArray<string>, ignore: ReadonlyArray<string> = []) =>
  discover(inputs, { cwd, ignored: compileAll(ignore), sourceExtensions: new Set(defaultSourceExtensions) })

describe("Discovery", () => {
  it("walks folders in name order, picking configs and sources by extension", () => {
    const dir = project({
      "b/agent.yaml": "a: 1\n",
      "a/agent.json": "{}",
      "a/notes.txt": "x",
      "src/client.ts": "x",
      "src/client.lua": "x"
    })
    const found = walk(dir, ["."])
    assert.deepStrictEqual(found.files.map((f) => `${f.relative} ${f.format}`), [
      "a/agent.json json",
      "b/agent.yaml yaml",
      "src/client.ts source"
    ])
    assert.deepStrictEqual(found.unmatched, [])
  })

  it("honours .gitignore files (nested and in ancestors up to the repository root) and --ignore", () => {
    const dir = project({
      ".git/HEAD": "ref",
      ".gitignore": "dist/\n*.local.json\n",
      "configs/.gitignore": "scratch.yaml\n",
      "configs/a.json": "{}",
      "configs/a.local.json": "{}",
      "configs/scratch.yaml": "a: 1",
      "configs/legacy/b.json": "{}",
      "dist/c.json": "{}",
      "node_modules/pkg/d.json": "{}"
    })
    assert.deepStrictEqual(walk(dir, ["."]).files.map((f) => f.relative), ["configs/a.json", "configs/legacy/b.json"])
    assert.deepStrictEqual(walk(dir, ["."], ["legacy"]).files.map((f) => f.relative), ["configs/a.json"])
    // Walking a sub-folder still applies the root's .gitignore.
    assert.deepStrictEqual(walk(path.join(dir, "configs"), ["."]).files.map((f) => f.relative), [
      "a.json",
      "legacy/b.json"
    ])
  })

  it("expands globs itself, and lints a named file whatever its extension", () => {
    const dir = project({ "x/a.json": "{}", "x/b.yaml": "a: 1", "y/c.json": "{}", "notes.txt": "GET /list-agents" })
    assert.deepStrictEqual(walk(dir, ["x/*.json", "notes.txt"]).files.map((f) => `${f.relative} ${f.format}`), [
      "notes.txt source",
      "x/a.json json"
    ])
    assert.deepStrictEqual(walk(dir, ["**/*.json"]).files.map((f) => f.relative), ["x/a.json", "y/c.json"])
  })

  it("lists inputs that match nothing: a missing path, an empty glob, a folder without lintable files", () => {
    const dir = project({ "a.json": "{}", "empty/readme.txt": "x" })
    const found = walk(dir, ["a.json", "missing.json", "nothing/*.yaml", "empty"])
    assert.deepStrictEqual(found.unmatched, ["missing.json", "nothing/*.yaml", "empty"])
    assert.strictEqual(found.files.length, 1)
  })

  it("lints a file reached twice once", () => {
    const dir = project({ "a/x.json": "{}" })
    fs.symlinkSync(path.join(dir, "a"), path.join(dir, "link"))
    const found = walk(dir, ["a", "a/x.json", "link"])
    assert.deepStrictEqual(found.files.map((f) => f.relative), ["a/x.json"])
    assert.deepStrictEqual(found.unmatched, [])
  })

  it("reports symbolic link loops and broken links instead of following them", () => {
    const dir = project({ "configs/a.json": "{}" })
    fs.symlinkSync(path.join(dir, "configs"), path.join(dir, "configs", "loop"))
    fs.symlinkSync(path.join(dir, "nowhere.json"), path.join(dir, "configs", "broken.json"))
    const self = path.join(dir, "configs", "self")
    fs.symlinkSync(self, self)
    const found = walk(dir, ["."])
    assert.deepStrictEqual(found.files.map((f) => f.relative), ["configs/a.json"])
    assert.deepStrictEqual(found.skipped, [
      { relative: "configs/broken.json", reason: "broken symbolic link" },
      { relative: "configs/loop", reason: "symbolic link loop" },
      { relative: "configs/self", reason: "symbolic link loop" }
    ])
  })
})
