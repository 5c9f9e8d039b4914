import { assert, describe, it } from "@effect/vitest"
import { classify, utcMidnight } from "@svc/domain/Deprecation/Rule.ts"
import { getRule, ruleIds } from "@svc/domain/Deprecation/Schedule.ts"
import * as path from "node:path"
import * as LintConfig from "../../src/commands/LintConfig.ts"
import { defaultSourceExtensions } from "../../src/files/Discovery.ts"
import { lintAll } from "../../src/rules/Linter.ts"
import { context } from "../support/Harness.ts"

const fixtures = path.resolve(import.meta.dirname, "..", "fixtures", "rules")

// One fixture per rule: the file, and where the finding must point (line:column).
const cases: ReadonlyArray<{ rule: string; file: string; at: string; format: "json" | "yaml" | "source" }> = [
  { rule: "cold-transfer-mode", file: "cold-transfer-mode.json", at: "9:53", format: "json" },
  {
    rule: "phone-number-single-agent-fields",
    file: "phone-number-single-agent-fields.yaml",
    at: "4:1",
    format: "yaml"
  },
  { rule: "model-retirements", file: "model-retirements.json", at: "4:3", format: "json" },
  { rule: "conversation-node-tools", file: "conversation-node-tools.yaml", at: "8:5", format: "yaml" },
  { rule: "legacy-list-endpoints", file: "legacy-list-endpoints.py", at: "4:33", format: "source" },
  { rule: "legacy-analysis-prompts", file: "legacy-analysis-prompts.yaml", at: "4:1", format: "yaml" },
  { rule: "publish-agent-endpoints", file: "publish-agent-endpoints.ts", at: "1:68", format: "source" },
  { rule: "legacy-mcp-server", file: "legacy-mcp-server.js", at: "1:33", format: "source" },
  { rule: "list-agents-v1", file: "list-agents-v1.http", at: "2:13", format: "source" },
  { rule: "agent-language-multi", file: "agent-language-multi.json", at: "4:3", format: "json" },
  { rule: "update-call-live-fields", file: "update-call-live-fields.sh", at: "2:21", format: "source" },
  { rule: "get-agent-versions", file: "get-agent-versions.go", at: "4:26", format: "source" },
  { rule: "web-client-v2", file: "web-client/package.json", at: "5:5", format: "json" },
  { rule: "create-web-call-v2", file: "create-web-call-v2.rb", at: "2:35", format: "source" },
  { rule: "legacy-sip-endpoint", file: "legacy-sip-endpoint.java", at: "2:45", format: "source" },
  { rule: "calendar-cal-tools", file: "calendar-cal-tools.yaml", at: "4:5", format: "yaml" }
]

const config: LintConfig.LintConfig = { ...LintConfig.empty(fixtures), legacyMcpHosts: ["mcp-legacy.example.com"] }

const lintFixture = (file: string, format: "json" | "yaml" | "source", asOf: string, days = 30) =>
  lintAll(context(asOf, { config, days }), [{ path: path.join(fixtures, file), relative: file, format }]).problems

const shift = (date: string, days: number) => new Date(utcMidnight(date) + days * 86_400_000).toISOString().slice(0, 10)

describe("schedule rules", () => {
  it("has a fixture for every rule of the schedule", () => {
    assert.deepStrictEqual([...cases.map((c) => c.rule)].sort(), [...ruleIds].sort())
    assert.isTrue(defaultSourceExtensions.includes(".http"))
  })

  for (const c of cases) {
    const rule = getRule(c.rule as never)
    const first = rule.milestones[0]!.date
    const last = rule.milestones[rule.milestones.length - 1]!.date

    describe(c.rule, () => {
      it(`points at ${c.file}:${c.at}`, () => {
        const problems = lintFixture(c.file, c.format, shift(last, 1))
        assert.deepStrictEqual(problems.map((p) => `${p.line}:${p.column} ${p.ruleId}`), [`${c.at} ${c.rule}`])
      })

      it("is a note 30 days before its first date and silent 31 days before", () => {
        assert.deepStrictEqual(lintFixture(c.file, c.format, shift(first, -30)).map((p) => p.level), ["note"])
        assert.deepStrictEqual(lintFixture(c.file, c.format, shift(first, -31)), [])
      })

      it("follows the schedule the day before, on and the day after each date", () => {
        for (const m of rule.milestones) {
          for (const date of [shift(m.date, -1), m.date, shift(m.date, 1)]) {
            const expected = classify(rule, utcMidnight(date)).status
            const level = expected === "removed" ? "error" : expected === "deprecated" ? "warning" : "note"
            const problems = lintFixture(c.file, c.format, date, 3650)
            assert.deepStrictEqual(problems.map((p) => p.level), [level], `${c.rule} as of ${date}`)
            assert.strictEqual(problems[0]!.status, expected)
          }
        }
        // On the date itself the new status holds from 00:00 UTC.
        const on = lintFixture(c.file, c.format, last, 3650)
        assert.strictEqual(on[0]!.status, rule.milestones[rule.milestones.length - 1]!.status)
        assert.strictEqual(on[0]!.date, last)
      })
    })
  }
})
