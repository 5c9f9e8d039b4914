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

  it(
    "gives the same batch legal-hours findings with and without the cache, and re-reads them on a new as-of date",
    () => {
      // 09:00-10:00 Eastern: never legal in Honolulu, legal in Regina only outside US DST (issue 15 item 5). The
      // seasonal finding's text depends on the as-of date, so the date must be part of the run key.
      const batch = (start: number, end: number) =>
        [
          "from_number: \"+14155550123\"",
          `call_time_window: { timezone: America/New_York, windows: [{ start: ${start}, end: ${end} }] }`,
          "tasks:",
          "  - to_number: \"+18085550100\"",
          "  - to_number: \"+13065550100\"",
          "  - to_number: \"+13125550100\"",
          ""
        ].join("\n")
      const dir = project({
        "batches/a.yaml": batch(540, 600),
        "batches/b.json": "{\"from_number\": \"+1\", \"tasks\": []}\n"
      })
      const plainOut = tempDir()
      const cachedOut = tempDir()
      const check = (label: string, asOf: string) => {
        const args = formats(plainOut)
        args[1] = asOf
        const plain = runBin(dir, args)
        const cachedArgs = [...formats(cachedOut), "--cache"]
        cachedArgs[1] = asOf
        const cached = runBin(dir, cachedArgs)
        assert.strictEqual(cached.status, plain.status, label)
        assert.strictEqual(cached.stderr, "", label)
        assert.deepStrictEqual(outputs(cachedOut, cached.stdout), outputs(plainOut, plain.stdout), label)
        return plain.stdout
      }
      const winter = check("cold", "2026-12-01")
      assert.include(winter, "batch-window-never-legal")
      assert.include(winter, "legal until 2027-03-13")
      assert.strictEqual(check("warm", "2026-12-01"), winter)
      const summer = check("new as-of date", "2027-07-01")
      assert.include(summer, "not legal from the as-of date 2027-07-01")
      // 13:00-15:00 Eastern is legal all year in all three places (08:00 in Honolulu under DST is in its second hour)
      fs.writeFileSync(path.join(dir, "batches", "a.yaml"), batch(780, 900))
      assert.notInclude(check("after an edit", "2027-07-01"), "batch-window")
    },
    120_000
  )
})
