import { assert, describe, it } from "@effect/vitest"
import * as path from "node:path"
import * as LintConfig from "../../src/commands/LintConfig.ts"
import { defaultSourceExtensions, discover } from "../../src/files/Discovery.ts"
import { lintAll } from "../../src/rules/Linter.ts"
import * as Baseline from "../../src/suppressions/Baseline.ts"
import { directives } from "../../src/suppressions/Suppressions.ts"
import * as SuppressionsFile from "../../src/suppressions/SuppressionsFile.ts"
import { context, lintIn, project, summary } from "../support/Harness.ts"

describe("inline suppressions", () => {
  it("parses rules and reasons in any comment syntax", () => {
    const list = directives([
      "// svc-lint-disable-next-line list-agents-v1, get-agent-versions -- migrating in TICKET-12",
      "x # svc-lint-disable-line create-web-call-v2",
      "/* svc-lint-disable-next-line legacy-list-endpoints -- until the v2 client ships */"
    ].join("\n"))
    assert.deepStrictEqual(list.map((d) => [d.line, d.target, d.rules, d.reason]), [
      [1, 2, ["list-agents-v1", "get-agent-versions"], "migrating in TICKET-12"],
      [2, 2, ["create-web-call-v2"], undefined],
      [3, 4, ["legacy-list-endpoints"], "until the v2 client ships"]
    ])
  })

  it("suppresses the named rule on the next line and reports a missing reason", () => {
    const dir = project({
      "client.ts": [
        "// svc-lint-disable-next-line create-web-call-v2 -- v3 client ships in Q4 (TICKET-7)",
        "post(`${base}/v2/create-web-call`)",
        "// svc-lint-disable-next-line create-web-call-v2",
        "post(`${base}/v2/create-web-call`)",
        "post(`${base}/v2/create-web-call`)",
        ""
      ].join("\n")
    })
    const run = lintIn(dir, "2026-10-01")
    assert.strictEqual(run.suppressed, 2)
    assert.deepStrictEqual(summary(run.problems), [
      "client.ts:3:4 suppression-without-reason error",
      "client.ts:5:14 create-web-call-v2 warning"
    ])
  })

  it("reports a suppression of a removed rule, an unused one and an unknown rule", () => {
    const dir = project({
      "client.ts": [
        "// svc-lint-disable-next-line list-agents-v1 -- old dashboard, TICKET-3",
        "get(`${base}/list-agents`)",
        "// svc-lint-disable-next-line phone-number-single-agent-fields -- never called",
        "const x = 1",
        "// svc-lint-disable-next-line list-agent -- typo",
        "const y = 2",
        ""
      ].join("\n")
    })
    const problems = lintIn(dir, "2026-09-20").problems
    assert.deepStrictEqual(problems.map((p) => `${p.line} ${p.ruleId}: ${p.message}`), [
      "1 suppression-expired: suppression of list-agents-v1, removed on 2026-07-31: fix the code instead",
      "3 suppression-unused: suppression of phone-number-single-agent-fields on line 4 matches no problem",
      "5 suppression-invalid: suppression names an unknown rule \"list-agent\""
    ])
    // Before a rule is active (more than 30 days ahead), an early suppression is not "unused".
    assert.deepStrictEqual(summary(lintIn(dir, "2026-02-01").problems), ["client.ts:5:4 suppression-invalid error"])
  })

  it("works in YAML configs, where comments exist", () => {
    const dir = project({
      "agent.yaml":
        "agent_id: a\n# svc-lint-disable-next-line agent-language-multi -- migrated by the platform\nlanguage: multi\n"
    })
    const run = lintIn(dir, "2026-07-15")
    assert.deepStrictEqual(run.problems, [])
    assert.strictEqual(run.suppressed, 1)
  })
})

describe("suppressions file", () => {
  const setup = async (suppressions: string, asOf = "2026-08-01") => {
    const dir = project({
      "svc-lint.suppressions.yaml": suppressions,
      "phones/legacy-1.json":
        "{\n  \"phone_number\": \"+1\",\n  \"inbound_agent_id\": \"a\",\n  \"outbound_agent_id\": \"b\"\n}\n",
      "phones/main.json": "{\n  \"phone_number\": \"+2\",\n  \"inbound_agent_id\": \"c\"\n}\n"
    })
    const config = LintConfig.empty(dir)
    const file = await SuppressionsFile.load(dir, path.join(dir, "svc-lint.suppressions.yaml"), config)
    const found = discover(["phones"], {
      cwd: dir,
      ignored: () => false,
      sourceExtensions: new Set(defaultSourceExtensions)
    })
    const ctx = context(asOf, { config, fileSuppressions: file.entries })
    const run = lintAll(ctx, found.files)
    const meta = SuppressionsFile.entryProblems(dir, file, config, run.usedEntries, ctx.at, ctx.upcomingUntil)
    return { problems: [...file.problems, ...run.problems, ...meta], suppressed: run.suppressed }
  }

  it("suppresses by rule, file glob and JSON path, and reports entries without reason or use", async () => {
    const { problems, suppressed } = await setup([
      "suppressions:",
      "  - rule: phone-number-single-agent-fields",
      "    files: [\"phones/legacy-*.json\"]",
      "    path: $.inbound_agent_id",
      "    reason: carrier cut-over on 2026-09-01, TICKET-9",
      "  - rule: phone-number-single-agent-fields",
      "    files: phones/main.json",
      "  - rule: calendar-cal-tools",
      "    files: [\"**\"]",
      "    reason: none yet",
      "  - rule: no-such-rule",
      "    files: [\"**\"]",
      ""
    ].join("\n"))
    assert.strictEqual(suppressed, 2)
    assert.deepStrictEqual(problems.map((p) => `${p.file}:${p.line} ${p.ruleId}`), [
      "svc-lint.suppressions.yaml:11 suppression-invalid",
      "phones/legacy-1.json:4 phone-number-single-agent-fields",
      "svc-lint.suppressions.yaml:6 suppression-without-reason"
    ])
  })

  it("reports an entry whose rule's removal date has passed", async () => {
    const { problems } = await setup(
      "suppressions:\n  - rule: agent-language-multi\n    files: [\"agents/**\"]\n    reason: old agents\n"
    )
    assert.deepStrictEqual(
      problems.map((p) => `${p.line} ${p.ruleId} ${p.message}`).filter((p) => p.includes("suppression")),
      [
        "2 suppression-expired suppressions[0]: suppression of agent-language-multi, removed on 2026-07-31: fix the configs instead"
      ]
    )
  })
})

describe("baseline", () => {
  it("hides known problems, reports new ones and resurfaces a problem whose level rose", () => {
    const dir = project({
      "a.yaml": "phone_number: \"+1\"\ninbound_agent_id: a\n",
      "b.json": "{\"agent_id\": \"b\", \"language\": \"multi\"}"
    })
    const known = lintIn(dir, "2026-08-01").problems
    const entries = Baseline.decode(JSON.parse(Baseline.render("2026-08-01", known)))
    assert.strictEqual(entries.length, 2)

    // Same problems, moved down a line: still known.
    const later = project({
      "a.yaml": "# moved\nphone_number: \"+1\"\ninbound_agent_id: a\n",
      "b.json": "{\"agent_id\": \"b\", \"language\": \"multi\", \"analysis_summary_prompt\": \"x\"}"
    })
    const applied = Baseline.apply(entries, lintIn(later, "2026-08-01").problems)
    assert.strictEqual(applied.baselined, 2)
    assert.deepStrictEqual(summary(applied.fresh), ["b.json:1:40 legacy-analysis-prompts error"])

    // A warning accepted in the baseline is reported again once it is an error.
    const escalated = Baseline.apply(
      entries.map((e) => (e.ruleId === "agent-language-multi" ? { ...e, level: "warning" as const } : e)),
      lintIn(dir, "2026-08-01").problems
    )
    assert.deepStrictEqual(summary(escalated.fresh), ["b.json:1:19 agent-language-multi error"])
  })

  it("counts entries that no longer match anything", () => {
    const dir = project({ "a.yaml": "phone_number: \"+1\"\ninbound_agent_id: a\n" })
    const entries = Baseline.decode(JSON.parse(Baseline.render("2026-08-01", lintIn(dir, "2026-08-01").problems)))
    const clean = project({ "a.yaml": "phone_number: \"+1\"\n" })
    assert.deepStrictEqual(Baseline.apply(entries, lintIn(clean, "2026-08-01").problems).stale, 1)
  })

  it("rejects a file that is not a baseline", () => {
    assert.throws(() => Baseline.decode({ findings: [] }), /not a svc-lint baseline/)
  })
})
