import { assert, describe, it } from "@effect/vitest"
import { github, stepSummary } from "../../src/reporters/Github.ts"
import type { Report } from "../../src/reporters/Report.ts"
import type { Level } from "../../src/rules/Level.ts"
import type { Problem } from "../../src/rules/Problem.ts"

const problem = (i: number, level: Level, message = `problem ${i}`): Problem => ({
  file: `configs/f${String(i).padStart(3, "0")}.json`,
  line: i + 1,
  column: 3,
  endLine: i + 1,
  endColumn: 9,
  ruleId: "agent-language-multi",
  level,
  message,
  fingerprint: String(i)
})

const report = (problems: Array<Problem>): Report => ({
  version: "0.0.0",
  asOf: "2026-08-01",
  failOn: "error",
  problems,
  files: problems.length,
  suppressed: 0,
  baselined: 0,
  fixed: 0
})

describe("github reporter", () => {
  it("annotates the 10 most serious problems per level and prints the rest as plain lines", () => {
    const problems = [
      ...Array.from({ length: 15 }, (_, i) => problem(i, "note")),
      ...Array.from({ length: 25 }, (_, i) => problem(100 + i, "error")),
      ...Array.from({ length: 12 }, (_, i) => problem(200 + i, "warning"))
    ]
    const lines = github(report(problems), { color: false }).trimEnd().split("\n")
    const commands = lines.filter((l) => l.startsWith("::"))
    assert.strictEqual(commands.filter((l) => l.startsWith("::error ")).length, 10)
    assert.strictEqual(commands.filter((l) => l.startsWith("::warning ")).length, 10)
    assert.strictEqual(commands.filter((l) => l.startsWith("::notice ")).length, 10)
    assert.isTrue(commands[0]!.startsWith("::error file=configs/f100.json,line=101,"))
    assert.include(lines, "22 more problems (GitHub shows 10 annotations per level):")
    assert.include(lines, "configs/f124.json:125:3: error: problem 124 [agent-language-multi]")
    assert.strictEqual(
      lines[lines.length - 1],
      "svc-lint: 52 problems (25 errors, 12 warnings, 15 notes) in 52 files as of 2026-08-01"
    )
  })

  it("escapes workflow-command data and properties", () => {
    const p = { ...problem(1, "error", "100% broken\nsecond line"), file: "a,b:c.json" }
    assert.strictEqual(
      github(report([p]), { color: false }).split("\n")[0],
      "::error file=a%2Cb%3Ac.json,line=2,col=3,endColumn=9,title=svc-lint agent-language-multi::100%25 broken%0Asecond line"
    )
  })

  it("writes every problem to the step summary, worst first, with pipes escaped", () => {
    const text = stepSummary(report([problem(1, "note", "a | b"), problem(2, "error")]))
    assert.match(text, /^### svc-lint: 1 error, 0 warnings, 1 note\n/)
    const rows = text.split("\n").filter((l) => l.startsWith("| e") || l.startsWith("| n"))
    assert.deepStrictEqual(rows, [
      "| error | configs/f002.json | 3 | agent-language-multi | problem 2 |",
      "| note | configs/f001.json | 2 | agent-language-multi | a \\| b |"
    ])
  })
})
