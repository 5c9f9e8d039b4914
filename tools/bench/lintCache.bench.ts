// svc-lint --cache (issue 17, item 3): a re-lint of 10,000 files after one changed file (goal
// <= 0.15 s), in a process of its own and through the resident linter (--daemon, decision 0642) and a cold --cache run (empty cache; goal: at most 5 % slower than a run without the
// cache), each beside the run without the cache, the lint floor (tools/bench/lintFloor.ts: read,
// parse and walk, no rules) and a bare `node -e 0`, in the same run.
//
//   npm run bench:lint-cache            (= node tools/bench/lintCache.bench.ts --rounds=7)
//
// Needs `npm run build -w @svc/lint` first (the bin runs the start-up snapshot, as users get it).
// BENCH_LINT_BEFORE_DIR=dir adds a row: the linter of another checkout (built the same way) without
// the cache, e.g. 6d953c9, the commit before --cache, to compare the cold run with the issue's "today".
// Corpus: the 10,000 config files of the end-to-end test (apps/lint/test/support/Corpus.ts). Each
// process row is one process, rows alternating within every round so background load hits all
// alike (the uncached and the cold run swap order every other round); medians (min-max) of the
// rounds. The in-process rows time the linter's own
// work for the same re-lint (discovery, cache, lint, JSON report) without the process start-up,
// which alone is ~0.2 s (docs/benchmarks.md, svc-lint start-up). Every row reports wall and CPU
// time (GNU time's user + system for processes): on a shared machine CPU time is the steadier
// figure. Before timing, the cached runs' reports are checked to be byte for byte the uncached one.
import { utcMidnight } from "@svc/domain/Deprecation/Rule.ts"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as LintCache from "../../apps/lint/src/cache/LintCache.ts"
import * as LintConfig from "../../apps/lint/src/commands/LintConfig.ts"
import { defaultSourceExtensions, discover } from "../../apps/lint/src/files/Discovery.ts"
import { json } from "../../apps/lint/src/reporters/Json.ts"
import { type LintContext, upcomingUntil } from "../../apps/lint/src/rules/Linter.ts"
import { compare } from "../../apps/lint/src/rules/Problem.ts"
import { defaultLegacySipHosts } from "../../apps/lint/src/rules/SourcePatterns.ts"
import { writeCorpus } from "../../apps/lint/test/support/Corpus.ts"
import { argument, median } from "./support/BenchSupport.ts"

const root = path.resolve(import.meta.dirname, "..", "..")
const bin = path.join(root, "apps", "lint", "bin", "svc-lint.mjs")
const floor = path.join(root, "tools", "bench", "lintFloor.ts")
const rounds = argument("rounds", 7)

if (!fs.existsSync(path.join(root, "apps", "lint", "dist", "svc-lint.blob"))) {
  process.stderr.write("no apps/lint/dist/svc-lint.blob: run `npm run build -w @svc/lint` first\n")
  process.exit(2)
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), "svc-lint-cache-bench-"))
process.stderr.write(`generating 10,000 files in ${work} ...\n`)
const manifest = writeCorpus(work, { configs: 10_000, sources: 0 })
const cacheFile = path.join(work, "cache", "svc-lint-cache")
const changed = path.join(work, "corpus", "team-05", "agents")
const changedFile = path.join(changed, fs.readdirSync(changed).sort()[0]!)
const original = fs.readFileSync(changedFile, "utf8")
let edits = 0
/**
 * Changes one file to bytes no cache has seen (trailing spaces after the document: new bytes, the
 * same problems at the same positions, so every report stays comparable with the uncached one).
 */
const changeOneFile = () => {
  edits++
  fs.writeFileSync(changedFile, `${original}${" ".repeat(edits)}`)
}
fs.writeFileSync(path.join(work, "small.json"), "{\"agent_id\": \"a\", \"language\": \"multi\"}\n")

const lintArgs = (out: string) => [bin, "--as-of", "2026-11-01", "-f", "json", "-o", `json=${out}`, "corpus"]
const cacheArgs = ["--cache", "--cache-location", cacheFile]
// The resident linter's runs keep their own cache file, so the process rows' rewrites of theirs do
// not make it re-read its file every round (the steady state of an editor or a watch loop).
const daemonCacheArgs = ["--cache", "--cache-location", path.join(work, "cache", "daemon")]

interface Row {
  readonly name: string
  readonly before?: () => void
  readonly args: ReadonlyArray<string>
  readonly status: number
}
// BENCH_LINT_BEFORE_DIR: a checkout of the linter before --cache existed (6d953c9, built), the "today" of the
// issue's cold-run goal, run beside the others in every round.
const beforeDir = process.env["BENCH_LINT_BEFORE_DIR"]
const BEFORE = "svc-lint before --cache existed (BENCH_LINT_BEFORE_DIR), no cache"
const beforeRow: ReadonlyArray<Row> = beforeDir === undefined ? [] : [{
  name: BEFORE,
  args: [
    path.join(path.resolve(beforeDir), "apps", "lint", "bin", "svc-lint.mjs"),
    ...lintArgs("out-before.json").slice(1)
  ],
  status: 1
}]
const rows: ReadonlyArray<Row> = [
  { name: "`node -e 0` (process start)", args: ["-e", "0"], status: 0 },
  { name: "svc-lint, one small file (linter start-up)", args: [bin, "--as-of", "2026-11-01", "small.json"], status: 1 },
  { name: "floor: read + parse + walk (lintFloor.ts)", args: [floor, "corpus"], status: 0 },
  { name: "svc-lint, no cache (today)", args: lintArgs("out-plain.json"), status: 1 },
  {
    name: "svc-lint --cache, cold (empty cache)",
    before: () => fs.rmSync(cacheFile, { force: true }),
    args: [...lintArgs("out-cold.json"), ...cacheArgs],
    status: 1
  },
  ...beforeRow,
  {
    name: "svc-lint --cache, one file changed",
    before: changeOneFile,
    args: [...lintArgs("out-one.json"), ...cacheArgs],
    status: 1
  },
  { name: "svc-lint --cache, nothing changed", args: [...lintArgs("out-warm.json"), ...cacheArgs], status: 1 },
  {
    name: "svc-lint --daemon --cache, one file changed",
    before: changeOneFile,
    args: [bin, "--daemon", ...lintArgs("out-daemon-one.json").slice(1), ...daemonCacheArgs],
    status: 1
  },
  {
    name: "svc-lint --daemon --cache, nothing changed",
    args: [bin, "--daemon", ...lintArgs("out-daemon-warm.json").slice(1), ...daemonCacheArgs],
    status: 1
  },
  { name: "svc-lint --daemon, no cache", args: [bin, "--daemon", ...lintArgs("out-daemon.json").slice(1)], status: 1 }
]

interface Sample {
  /** Wall time, ms. */
  readonly wall: number
  /** CPU time (user + system), ms: less sensitive than wall time to other processes on the machine. */
  readonly cpu: number
}

/** One process under GNU time: its wall and CPU time. */
const once = (row: Row): Sample => {
  row.before?.()
  const result = spawnSync("/usr/bin/time", ["-f", "%e %U %S", process.execPath, ...row.args], {
    cwd: work,
    encoding: "utf8",
    stdio: ["ignore", "ignore", "pipe"]
  })
  if (result.status !== row.status) throw new Error(`${row.name} exited ${result.status}: ${result.stderr}`)
  const [wall, user, system] = result.stderr.trim().split("\n").pop()!.split(" ").map(Number)
  if (wall === undefined || user === undefined || system === undefined || Number.isNaN(wall)) {
    throw new Error(`cannot time ${row.name}: ${result.stderr.slice(-300)}`)
  }
  return { wall: wall * 1000, cpu: (user + system) * 1000 }
}

// The linter's own work for "one file changed", in this process (modules loaded, code warm after
// the first round): discovery, run key, cache load, lint, cache save, JSON report.
const ctx: LintContext = (() => {
  const at = utcMidnight("2026-11-01")
  return {
    at,
    upcomingUntil: upcomingUntil(at, 30),
    config: LintConfig.empty(work),
    integrations: { legacySipHosts: defaultLegacySipHosts, legacyMcpHosts: [] },
    maxFileSize: 20 * 1024 * 1024,
    fileSuppressions: [],
    inlineSuppressions: true
  }
})()
const inProcessCache = path.join(work, "cache", "in-process")
const inProcess = (expected: number | null = 1): { sample: Sample; phases: Record<string, number> } => {
  changeOneFile()
  const cpuBefore = process.cpuUsage()
  const phases: Record<string, number> = {}
  const started = performance.now()
  let last = started
  const lap = (name: string) => {
    const now = performance.now()
    phases[name] = now - last
    last = now
  }
  const found = discover(["corpus"], {
    cwd: work,
    ignored: () => false,
    sourceExtensions: new Set(defaultSourceExtensions)
  })
  lap("discover")
  const state = LintCache.open(inProcessCache, work, LintCache.runKey({ cwd: work, ctx, suppressions: undefined }))
  lap("load cache")
  const run = LintCache.lintAll(ctx, found.files, state, Date.now())
  lap("lint")
  const failure = LintCache.save(state)
  if (failure !== undefined) throw new Error(failure)
  lap("save cache")
  const problems = [...run.problems].sort(compare)
  json({
    version: "0",
    asOf: "2026-11-01",
    failOn: "error",
    problems,
    files: found.files.length,
    suppressed: 0,
    baselined: 0,
    fixed: 0
  }, { color: false })
  lap("report")
  if (expected !== null && state.misses !== expected) {
    throw new Error(`in-process re-lint linted ${state.misses} files, expected ${expected} (cache: ${state.status})`)
  }
  const cpu = process.cpuUsage(cpuBefore)
  return { sample: { wall: performance.now() - started, cpu: (cpu.user + cpu.system) / 1000 }, phases }
}

// Correctness first: the cached runs report exactly what the uncached run reports.
for (const row of rows) once(row)
const plain = fs.readFileSync(path.join(work, "out-plain.json"), "utf8")
for (
  const out of [
    "out-cold.json",
    "out-one.json",
    "out-warm.json",
    "out-daemon-one.json",
    "out-daemon-warm.json",
    "out-daemon.json"
  ]
) {
  if (fs.readFileSync(path.join(work, out), "utf8") !== plain) throw new Error(`${out} differs from out-plain.json`)
}
if (JSON.parse(plain).summary.problems !== manifest.total) throw new Error("svc-lint disagrees with the manifest")
if (beforeDir !== undefined) {
  const before = JSON.parse(fs.readFileSync(path.join(work, "out-before.json"), "utf8"))
  if (before.summary.problems !== manifest.total) {
    throw new Error("the linter before --cache disagrees with the manifest")
  }
}
inProcess(null) // fills the in-process cache (a cold run)

const times = new Map<string, Array<Sample>>()
const phaseTimes = new Map<string, Array<number>>()
const record = (name: string, sample: Sample) => times.set(name, [...(times.get(name) ?? []), sample])
const loadBefore = os.loadavg()[0]!
for (let round = 0; round < rounds; round++) {
  // The uncached, the cold (and the before) runs rotate places every round, so none always runs first
  // (background load drifts within a round).
  const trio = rows.slice(3, 5 + beforeRow.length)
  const turn = round % trio.length
  const order = [...rows.slice(0, 3), ...trio.slice(turn), ...trio.slice(0, turn), ...rows.slice(5 + beforeRow.length)]
  for (const row of order) record(row.name, once(row))
  const { phases, sample } = inProcess()
  record("in-process: one file changed", sample)
  for (const [name, value] of Object.entries(phases)) phaseTimes.set(name, [...(phaseTimes.get(name) ?? []), value])
  process.stderr.write(`round ${round + 1}/${rounds} done\n`)
}
const loadAfter = os.loadavg()[0]!
spawnSync(process.execPath, [bin, "--daemon-stop"], { cwd: work, stdio: "ignore" })
fs.rmSync(work, { recursive: true, force: true })

const PLAIN = "svc-lint, no cache (today)"
const FLOOR = "floor: read + parse + walk (lintFloor.ts)"
const of = (name: string, pick: (s: Sample) => number) => times.get(name)!.map(pick)
/** The median over rounds of this row's time divided by the other row's in the same round. */
const pairedRatio = (name: string, other: string, pick: (s: Sample) => number) => {
  const mine = of(name, pick)
  const theirs = of(other, pick)
  return median(mine.map((v, i) => v / theirs[i]!))
}
const wall = (s: Sample) => s.wall
const cpu = (s: Sample) => s.cpu
const goal = (name: string): string => {
  if (name.includes("cold")) {
    const w = pairedRatio(name, PLAIN, wall)
    const c = pairedRatio(name, PLAIN, cpu)
    const against = beforeDir === undefined ?
      "" :
      `; against the linter before --cache: wall ${pairedRatio(name, BEFORE, wall).toFixed(2)}x, CPU ${
        pairedRatio(name, BEFORE, cpu).toFixed(2)
      }x`
    return `≤ 1.05x no cache: wall ${w <= 1.05 ? "met" : "**missed**"}, CPU ${
      c <= 1.05 ? "met" : "**missed**"
    }${against}`
  }
  if (name.includes("one file changed")) {
    const w = median(of(name, wall))
    return `≤ 0.15 s: ${w <= 150 ? "met" : "**missed**"}`
  }
  return ""
}
const cell = (list: ReadonlyArray<number>) =>
  `${median(list).toFixed(0)} ms (${Math.min(...list).toFixed(0)}-${Math.max(...list).toFixed(0)})`
const lines = [
  `svc-lint --cache, 10,000 files (${(manifest.bytes / 1e6).toFixed(0)} MB), Node ${process.version}, ` +
  `${os.cpus().length} CPUs, ${rounds} rounds, 1-minute load ${loadBefore.toFixed(1)} before, ${
    loadAfter.toFixed(1)
  } after`,
  "",
  "| run | wall, median (min-max) | CPU, median (min-max) | wall / no cache | CPU / no cache | wall / floor | goal |",
  "|---|---:|---:|---:|---:|---:|---|"
]
for (const name of times.keys()) {
  lines.push(
    `| ${name} | ${cell(of(name, wall))} | ${cell(of(name, cpu))} | ${pairedRatio(name, PLAIN, wall).toFixed(2)}x | ` +
      `${pairedRatio(name, PLAIN, cpu).toFixed(2)}x | ${pairedRatio(name, FLOOR, wall).toFixed(2)}x | ${goal(name)} |`
  )
}
lines.push(
  "",
  "Ratios are medians of the per-round ratios (both rows of a ratio run in the same round).",
  `In-process phases of the re-lint (medians): ${
    [...phaseTimes].map(([name, list]) => `${name} ${median(list).toFixed(0)} ms`).join(", ")
  }.`
)
process.stdout.write(`${lines.join("\n")}\n`)
