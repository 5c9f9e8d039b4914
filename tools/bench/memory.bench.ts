// Issue 16, item 3: peak memory of create-batch-call. A real svc-server process on its own database gets one
// 100,000-task batch with overrides (each task with an agent_override and dynamic variables), then four at once;
// the server's RSS is sampled from /proc (VmHWM after clearing it, so each scenario's peak is its own). Goal: a
// peak under 4x the raw body size per request, and the memory released afterwards (RSS back near where it was).
//
//   node tools/bench/memory.bench.ts [--tasks=100000] [--root=/path/to/another/checkout]
//
// With --root, the same scenarios run against that checkout's server too (the baseline in the same run, e.g.
// the commit before a change); both servers use the same database server.
import { ApiKeys } from "@svc/store/ApiKeys.ts"
import * as Database from "@svc/store/Database.ts"
import * as EmbeddedPostgres from "@svc/store/EmbeddedPostgres.ts"
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { argument } from "./support/BenchSupport.ts"

const TASKS = argument("tasks", 100_000)
const here = path.resolve(import.meta.dirname, "..", "..")
const baselineRoot = process.argv.find((a) => a.startsWith("--root="))?.slice("--root=".length)

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const status = (pid: number) => {
  const text = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0)
  return { rss: kb("VmRSS") * 1024, peak: kb("VmHWM") * 1024 }
}
const clearPeak = (pid: number) => fs.writeFileSync(`/proc/${pid}/clear_refs`, "5")
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A realistic worst case: every task overrides its agent and carries dynamic variables and metadata. */
const body = (n: number, salt: string) =>
  JSON.stringify({
    from_number: "+14155550100",
    name: `memory bench ${salt}`,
    tasks: Array.from({ length: n }, (_, i) => ({
      to_number: `+1917${String(i).padStart(7, "0")}`,
      override_agent_id: "agent_a",
      override_agent_version: 1,
      agent_override: {
        agent: {
          voice_id: "11labs-Adrian",
          language: "en-US",
          responsiveness: 0.8,
          interruption_sensitivity: 0.6,
          begin_message_delay_ms: 300,
          end_call_after_silence_ms: 20_000,
          webhook_url: "https://hooks.example.com/svc/calls"
        },
        svc_llm: { begin_message: `Hello, this is Acme calling for customer ${i}.`, model_temperature: 0.2 }
      },
      svc_llm_dynamic_variables: { customer_name: `Customer ${i}`, appointment: "2026-12-01 10:00", salt },
      metadata: { crm_id: `crm-${i}`, campaign: "winter" }
    }))
  })

const scope = Scope.makeUnsafe()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-memory-"))
fs.chmodSync(dataDir, 0o755)
try {
  const server = await Effect.runPromise(Scope.provide(EmbeddedPostgres.start({ dataDir }), scope))
  const url = Redacted.value(server.url)
  const { key } = await Effect.runPromise(Effect.scoped(Effect.flatMap(
    Layer.build(ApiKeys.layer.pipe(Layer.provideMerge(Database.layerFromUrl(server.url)))),
    (context) =>
      Effect.provideContext(
        Effect.gen(function*() {
          const keys = yield* ApiKeys
          const orgId = yield* keys.createOrg("memory bench")
          yield* keys.addPhoneNumber(orgId, "+14155550100")
          yield* keys.addAgent(orgId, "agent_a", 1)
          return { key: yield* keys.createKey(orgId) }
        }),
        context
      )
  )))

  /** One scenario on a fresh server process, so each peak and each "after" is its own. */
  const scenario = async (label: string, root: string, concurrent: number, env: Record<string, string>) => {
    process.stderr.write(`[bench] ${label}, ${concurrent} at once\n`)
    const port = await freePort()
    const child = spawn(process.execPath, [path.join(root, "apps/server/src/main.ts")], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: url, PORT: String(port), LOG_LEVEL: "Warn", ...env },
      stdio: ["ignore", "ignore", "inherit"]
    })
    try {
      for (;;) {
        try {
          await fetch(`http://127.0.0.1:${port}/healthz`)
          break
        } catch {
          await sleep(100)
        }
      }
      const pid = child.pid!
      const send = async (text: string) => {
        const response = await fetch(`http://127.0.0.1:${port}/create-batch-call`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: text
        })
        const answer = await response.text()
        if (response.status !== 200) throw new Error(`${label}: ${response.status} ${answer.slice(0, 300)}`)
      }
      // warm-up: a small batch, so the JIT and the pool are in the baseline
      await send(body(1_000, `${label}-${concurrent}-warm`))
      const bodies = Array.from({ length: concurrent }, (_, i) => body(TASKS, `${label}-${concurrent}-${i}`))
      const bytes = Buffer.byteLength(bodies[0]!)
      await sleep(2_000)
      const before = status(pid).rss
      clearPeak(pid)
      const started = Date.now()
      const failures = (await Promise.allSettled(bodies.map(send))).filter((r) => r.status === "rejected")
      if (failures.length > 0) {
        return `  ${label}, ${concurrent} at once: ${failures.length} failed: ${
          String((failures[0] as PromiseRejectedResult).reason?.cause ?? (failures[0] as PromiseRejectedResult).reason)
        }`
      }
      const seconds = (Date.now() - started) / 1000
      const peak = status(pid).peak
      await sleep(10_000)
      const after = status(pid).rss
      return `  ${label}, ${concurrent} at once: body ${mb(bytes)} each; RSS ${mb(before)} -> peak ${mb(peak)} (+${
        mb(peak - before)
      }, ${((peak - before) / bytes / concurrent).toFixed(2)}x the bodies) -> ${mb(after)} 10 s later; ${
        seconds.toFixed(1)
      } s`
    } finally {
      child.kill("SIGTERM")
      await new Promise((resolve) => child.once("exit", resolve))
    }
  }

  const runAgainst = async (label: string, root: string, env: Record<string, string> = {}) => [
    await scenario(label, root, 1, env),
    await scenario(label, root, 4, env)
  ]

  const rows = await runAgainst("this checkout", here)
  if (baselineRoot !== undefined) rows.push(...await runAgainst(`baseline ${baselineRoot}`, baselineRoot))
  process.stdout.write(
    [
      `create-batch-call memory, ${TASKS} tasks with overrides (load ${
        os.loadavg().map((l) => l.toFixed(2)).join(" ")
      })`,
      ...rows,
      ""
    ].join("\n")
  )
} finally {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
}
