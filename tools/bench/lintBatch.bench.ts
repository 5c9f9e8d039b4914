// Benchmark of svc-lint's legal-hours rules on a 100,000-task create-batch-call body (issue 15 item 5,
// docs/decisions/0627-lint-batch-window-legal-hours.md). Standalone: `node tools/bench/lintBatch.bench.ts`
// (`--rounds=5 --tasks=100000`).
//
// The file: one batch with a 09:00-10:00 America/New_York window and `--tasks` numbers drawn (seeded) from every
// NANP area code 201-989 (codes the zone data does not know get the 23-zone US/Canada set, decision 0620), 2 %
// non-NANP numbers and 0.1 % malformed ones, so the rules group, evaluate and locate findings as in a real file.
// The baseline is the same file with `from_number` renamed, which is not a batch: read + parse, no rule. Sides, each
// round in alternating order, same process (compile caches warm after one untimed pass of each):
//   json  / json-baseline   Linter.lintFile on the JSON file (read, JSON.parse, rules, positions of findings)
//   yaml  / yaml-baseline   the same as YAML (js-yaml; positions from its event stream)
//   rule                    checkBatchCall alone on the parsed document (grouping + timelines)
//   bin / bin-baseline      the svc-lint bin on the JSON file, one process each (start-up from whatever build is
//                           current: the snapshot, the bundle, else the TypeScript sources)
// Output: medians (min-max) in ms, the rule's share, and the ratio to the baseline per round.
import { dump } from "js-yaml"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as LintConfig from "../../apps/lint/src/commands/LintConfig.ts"
import { checkBatchCall } from "../../apps/lint/src/rules/BatchWindow.ts"
import { type LintContext, lintFile, upcomingUntil } from "../../apps/lint/src/rules/Linter.ts"
import { defaultLegacySipHosts } from "../../apps/lint/src/rules/SourcePatterns.ts"
import { utcMidnight } from "../../packages/domain/src/Deprecation/Rule.ts"

const arg = (name: string, fallback: number) => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`))
  return found === undefined ? fallback : Number(found.slice(name.length + 3))
}
const rounds = arg("rounds", 5)
const taskCount = arg("tasks", 100_000)
const asOf = "2026-12-01"
const root = path.resolve(import.meta.dirname, "..", "..")
const bin = path.join(root, "apps", "lint", "bin", "svc-lint.mjs")

// --- the file ---------------------------------------------------------------------------------------------------

let seed = 20261128
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
}
const digits = (n: number) => String(Math.floor(random() * 10 ** n)).padStart(n, "0")
const tasks = Array.from({ length: taskCount }, () => {
  const r = random()
  if (r < 0.001) return { to_number: `555-${digits(4)}` }
  if (r < 0.021) return { to_number: `+44${7000000000 + Math.floor(random() * 999999999)}` }
  const area = 201 + Math.floor(random() * 789)
  return { to_number: `+1${area}${2 + Math.floor(random() * 8)}${digits(6)}` }
})
const batch = {
  from_number: "+14155550123",
  name: "bench",
  call_time_window: { timezone: "America/New_York", windows: [{ start: 540, end: 600 }] },
  tasks
}
const { from_number, ...rest } = batch
const notBatch = { from: from_number, ...rest }

const work = fs.mkdtempSync(path.join(os.tmpdir(), "svc-lint-batch-bench-"))
const files = {
  json: path.join(work, "batch.json"),
  "json-baseline": path.join(work, "plain.json"),
  yaml: path.join(work, "batch.yaml"),
  "yaml-baseline": path.join(work, "plain.yaml")
} as const
fs.writeFileSync(files.json, `${JSON.stringify(batch, null, 2)}\n`)
fs.writeFileSync(files["json-baseline"], `${JSON.stringify(notBatch, null, 2)}\n`)
fs.writeFileSync(files.yaml, dump(batch))
fs.writeFileSync(files["yaml-baseline"], dump(notBatch))

const at = utcMidnight(asOf)
const ctx: LintContext = {
  at,
  upcomingUntil: upcomingUntil(at, 30),
  config: LintConfig.empty(work),
  integrations: { legacySipHosts: defaultLegacySipHosts, legacyMcpHosts: [] },
  maxFileSize: 20 * 1024 * 1024,
  fileSuppressions: [],
  inlineSuppressions: true
}
const input = (file: string) => ({
  path: file,
  relative: path.basename(file),
  format: file.endsWith(".json") ? "json" as const : "yaml" as const
})

// --- checks before timing ---------------------------------------------------------------------------------------

const outcome = lintFile(ctx, input(files.json), new Set())
const yamlOutcome = lintFile(ctx, input(files.yaml), new Set())
const byRule = (problems: ReadonlyArray<{ ruleId: string }>) => {
  const counts: Record<string, number> = {}
  for (const p of problems) counts[p.ruleId] = (counts[p.ruleId] ?? 0) + 1
  return counts
}
if (JSON.stringify(byRule(outcome.problems)) !== JSON.stringify(byRule(yamlOutcome.problems))) {
  throw new Error("JSON and YAML give different findings")
}
if (lintFile(ctx, input(files["json-baseline"]), new Set()).problems.length !== 0) {
  throw new Error("the baseline file must not be read as a batch")
}
const doc = JSON.parse(fs.readFileSync(files.json, "utf8"))

// --- measurement ------------------------------------------------------------------------------------------------

type Side = keyof typeof files | "rule" | "bin" | "bin-baseline"
const sides: ReadonlyArray<Side> = ["json", "json-baseline", "yaml", "yaml-baseline", "rule", "bin", "bin-baseline"]
const samples = new Map<Side, Array<number>>(sides.map((s) => [s, []]))
const run = (side: Side): number => {
  const start = performance.now()
  if (side === "rule") checkBatchCall(doc, at)
  else if (side === "bin" || side === "bin-baseline") {
    const file = side === "bin" ? files.json : files["json-baseline"]
    const result = spawnSync(process.execPath, [bin, "--as-of", asOf, "-f", "json", file], {
      cwd: work,
      encoding: "utf8",
      maxBuffer: 1 << 28
    })
    if (result.status !== (side === "bin" ? 1 : 0)) {
      throw new Error(`bin exit ${result.status}: ${result.stderr.slice(-500)}`)
    }
  } else lintFile(ctx, input(files[side]), new Set())
  return performance.now() - start
}
for (const side of sides) run(side) // warm-up, untimed
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? sides : [...sides].reverse()
  for (const side of order) samples.get(side)!.push(run(side))
}

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}
const ms = (x: number) => x.toFixed(x < 10 ? 2 : 0)
const row = (side: Side) => {
  const xs = samples.get(side)!
  return `${ms(median(xs))} (${ms(Math.min(...xs))}-${ms(Math.max(...xs))})`
}
const ratio = (side: Side, base: Side) => {
  const a = samples.get(side)!
  const b = samples.get(base)!
  return median(a.map((x, i) => x / b[i]!)).toFixed(2)
}
const lines = [
  `lint batch bench: ${taskCount.toLocaleString("en-US")} tasks, ${rounds} rounds, as of ${asOf}`,
  `files: JSON ${(fs.statSync(files.json).size / 1e6).toFixed(1)} MB, YAML ${
    (fs.statSync(files.yaml).size / 1e6).toFixed(1)
  } MB; ${new Set(tasks.map((t) => t.to_number.slice(0, 5))).size} area codes; findings ${
    JSON.stringify(byRule(outcome.problems))
  }`,
  "",
  "| side | median ms (min-max) | per-round ratio to baseline |",
  "| --- | --- | --- |",
  `| JSON: lintFile with the rules | ${row("json")} | ${ratio("json", "json-baseline")}x |`,
  `| JSON baseline: lintFile, not a batch | ${row("json-baseline")} | 1.00x |`,
  `| YAML: lintFile with the rules | ${row("yaml")} | ${ratio("yaml", "yaml-baseline")}x |`,
  `| YAML baseline: lintFile, not a batch | ${row("yaml-baseline")} | 1.00x |`,
  `| checkBatchCall alone (parsed JSON) | ${row("rule")} | |`,
  `| svc-lint bin on the JSON file (one process) | ${row("bin")} | ${ratio("bin", "bin-baseline")}x |`,
  `| svc-lint bin on the JSON baseline file | ${row("bin-baseline")} | 1.00x |`
]
process.stdout.write(`${lines.join("\n")}\n`)
if (process.env["KEEP"] === undefined) fs.rmSync(work, { recursive: true, force: true })
else process.stdout.write(`${work}\n`)
