// svc-test start-up (decision 0705): each form of the program beside a bare `node -e 0` in the same run, interleaved
// round by round so background load hits all alike, on two command lines:
// - `svc-test` with no files: a usage error (exit 2) after the whole program has loaded, so start-up alone;
// - one test of one turn against the reference custom-LLM server (examples/custom-llm), the smallest CI run.
//
//   node tools/bench/testStartup.bench.ts [--rounds=21]
//
// Needs `npm run build -w @svc/lint` first (the bundle). Prints Markdown tables of medians (min-max) and each form's
// ratio to the sources as the bin ran them before the bundle (no compile cache).
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { argument, median } from "./support/BenchSupport.ts"

const root = path.resolve(import.meta.dirname, "..", "..")
const bin = path.join(root, "apps", "lint", "bin", "svc-test.mjs")
const bundle = path.join(root, "apps", "lint", "dist", "svc-test.mjs")
const sources = path.join(root, "apps", "lint", "src", "svcTest", "main.ts")
const rounds = argument("rounds", 21)
if (!fs.existsSync(bundle)) throw new Error(`${bundle} is missing: run npm run build -w @svc/lint first`)

// the reference server, on a free port, for the one-test run
const agent = spawn(process.execPath, [path.join(root, "examples", "custom-llm", "server.mjs"), "--port", "0"], {
  stdio: ["ignore", "pipe", "inherit"]
})
const url = await new Promise<string>((resolve, reject) => {
  let out = ""
  agent.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString()
    const match = /listening on (ws:\/\/\S+)/.exec(out)
    if (match !== null) resolve(match[1]!)
  })
  agent.once("exit", (code) => reject(new Error(`the reference server exited (${code}): ${out}`)))
})

const work = fs.mkdtempSync(path.join(os.tmpdir(), "svc-test-startup-"))
fs.writeFileSync(
  path.join(work, "one.yaml"),
  "name: greets the caller\nuser_turns: [\"Hi\"]\nassertions:\n  - { type: contains, value: \"Acme support\", turn: 0 }\n"
)

interface Form {
  readonly name: string
  readonly program: ReadonlyArray<string>
  readonly env: Record<string, string>
}
// The bin switches V8's compile cache on (Node's default folder, as a user's runs find it; warmed by the first round
// below, like any run after the first on a machine); the other forms run without one.
const noCache = {}
const forms: ReadonlyArray<Form> = [
  { name: "`node -e 0` (baseline)", program: ["-e", "0"], env: noCache },
  { name: "sources, no compile cache (the bin before the bundle)", program: [sources], env: noCache },
  { name: "bin → sources (`SVC_TEST_NO_BUNDLE=1`)", program: [bin], env: { SVC_TEST_NO_BUNDLE: "1" } },
  { name: "bundle, no compile cache", program: [bundle], env: noCache },
  { name: "bin → bundle (default)", program: [bin], env: {} }
]
const before = forms[1]!

const commandLines: ReadonlyArray<{ name: string; args: ReadonlyArray<string>; status: number }> = [
  { name: "usage error (no files): start-up only", args: [], status: 2 },
  { name: "one one-turn test against the reference server", args: ["--url", url, "one.yaml"], status: 0 }
]

const once = (form: Form, line: (typeof commandLines)[number]) => {
  const { NODE_COMPILE_CACHE: _, ...inherited } = process.env
  const env = { ...inherited, ...form.env }
  const started = performance.now()
  const result = spawnSync(
    process.execPath,
    form.program[0] === "-e" ? form.program : [...form.program, ...line.args],
    {
      cwd: work,
      stdio: "ignore",
      env
    }
  )
  const ms = performance.now() - started
  if (form.program[0] !== "-e" && result.status !== line.status) {
    throw new Error(`${form.name} ${line.args.join(" ")} exited ${result.status}, not ${line.status}`)
  }
  return ms
}

const times = new Map<string, Array<number>>()
const key = (form: Form, line: (typeof commandLines)[number]) => `${line.name}\n${form.name}`
// warm: page cache, and the compile cache of the forms that use one
for (const line of commandLines) for (const form of forms) once(form, line)
const loadBefore = os.loadavg()[0]!
for (let round = 0; round < rounds; round++) {
  for (const line of commandLines) {
    for (const form of forms) {
      const list = times.get(key(form, line)) ?? []
      list.push(once(form, line))
      times.set(key(form, line), list)
    }
  }
}
agent.kill("SIGTERM")
fs.rmSync(work, { recursive: true, force: true })

const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).stdout.trim()
const lines = [
  `svc-test start-up, ${
    new Date().toISOString().slice(0, 10)
  }, commit ${commit}, Node ${process.version}, ${rounds} rounds, ${os.cpus().length} cores, 1-minute load ${
    loadBefore.toFixed(1)
  } before, ${os.loadavg()[0]!.toFixed(1)} after`
]
for (const line of commandLines) {
  const base = median(times.get(key(before, line))!)
  lines.push(
    "",
    `${line.name}:`,
    "",
    "| form | median | min-max | × node -e 0 | before ÷ this |",
    "|---|---:|---:|---:|---:|"
  )
  const node = median(times.get(key(forms[0]!, line))!)
  for (const form of forms) {
    const list = times.get(key(form, line))!
    const m = median(list)
    lines.push(
      `| ${form.name} | ${m.toFixed(0)} ms | ${Math.min(...list).toFixed(0)}-${Math.max(...list).toFixed(0)} ms | ${
        (m / node).toFixed(1)
      } | ${(base / m).toFixed(2)} |`
    )
  }
}
process.stdout.write(lines.join("\n") + "\n")
