import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { project, runBin, tempDir } from "../support/Harness.ts"
import { sarifErrors } from "../support/Sarif.ts"

// The fixture project plus what the repository's formatter cannot hold: malformed JSON and a binary
// file with a .json name, written into a temporary copy.
const fixture = (() => {
  const dir = tempDir()
  fs.cpSync(path.resolve(import.meta.dirname, "..", "fixtures", "project"), dir, { recursive: true })
  fs.writeFileSync(
    path.join(dir, "agents", "broken.json"),
    "{\n  \"agent_id\": \"agent_broken\",\n  \"language\": \"en-US\",,\n}\n"
  )
  fs.writeFileSync(path.join(dir, "src", "logo.json"), Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"))
  return dir
})()
const golden = path.resolve(import.meta.dirname, "..", "golden")
const update = process.env["UPDATE_GOLDEN"] === "1"

const matchGolden = (name: string, actual: string) => {
  const file = path.join(golden, name)
  if (update) fs.writeFileSync(file, actual)
  assert.strictEqual(actual, fs.readFileSync(file, "utf8"), `golden file ${name} (UPDATE_GOLDEN=1 rewrites it)`)
}

describe("svc-lint (formats)", () => {
  const out = tempDir()
  const result = runBin(fixture, [
    "--as-of",
    "2026-09-01",
    "--format",
    "stylish",
    "--output",
    `json=${out}/report.json`,
    "-o",
    `sarif=${out}/report.sarif`,
    "-o",
    `junit=${out}/report.xml`,
    "-o",
    `github=${out}/report.txt`
  ])

  it("exits 1 on errors and writes every requested format in one run", () => {
    assert.strictEqual(result.status, 1, result.stderr)
    assert.strictEqual(result.stderr, "")
    for (const file of ["report.json", "report.sarif", "report.xml", "report.txt"]) {
      assert.isTrue(fs.existsSync(path.join(out, file)), file)
    }
  })

  it("renders stylish as in the golden file", () => matchGolden("stylish.txt", result.stdout))
  it("renders json as in the golden file", () =>
    matchGolden("report.json", fs.readFileSync(`${out}/report.json`, "utf8")))
  it("renders sarif as in the golden file", () =>
    matchGolden("report.sarif", fs.readFileSync(`${out}/report.sarif`, "utf8")))
  it("renders junit as in the golden file", () =>
    matchGolden("report.xml", fs.readFileSync(`${out}/report.xml`, "utf8")))
  it("renders github as in the golden file", () =>
    matchGolden("github.txt", fs.readFileSync(`${out}/report.txt`, "utf8")))

  it("writes SARIF 2.1.0 that the schema accepts, with one run, rule metadata and relative URIs", () => {
    const log = JSON.parse(fs.readFileSync(`${out}/report.sarif`, "utf8"))
    assert.deepStrictEqual(sarifErrors(log), [])
    assert.strictEqual(log.runs.length, 1)
    const run = log.runs[0]
    const ids = run.tool.driver.rules.map((r: { id: string }) => r.id)
    for (const r of run.results) {
      assert.strictEqual(ids[r.ruleIndex], r.ruleId)
      const uri: string = r.locations[0].physicalLocation.artifactLocation.uri
      assert.notMatch(uri, /^(\/|file:)/)
      assert.strictEqual(encodeURI(decodeURI(uri)), uri.replace(/%20/g, "%20"))
      assert.match(r.partialFingerprints["svcLint/v1"], /^[0-9a-f]{16}$/)
    }
    assert.include(
      run.results.map((r: { locations: [{ physicalLocation: { artifactLocation: { uri: string } } }] }) =>
        r.locations[0].physicalLocation.artifactLocation.uri
      ),
      "agents/front-desk.json"
    )
    assert.deepStrictEqual(sarifErrors({ version: "2.1.0", runs: [{ tool: {} }] }).length > 0, true)
  })
})

describe("svc-lint (exit codes)", () => {
  it("exits 0 on a clean tree and 1 only at or above --fail-on", () => {
    const dir = project({ "a.yaml": "phone_number: \"+1\"\ninbound_agent_id: a\n", "b.json": "{\"agent_id\": \"b\"}" })
    assert.strictEqual(runBin(dir, ["--as-of", "2026-08-01", "b.json"]).status, 0)
    const warned = runBin(dir, ["--as-of", "2026-08-01"])
    assert.strictEqual(warned.status, 0, warned.stdout)
    assert.match(warned.stdout, /1 problem \(0 errors, 1 warning, 0 notes\) in 2 files/)
    assert.strictEqual(runBin(dir, ["--as-of", "2026-08-01", "--fail-on", "warning"]).status, 1)
  })

  it("exits 2 for a path or glob that matches nothing, unless --allow-empty", () => {
    const dir = project({ "a.json": "{}" })
    const missing = runBin(dir, ["nope/", "*.yaml"])
    assert.strictEqual(missing.status, 2)
    assert.include(missing.stderr, "no files match \"nope/\", \"*.yaml\"")
    assert.strictEqual(runBin(dir, ["--allow-empty", "nope/"]).status, 0)
  })

  it("exits 2 for bad flags, a bad config file and conflicting outputs", () => {
    const dir = project({ "a.json": "{}", "svc-lint.config.yaml": "rules:\n  not-a-rule: off\n" })
    const config = runBin(dir, [])
    assert.strictEqual(config.status, 2)
    assert.include(config.stderr, "rules.not-a-rule: unknown rule")
    const clean = project({ "a.json": "{}" })
    assert.strictEqual(runBin(clean, ["--format", "xml"]).status, 2)
    const outputs = runBin(clean, ["-f", "json", "-f", "sarif"])
    assert.strictEqual(outputs.status, 2)
    assert.include(outputs.stderr, "json and sarif cannot share stdout")
  })

  it("reads the config file found upward: fail level, ignores and rule levels", () => {
    const dir = project({
      ".git/HEAD": "x",
      "svc-lint.config.yaml": "failOn: warning\nignores: [\"legacy/**\"]\nrules:\n  agent-language-multi: warning\n",
      "configs/a.json": "{\"agent_id\": \"a\", \"language\": \"multi\"}",
      "legacy/b.json": "{\"agent_id\": \"b\", \"analysis_summary_prompt\": \"x\"}"
    })
    const result = runBin(path.join(dir, "configs"), ["--as-of", "2026-08-01", "-f", "json"])
    assert.strictEqual(result.status, 1)
    const report = JSON.parse(result.stdout)
    assert.deepStrictEqual(
      report.problems.map((p: { file: string; ruleId: string; level: string }) => `${p.file} ${p.ruleId} ${p.level}`),
      [
        "a.json agent-language-multi warning"
      ]
    )
  })
})

describe("svc-lint (baseline, fix, github summary)", () => {
  it("adopts a baseline: only new problems are reported and fail", () => {
    const dir = project({ "a.json": "{\"agent_id\": \"a\", \"language\": \"multi\"}\n" })
    const written = runBin(dir, ["--as-of", "2026-08-01", "--baseline", "baseline.json", "--update-baseline"])
    assert.strictEqual(written.status, 0, written.stderr)
    assert.strictEqual(runBin(dir, ["--as-of", "2026-08-01", "--baseline", "baseline.json"]).status, 0)
    fs.writeFileSync(path.join(dir, "b.json"), "{\"agent_id\": \"b\", \"analysis_summary_prompt\": \"x\"}\n")
    const fresh = runBin(dir, ["--as-of", "2026-08-01", "--baseline", "baseline.json"])
    assert.strictEqual(fresh.status, 1)
    assert.match(fresh.stdout, /b\.json\n.*legacy-analysis-prompts\n\n1 problem .*; 1 in baseline/)
    assert.strictEqual(runBin(dir, ["--baseline", "missing.json"]).status, 2)
  })

  it("fixes in place, reports what is left, and a second --fix changes nothing", () => {
    const dir = project({
      "p.yaml": "# main line\nphone_number: \"+1\"\ninbound_agent_id: a   # old\n",
      "a.json": "{\n  \"agent_id\": \"a\",\n  \"language\": \"multi\"\n}\n"
    })
    const dry = runBin(dir, ["--as-of", "2026-08-01", "--fix-dry-run"])
    assert.match(dry.stdout, /^--- a\/p\.yaml\n\+\+\+ b\/p\.yaml\n/)
    assert.include(fs.readFileSync(path.join(dir, "p.yaml"), "utf8"), "inbound_agent_id")
    const fixed = runBin(dir, ["--as-of", "2026-08-01", "--fix"])
    assert.strictEqual(fixed.status, 1)
    assert.match(
      fixed.stdout,
      /1 problem \(1 error, 0 warnings, 0 notes\) in 2 files checked as of 2026-08-01; 1 fixed/
    )
    const text = fs.readFileSync(path.join(dir, "p.yaml"), "utf8")
    assert.strictEqual(text, "# main line\nphone_number: \"+1\"\ninbound_agents:\n  - agent_id: a\n    weight: 1\n")
    const again = runBin(dir, ["--as-of", "2026-08-01", "--fix"])
    assert.notInclude(again.stdout, "fixed")
    assert.strictEqual(fs.readFileSync(path.join(dir, "p.yaml"), "utf8"), text)
  })

  it("appends a Markdown table to $GITHUB_STEP_SUMMARY with the github format", () => {
    const dir = project({ "a.json": "{\"agent_id\": \"a\", \"language\": \"multi\"}\n" })
    const summary = path.join(dir, "summary.md")
    fs.writeFileSync(summary, "previous step\n")
    const result = runBin(dir, ["--as-of", "2026-08-01", "-f", "github", "a.json"], { GITHUB_STEP_SUMMARY: summary })
    assert.strictEqual(result.status, 1)
    assert.match(
      result.stdout,
      /^::error file=a\.json,line=1,col=19,endColumn=29,title=svc-lint agent-language-multi::/
    )
    const text = fs.readFileSync(summary, "utf8")
    assert.match(text, /^previous step\n### svc-lint: 1 error, 0 warnings, 0 notes\n/)
    assert.include(text, "| error | a.json | 1 | agent-language-multi |")
  })
})

describe("svc-lint timeline and explain", () => {
  it("shows what breaks on which future date for the inputs", () => {
    const result = runBin(fixture, ["timeline", "--as-of", "2026-09-01", "--json"])
    assert.strictEqual(result.status, 0, result.stderr)
    const steps = JSON.parse(result.stdout).steps.map((
      s: { date: string; ruleId: string; status: string; findings: number }
    ) => `${s.date} ${s.ruleId} ${s.status} ${s.findings}`)
    assert.deepStrictEqual(steps, [
      "2026-09-15 get-agent-versions removed 1",
      "2026-09-30 calendar-cal-tools deprecated 2",
      "2026-09-30 create-web-call-v2 deprecated 1",
      "2026-09-30 legacy-sip-endpoint removed 1",
      "2026-10-31 calendar-cal-tools removed 2"
    ])
  })

  it("explains a rule and rejects an unknown one with exit code 2", () => {
    const ok = runBin(fixture, ["explain", "calendar-cal-tools", "--as-of", "2026-10-05"])
    assert.strictEqual(ok.status, 0)
    assert.include(ok.stdout, "As of 2026-10-05: deprecated (2026-09-30), reported as warning.")
    assert.include(ok.stdout, "Next: removed on 2026-10-31")
    const bad = runBin(fixture, ["explain", "calendar"])
    assert.strictEqual(bad.status, 2)
    assert.include(bad.stderr, "did you mean calendar-cal-tools?")
  })
})
