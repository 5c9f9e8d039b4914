import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { jsonParseDefect } from "../src/JsonParseCheck.ts"

const src = path.resolve(import.meta.dirname, "..", "src")

const mulberry32 = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

// Pieces of keys as a client writes them, with what they read as: plain, escaped the way JSON
// encoders escape (Python's json.dumps escapes every non-ASCII character), and the backslash
// that poisoned Node 24.20-24.21's key lookup.
const PIECES: ReadonlyArray<readonly [string, string]> = [
  ["a", "a"],
  ["b", "b"],
  ["é", "é"],
  ["\\\\", "\\"],
  ["\\n", "\n"],
  ["\\t", "\t"],
  ["\\\"", "\""],
  ["\\/", "/"],
  ["\\u0001", "\u0001"],
  ["\\u0041", "A"],
  ["\\u00e9", "é"],
  ["\\ud83d\\ude00", "😀"]
]

/** Runs `script` (an ES module) in a fresh process of the Node that runs the tests. */
const fresh = (script: string) =>
  spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })

describe("JsonParseCheck", () => {
  it("the Node svc runs on reads 60,000 objects' keys as written (escapes, one-character keys, after a \"\\\\\" key)", () => {
    const rnd = mulberry32(1)
    let checked = 0
    for (let i = 0; i < 60_000; i++) {
      const members = Array.from(
        { length: 1 + Math.floor(rnd() * 3) },
        () => Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => PIECES[Math.floor(rnd() * PIECES.length)]!)
      )
      const text = `{${members.map((m, j) => `"${m.map((p) => p[0]).join("")}": ${j}`).join(", ")}}`
      // JSON keeps the first place of a repeated key and its last value
      const expected = [...new Set(members.map((m) => m.map((p) => p[1]).join("")))]
      assert.deepStrictEqual(Object.keys(JSON.parse(text) as object), expected, text)
      checked++
    }
    assert.strictEqual(checked, 60_000)
  })

  it("finds no defect in this Node, in a fresh process as at start-up", () => {
    const result = fresh(
      `import { jsonParseDefect } from ${JSON.stringify(path.join(src, "JsonParseCheck.ts"))}\n` +
        `process.stdout.write(jsonParseDefect() ?? "sound")`
    )
    assert.strictEqual(result.stderr, "")
    assert.strictEqual(result.stdout, "sound")
    assert.isUndefined(jsonParseDefect())
  })

  it("names the key, what it read and the fix when a parser misreads an escaped one-character key", () => {
    // Node 24.21.0's behaviour, reproduced: after a "\\" key, an escaped one-character key reads as "\\".
    let poisoned = false
    const defective = (text: string) => {
      const value = JSON.parse(text) as Record<string, unknown>
      if (Object.keys(value).includes("\\")) poisoned = true
      else if (poisoned && /"\\u00e9"/.test(text)) {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k === "é" ? "\\" : k, v]))
      }
      return value
    }
    const message = jsonParseDefect(defective)
    assert.isDefined(message)
    assert.include(message, "\"\\\\u00e9\"")
    assert.include(message, "not \"é\"")
    assert.include(message, "use Node 24.22.3 or later")
  })

  it("a svc process refuses to start on a Node whose JSON.parse misreads keys: one line, exit 1", () => {
    // The defect simulated in the child (this Node has none): a key "\n" after "svc_probe" reads as "\\".
    const script = `
      const parse = JSON.parse
      JSON.parse = (text, reviver) => text.includes('"svc_probe": 0, "\\\\n"') ? { svc_probe: 0, "\\\\": 1 } : parse(text, reviver)
      const { Main } = await import(${JSON.stringify(path.join(src, "index.ts"))})
      const { Layer } = await import("effect")
      Main.launch("svc-test", Layer.empty)
    `
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      cwd: path.resolve(src, ".."),
      timeout: 30_000
    })
    assert.strictEqual(result.status, 1, result.stderr)
    assert.match(
      result.stderr,
      /^svc-test: this Node \(v[\d.]+, V8 [^)]+\) has a JSON\.parse defect: it reads the key "\\\\n"/
    )
    assert.strictEqual(result.stderr.trim().split("\n").length, 1)
  })
})
