// Benchmark of svc-lint (issue 6) against Stoplight Spectral and a parse-and-walk floor, side by
// side in one run on the same generated files (the generator of the 10,000-file test:
// apps/lint/test/support/Corpus.ts). Standalone: `node tools/bench/lint.bench.ts` (ROUNDS=3).
//
// Workloads: 10,000 config files (mixed JSON/YAML, ~5 KB each), the 1,000-file subset of one team
// folder, one ~5 MB conversation flow as JSON, and one small file (start-up). Tools:
//   svc-lint  the bin (`--as-of 2026-11-01 -f json`), compile cache warm (one untimed run first)
//   spectral  @stoplight/spectral-cli with the six-rule ruleset of shared/reference/spectral-floor.md
//   floor     read + JSON.parse / js-yaml + one iterative walk of every value (tools/bench/lintFloor.ts)
// Each measurement is one process under GNU time (`/usr/bin/time -f "%e %M"`: wall seconds and
// peak RSS), rounds taken round-robin so every tool sees the same background load. Output: a
// Markdown table of medians (min-max), peak RSS and the Spectral/svc-lint ratio. Before timing,
// every tool's findings are checked against the generator's manifest.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { bigFlow, writeCorpus } from "../../apps/lint/test/support/Corpus.ts"

const root = path.resolve(import.meta.dirname, "..", "..")
const bin = path.join(root, "apps", "lint", "bin", "svc-lint.mjs")
const spectral = path.join(root, "node_modules", "@stoplight", "spectral-cli", "dist", "index.js")

// --- the ruleset Spectral runs (shared/reference/spectral-floor.md section 2) --------------------

const spectralRuleset = `rules:
  agent-language-multi-removed:
    message: 'language "multi" was removed on 07/31/2026'
    severity: error
    given: ["$.language", "$.agent_override.agent.language"]
    then: { function: pattern, functionOptions: { notMatch: "^multi$" } }
  phone-number-single-agent-fields-deprecated:
    message: '{{property}} is deprecated since 03/31/2026'
    severity: warn
    given: "$"
    then:
      - { field: inbound_agent_id, function: undefined }
      - { field: inbound_agent_version, function: undefined }
      - { field: outbound_agent_id, function: undefined }
      - { field: outbound_agent_version, function: undefined }
      - { field: inbound_sms_agent_id, function: undefined }
      - { field: inbound_sms_agent_version, function: undefined }
      - { field: outbound_sms_agent_id, function: undefined }
      - { field: outbound_sms_agent_version, function: undefined }
  agent-analysis-prompts-removed:
    message: '{{property}} was removed on 06/15/2026'
    severity: error
    given: "$"
    then:
      - { field: analysis_summary_prompt, function: undefined }
      - { field: analysis_successful_prompt, function: undefined }
      - { field: analysis_user_sentiment_prompt, function: undefined }
  flow-conversation-node-tools-deprecated:
    message: '{{property}} on a conversation node is deprecated since 04/18/2026'
    severity: warn
    given:
      - "$.nodes[?(@.type === 'conversation')]"
      - "$.conversation_flow_components[*].nodes[?(@.type === 'conversation')]"
    then:
      - { field: tools, function: undefined }
      - { field: tool_ids, function: undefined }
  calendar-tool-types-removed:
    message: 'tool type {{value}} is retired'
    severity: error
    given: ["$.general_tools[*].type", "$.states[*].tools[*].type", "$.tools[*].type", "$.nodes[*].tools[*].type"]
    then: { function: pattern, functionOptions: { notMatch: "^(check_availability_cal|book_appointment_cal)$" } }
  cold-transfer-mode-required:
    message: 'cold transfer sets show_transferee_as_caller but no cold_transfer_mode'
    severity: warn
    given: "$..[?(@property === 'transfer_option' && @.type === 'cold_transfer' && @.show_transferee_as_caller !== void 0)]"
    then: { field: cold_transfer_mode, function: defined }
`

// --- measurement -------------------------------------------------------------------------------

const rounds = Number(process.env["ROUNDS"] ?? 3)
const median = (xs: Array<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

interface Sample {
  readonly seconds: number
  readonly rssMb: number
  readonly status: number | null
}

const timed = (cwd: string, args: Array<string>): Sample => {
  const result = spawnSync("/usr/bin/time", ["-f", "%e %M", ...args], { cwd, encoding: "utf8", maxBuffer: 1 << 30 })
  const last = result.stderr.trim().split("\n").pop() ?? ""
  const [seconds, kb] = last.split(" ").map(Number)
  if (seconds === undefined || kb === undefined || Number.isNaN(seconds)) {
    throw new Error(`cannot time ${args.join(" ")}: ${result.stderr.slice(-500)}`)
  }
  return { seconds, rssMb: kb / 1024, status: result.status }
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), "svc-lint-bench-"))
process.stderr.write(`generating the corpus in ${work} ...\n`)
const manifest = writeCorpus(work, { configs: 10_000, sources: 0 })
fs.mkdirSync(path.join(work, "big"), { recursive: true })
const big = bigFlow(3.7, 12)
fs.writeFileSync(path.join(work, "big", "flow-5mb.json"), `${JSON.stringify(big, null, 2)}\n`)
fs.writeFileSync(path.join(work, "small.json"), "{\"agent_id\": \"a\", \"language\": \"multi\"}\n")
fs.writeFileSync(path.join(work, ".spectral.yaml"), spectralRuleset)
const bigMb = fs.statSync(path.join(work, "big", "flow-5mb.json")).size / 1e6

const workloads = [
  {
    name: `10,000 files (${(manifest.bytes / 1e6).toFixed(0)} MB)`,
    paths: ["corpus"],
    glob: "corpus/**/*.{json,yaml}"
  },
  { name: "1,000 files (one team)", paths: ["corpus/team-00"], glob: "corpus/team-00/**/*.{json,yaml}" },
  { name: `one ${bigMb.toFixed(1)} MB JSON flow`, paths: ["big/flow-5mb.json"], glob: "big/flow-5mb.json" },
  { name: "one small file (start-up)", paths: ["small.json"], glob: "small.json" }
] as const

const commands = (w: (typeof workloads)[number]) => ({
  "svc-lint": [process.execPath, bin, "--as-of", "2026-11-01", "-f", "json", "-o", "json=out-svc.json", ...w.paths],
  spectral: [
    process.execPath,
    spectral,
    "lint",
    "-q",
    "-r",
    ".spectral.yaml",
    "-f",
    "json",
    "-o",
    "out-spectral.json",
    w.glob
  ],
  floor: [process.execPath, path.join(root, "tools", "bench", "lintFloor.ts"), ...w.paths]
})

// Correctness first: both linters must find what was planted (Spectral cannot read source files).
{
  const w = workloads[0]
  const c = commands(w)
  timed(work, c["svc-lint"])
  const ours = JSON.parse(fs.readFileSync(path.join(work, "out-svc.json"), "utf8")).summary.problems
  timed(work, c.spectral)
  const theirs = JSON.parse(fs.readFileSync(path.join(work, "out-spectral.json"), "utf8")).length
  process.stderr.write(`findings on 10,000 files: planted ${manifest.total}, svc-lint ${ours}, spectral ${theirs}\n`)
  if (ours !== manifest.total || theirs !== manifest.total) throw new Error("a tool disagrees with the manifest")
}

const results = new Map<string, Map<string, Array<Sample>>>()
for (let round = 0; round < rounds; round++) {
  for (const w of workloads) {
    for (const [tool, args] of Object.entries(commands(w))) {
      const sample = timed(work, args)
      const byTool = results.get(w.name) ?? new Map<string, Array<Sample>>()
      byTool.set(tool, [...(byTool.get(tool) ?? []), sample])
      results.set(w.name, byTool)
      process.stderr.write(
        `round ${round + 1} ${w.name} ${tool}: ${sample.seconds.toFixed(2)} s ${sample.rssMb.toFixed(0)} MB\n`
      )
    }
  }
}
const noop = Array.from({ length: rounds }, () => timed(work, [process.execPath, "-e", "0"]))

const cell = (samples: Array<Sample>) => {
  const s = samples.map((x) => x.seconds)
  return `${median(s).toFixed(2)} s (${Math.min(...s).toFixed(2)}-${Math.max(...s).toFixed(2)})`
}
const rss = (samples: Array<Sample>) => `${median(samples.map((x) => x.rssMb)).toFixed(0)} MB`

const lines = [
  `| Workload | svc-lint | peak RSS | Spectral 6.16.3 | peak RSS | Spectral / svc-lint | floor (js-yaml) | peak RSS | svc-lint / floor |`,
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
]
for (const w of workloads) {
  const byTool = results.get(w.name)!
  const ours = byTool.get("svc-lint")!
  const theirs = byTool.get("spectral")!
  const fl = byTool.get("floor")!
  const m = (xs: Array<Sample>) => median(xs.map((x) => x.seconds))
  lines.push(
    `| ${w.name} | ${cell(ours)} | ${rss(ours)} | ${cell(theirs)} | ${rss(theirs)} | ${
      (m(theirs) / m(ours)).toFixed(1)
    }x | ` +
      `${cell(fl)} | ${rss(fl)} | ${(m(ours) / m(fl)).toFixed(2)}x |`
  )
}
lines.push(
  "",
  `\`node -e 0\` on the same machine: ${cell(noop)}, ${rss(noop)}. Rounds: ${rounds}, round-robin. ` +
    `Load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")} on ${os.cpus().length} CPUs.`
)
process.stdout.write(`${lines.join("\n")}\n`)
fs.rmSync(work, { recursive: true, force: true })
