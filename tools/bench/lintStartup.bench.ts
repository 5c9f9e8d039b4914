// svc-lint start-up for one small file (issue 6 goal: under 0.3 s), each form of the bin beside a
// bare `node -e 0` in the same run, interleaved round by round so background load hits all alike.
//
//   node tools/bench/lintStartup.bench.ts [--rounds=21]
//
// Needs `npm run build -w @svc/lint` first (the bundle and the snapshot). Prints a Markdown table of
// medians (min-max).
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { argument, median } from "./support/BenchSupport.ts"

const root = path.resolve(import.meta.dirname, "..", "..")
const bin = path.join(root, "apps", "lint", "bin", "svc-lint.mjs")
const rounds = argument("rounds", 21)

const work = fs.mkdtempSync(path.join(os.tmpdir(), "svc-lint-startup-"))
fs.writeFileSync(path.join(work, "small.json"), "{\"agent_id\": \"a\", \"language\": \"multi\"}\n")

const forms: ReadonlyArray<{ name: string; args: ReadonlyArray<string>; env?: Record<string, string> }> = [
  { name: "`node -e 0` (baseline)", args: ["-e", "0"] },
  { name: "bin → snapshot (default)", args: [bin, "small.json"] },
  { name: "bin → bundle (`SVC_LINT_NO_SNAPSHOT=1`)", args: [bin, "small.json"], env: { SVC_LINT_NO_SNAPSHOT: "1" } },
  {
    name: "snapshot without the bin",
    args: ["--snapshot-blob", path.join(root, "apps/lint/dist/svc-lint.blob"), "small.json"]
  }
]

const times = new Map<string, Array<number>>()
const once = (form: (typeof forms)[number]) => {
  const started = performance.now()
  const result = spawnSync(process.execPath, form.args, {
    cwd: work,
    stdio: "ignore",
    env: { ...process.env, ...form.env }
  })
  const ms = performance.now() - started
  // the small file has one removed feature: exit 1 is the linter working
  if (form.args[0] !== "-e" && result.status !== 1) throw new Error(`${form.name} exited ${result.status}`)
  return ms
}
for (const form of forms) once(form) // warm: compile cache, page cache
const loadBefore = os.loadavg()[0]!
for (let round = 0; round < rounds; round++) {
  for (const form of forms) {
    const list = times.get(form.name) ?? []
    list.push(once(form))
    times.set(form.name, list)
  }
}
fs.rmSync(work, { recursive: true, force: true })

const lines = [
  `svc-lint start-up, one small file, Node ${process.version}, ${rounds} rounds, 1-minute load ${
    loadBefore.toFixed(1)
  } before, ${os.loadavg()[0]!.toFixed(1)} after`,
  "",
  "| form | median | min-max | goal < 300 ms |",
  "|---|---:|---:|---|"
]
for (const form of forms) {
  const list = times.get(form.name)!
  const m = median(list)
  lines.push(
    `| ${form.name} | ${m.toFixed(0)} ms | ${Math.min(...list).toFixed(0)}-${Math.max(...list).toFixed(0)} ms | ${
      form.args[0] === "-e" ? "-" : m < 300 ? "met" : "**missed**"
    } |`
  )
}
process.stdout.write(lines.join("\n") + "\n")
