import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { writeCorpus } from "../support/Corpus.ts"
import { project, runBin, tempDir } from "../support/Harness.ts"

// The real bin with --cache: every format byte for byte as without it, the cache file where
// --cache-location says, and --fix keeping the cache true.
describe("svc-lint --cache", () => {
  const formats = (out: string) => [
    "--as-of",
    "2026-11-01",
    "-f",
    "stylish",
    "-o",
    `json=${out}/report.json`,
    "-o",
    `sarif=${out}/report.sarif`,
    "-o",
    `junit=${out}/report.xml`
  ]
  const outputs = (
    out: string,
    stdout: string
  ) => [stdout, ...["report.json", "report.sarif", "report.xml"].map((f) => fs.readFileSync(path.join(out, f), "utf8"))]

  it("prints the same bytes in every format, cold, warm and after an edit, into a cache folder it creates", () => {
    const dir = tempDir()
    writeCorpus(dir, { configs: 150, sources: 20 })
    const plainOut = tempDir()
    const cachedOut = tempDir()
    const check = (label: string) => {
      const plain = runBin(dir, formats(plainOut))
      const cached = runBin(dir, [...formats(cachedOut), "--cache", "--cache-location", "build/lint/cache.json"])
      assert.strictEqual(cached.status, plain.status, label)
      assert.strictEqual(cached.stderr, "", label)
      assert.deepStrictEqual(outputs(cachedOut, cached.stdout), outputs(plainOut, plain.stdout), label)
    }
    check("cold")
    assert.isTrue(fs.existsSync(path.join(dir, "build", "lint", "cache.json")))
    check("warm")
    const agent = path.join(dir, "corpus", "team-03", "agents")
    const first = path.join(agent, fs.readdirSync(agent)[0]!)
    fs.writeFileSync(first, fs.readFileSync(first, "utf8").replace("en-US", "multi"))
    check("after an edit")
  }, 180_000)

  it("keeps the default cache in the working folder and refuses --cache-location without --cache", () => {
    const dir = project({ "agent.json": "{\"agent_id\": \"a\", \"language\": \"multi\"}\n" })
    const first = runBin(dir, ["--as-of", "2026-11-01", "--cache"])
    assert.strictEqual(first.status, 1, first.stderr)
    assert.isTrue(fs.existsSync(path.join(dir, ".svc-lint-cache")))
    const usage = runBin(dir, ["--as-of", "2026-11-01", "--cache-location", "x"])
    assert.strictEqual(usage.status, 2)
    assert.include(usage.stderr, "--cache-location needs --cache")
  }, 60_000)

  it("warns and still reports when the cache cannot be written", () => {
    const dir = project({ "agent.json": "{\"agent_id\": \"a\", \"language\": \"multi\"}\n", "blocker": "a file\n" })
    const plain = runBin(dir, ["--as-of", "2026-11-01", "-f", "json"])
    const cached = runBin(dir, ["--as-of", "2026-11-01", "-f", "json", "--cache", "--cache-location", "blocker/cache"])
    assert.strictEqual(cached.status, 1)
    assert.strictEqual(cached.stdout, plain.stdout)
    assert.include(cached.stderr, "svc-lint: warning: cannot write the cache")
  }, 60_000)

  it("with --fix, reports and caches what is left in the fixed files", () => {
    const files = {
      "llm.json": JSON.stringify(
        {
          llm_id: "llm_1",
          general_tools: [{
            type: "transfer_call",
            name: "t",
            transfer_destination: { type: "predefined", number: "+1" },
            transfer_option: { type: "cold_transfer", show_transferee_as_caller: true }
          }]
        },
        null,
        2
      ) + "\n",
      "agent.yaml": "agent_id: a\nlanguage: multi\n"
    }
    const dir = project(files)
    const twin = project(files)
    const args = ["--as-of", "2026-11-01", "-f", "json"]
    const warm = runBin(dir, [...args, "--cache"])
    assert.strictEqual(warm.stdout, runBin(twin, args).stdout)
    const fixed = runBin(dir, [...args, "--cache", "--fix"])
    const fixedTwin = runBin(twin, [...args, "--fix"])
    assert.strictEqual(fixed.stdout, fixedTwin.stdout)
    assert.strictEqual(JSON.parse(fixed.stdout).summary.fixed, 1)
    assert.strictEqual(
      fs.readFileSync(path.join(dir, "llm.json"), "utf8"),
      fs.readFileSync(path.join(twin, "llm.json"), "utf8")
    )
    // the next cached run sees the fixed file, not the cached problems of the old one
    const after = runBin(dir, [...args, "--cache"])
    assert.strictEqual(after.stdout, runBin(twin, args).stdout)
    assert.notInclude(after.stdout, "cold-transfer-mode")
  }, 120_000)
})
