import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as LintConfig from "../../src/commands/LintConfig.ts"
import { lintIn, project, summary } from "../support/Harness.ts"

describe("Linter", () => {
  it("turns malformed JSON and YAML into parse-error problems at the parser's position", () => {
    const dir = project({
      "bad.json": "{\n  \"agent_id\": \"a\",\n  \"language\": \"multi\"\n  \"x\": 1\n}\n",
      "bad.yaml": "agent_id: a\nlanguage: [en-US\nvoice_id: x\n",
      "truncated.json": "{\"agent_id\": \"a\", ",
      "empty.json": ""
    })
    const { problems } = lintIn(dir, "2026-08-01")
    assert.deepStrictEqual(summary(problems), [
      "bad.json:4:3 parse-error error",
      "bad.yaml:3:1 parse-error error",
      "empty.json:1:1 parse-error error",
      "truncated.json:1:19 parse-error error"
    ])
    assert.match(problems[0]!.message, /^not valid JSON: expected "," or "}" after property value/)
    assert.match(problems[1]!.message, /^not valid YAML: /)
  })

  it("skips binary, oversized and unreadable files with a file-skipped warning", () => {
    const dir = project({
      "binary.json": Buffer.from([0x7b, 0x00, 0x01, 0x7d]),
      "big.json": `{"notes": "${"x".repeat(256 * 1024)}"}`,
      "locked.yaml": "a: 1\n",
      "ok.json": "{}",
      "replaced.json": "{}"
    })
    // A FIFO named like a config: the walk takes regular files only, so it is never opened (an open would block
    // until a writer came).
    const fifo = spawnSync("mkfifo", [path.join(dir, "pipe.json")])
    assert.strictEqual(fifo.status, 0, String(fifo.stderr))
    fs.chmodSync(path.join(dir, "locked.yaml"), 0o000)
    const replaced = path.join(dir, "replaced.json")
    // --max-file-size of 64 KiB: big.json (256 KiB and 13 bytes) is over it; a folder's size (4 KiB on ext4, less on
    // tmpfs) is not
    const { found, problems } = lintIn(dir, "2026-08-01", {
      maxFileSize: 64 * 1024,
      // replaced.json, listed by the walk as a file, is a folder by the time it is read (replaced while the run
      // was under way): unreadable as a file for every user, root included, where chmod 000 is no obstacle
      afterDiscovery: () => {
        fs.rmSync(replaced)
        fs.mkdirSync(replaced)
      }
    })
    const readable = (() => {
      try {
        fs.readFileSync(path.join(dir, "locked.yaml"))
        return true // running as root: permissions do not apply
      } catch {
        return false
      }
    })()
    assert.deepStrictEqual(found.files.map((f) => f.relative), [
      "big.json",
      "binary.json",
      "locked.yaml",
      "ok.json",
      "replaced.json"
    ])
    const skipped = problems.map((p) => `${p.file} ${p.ruleId} ${p.level} ${p.message}`)
    assert.include(skipped, "binary.json file-skipped warning not checked: binary content")
    assert.include(
      skipped,
      "big.json file-skipped warning not checked: larger than --max-file-size (262157 > 65536 bytes)"
    )
    assert.include(skipped, "replaced.json file-skipped warning not checked: unreadable (EISDIR)")
    if (!readable) assert.include(skipped, "locked.yaml file-skipped warning not checked: unreadable (EACCES)")
    assert.notInclude(problems.map((p) => p.file), "ok.json")
    fs.chmodSync(path.join(dir, "locked.yaml"), 0o644)
  })

  it("reports every finding of a document with the JSON path and the key's position", () => {
    const dir = project({
      "agents/front.yaml": [
        "# front desk",
        "agent_id: agent_front",
        "language: multi",
        "analysis_summary_prompt: Summarise.",
        "\"analysis_successful_prompt\": Booked?",
        ""
      ].join("\n")
    })
    const { problems } = lintIn(dir, "2026-08-01")
    assert.deepStrictEqual(problems.map((p) => `${p.line}:${p.column}-${p.endColumn} ${p.jsonPath} ${p.ruleId}`), [
      "3:1-9 $.language agent-language-multi",
      "4:1-24 $.analysis_summary_prompt legacy-analysis-prompts",
      "5:1-29 $.analysis_successful_prompt legacy-analysis-prompts"
    ])
    assert.strictEqual(problems[0]!.kind, "agent")
  })

  it("places findings inside arrays and multi-document YAML", () => {
    const dir = project({
      "flow.json": JSON.stringify(
        {
          conversation_flow_id: "f",
          nodes: [{ id: "a", type: "end" }, { id: "b", type: "conversation", tools: [], tool_ids: ["t"] }]
        },
        null,
        2
      ),
      "two.yaml": "agent_id: a\nlanguage: en-US\n---\nagent_id: b\nlanguage: multi\n"
    })
    const { problems } = lintIn(dir, "2026-08-01")
    assert.deepStrictEqual(problems.map((p) => `${p.file}:${p.line}:${p.column} ${p.jsonPath}`), [
      "flow.json:11:7 $.nodes[1].tools",
      "flow.json:12:7 $.nodes[1].tool_ids",
      "two.yaml:5:1 $.language"
    ])
  })

  it("ignores documents that are no config kind, and JSON that is not an object", () => {
    const dir = project({ "tsconfig.json": "{\"compilerOptions\": {\"strict\": true}}", "list.json": "[1, 2]" })
    assert.deepStrictEqual(lintIn(dir, "2026-08-01").problems, [])
  })

  it("applies the config file's rule levels, off, and per-glob kind overrides", () => {
    const dir = project({
      "agents/a.json": "{\"agent_id\": \"a\", \"language\": \"multi\", \"voice_model\": \"old-voice\"}",
      "legacy/b.json": "{\"language\": \"multi\"}"
    })
    const config = LintConfig.decode(path.join(dir, "svc-lint.config.json"), {
      rules: { "model-retirements": "off", "agent-language-multi": "warning" },
      overrides: [{ files: ["legacy/**"], kind: "agent", rules: { "agent-language-multi": "note" } }]
    })
    const { problems } = lintIn(dir, "2026-08-01", { config })
    assert.deepStrictEqual(summary(problems), [
      "agents/a.json:1:19 agent-language-multi warning",
      "legacy/b.json:1:2 agent-language-multi note"
    ])
  })

  it("sorts problems the same way on every run", () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 30; i++) files[`d${i % 3}/f${29 - i}.json`] = `{"agent_id": "a${i}", "language": "multi"}`
    const dir = project(files)
    const first = lintIn(dir, "2026-08-01").problems
    const again = lintIn(dir, "2026-08-01").problems
    assert.deepStrictEqual(first, again)
    const order = first.map((p) => p.file)
    assert.deepStrictEqual(order, [...order].sort())
  })
})

describe("LintConfig", () => {
  it("rejects unknown keys, rules, levels and kinds with the place of the mistake", () => {
    const bad = (u: unknown) => {
      try {
        LintConfig.decode("/x/svc-lint.config.yaml", u)
        return "accepted"
      } catch (error) {
        return (error as Error).message
      }
    }
    assert.strictEqual(bad({ rule: {} }), "svc-lint.config.yaml: unknown key \"rule\"")
    assert.strictEqual(
      bad({ rules: { "no-such-rule": "off" } }),
      "svc-lint.config.yaml: rules.no-such-rule: unknown rule (svc-lint rules lists them)"
    )
    assert.strictEqual(
      bad({ rules: { "agent-language-multi": "warn" } }),
      "svc-lint.config.yaml: rules.agent-language-multi: expected error | warning | note | off"
    )
    assert.strictEqual(
      bad({ overrides: [{ files: ["a/**"], kind: "bot" }] }),
      "svc-lint.config.yaml: overrides[0].kind: expected one of agent, llm, conversation-flow, flow-component, phone-number, tool, batch-call"
    )
    assert.strictEqual(
      bad({ upcomingDays: -1 }),
      "svc-lint.config.yaml: upcomingDays: expected a whole number of days >= 0"
    )
    assert.strictEqual(bad({ failOn: "warning", ignores: ["dist"] }), "accepted")
  })

  it("is found upward from the working directory, but not above the repository root", () => {
    const dir = project({ ".git/HEAD": "x", "svc-lint.config.yaml": "failOn: note\n", "a/b/c.json": "{}" })
    assert.strictEqual(LintConfig.find(path.join(dir, "a", "b")), path.join(dir, "svc-lint.config.yaml"))
    const inner = project({ ".git/HEAD": "x", "x/y.json": "{}" })
    assert.strictEqual(LintConfig.find(path.join(inner, "x")), undefined)
  })
})
