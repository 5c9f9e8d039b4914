// Dispatch through the Twilio adapter (issue 14, "Done when"): two svc-scheduler processes dial a batch through the
// real adapter and the official SDK against a local Twilio double (this process), paced at SVC_CARRIER_CPS=50 by the
// shared pacer, with the calls' signed status callbacks applied by a real svc-server. Beside it, in alternating
// rounds of the same run: the same two workers with the simulated adapter (no pacing, zero latency).
//
// Reported per adapter, medians over rounds: the achieved creation rate over the batch (first to last create at the
// double; goal: within 5 % of 50/s), the busiest second, and the workers' CPU time per call (the scheduler's
// overhead per call, from /proc), plus the server's CPU per call for the Twilio callbacks.
//
//   npm run bench:twilio   (BENCH_TASKS=1000 BENCH_ROUNDS=5 by default; BENCH_NODE_FLAGS="--cpu-prof
//   --cpu-prof-dir=DIR" profiles the workers and the server, tools/bench/cpuProfileSummary.ts reads the profiles)
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import * as Database from "@svc/store/db/Database.ts"
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import { Effect, Exit, Layer, ManagedRuntime, Redacted, Schema, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { TwilioDouble } from "../../apps/scheduler/test/fixtures/TwilioDouble.ts"

const root = path.resolve(import.meta.dirname, "..", "..")
const TASKS = Number(process.env["BENCH_TASKS"] ?? 1_000)
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 5)
const CPS = 50
const ACCOUNT = "AC" + "be7c4000".repeat(4)
const TOKEN = "bench-auth-token"
const FROM = "+14155550100"
const say = (s: string) => process.stderr.write(`[bench] ${new Date().toISOString()} ${s}\n`)

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

/** CPU time (ms) a process has used so far, from /proc; 0 once it has ended. */
const cpuMs = (pid: number | undefined): number => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return 0
  }
}

const spawnNode = (main: string, env: Record<string, string>, ready: string) =>
  new Promise<ChildProcess>((resolve, reject) => {
    // BENCH_NODE_FLAGS: extra Node flags for the workers and the server (diagnostics: --cpu-prof)
    const flags = (process.env["BENCH_NODE_FLAGS"] ?? "").split(" ").filter((f) => f !== "")
    const child = spawn(process.execPath, [...flags, path.join(root, main)], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: "Info", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    const watch = (chunk: Buffer) => {
      if (output.includes(ready)) return
      output += chunk.toString()
      if (output.includes(ready)) resolve(child)
    }
    child.stdout?.on("data", watch)
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.once("exit", (code) => reject(new Error(`${main} exited (${code}): ${output.slice(-2000)}`)))
  })

const stop = (children: ReadonlyArray<ChildProcess>) =>
  Promise.all(children.map((c) =>
    new Promise<void>((resolve) => {
      c.removeAllListeners("exit")
      c.once("exit", () => resolve())
      c.kill("SIGTERM")
    })
  ))

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const scope = Scope.makeUnsafe()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-twilio-"))
fs.chmodSync(dataDir, 0o755)
const children: Array<ChildProcess> = []
try {
  const database = await Effect.runPromise(Scope.provide(EmbeddedPostgres.start({ dataDir }), scope))
  const url = Redacted.value(database.url)
  const runtime = ManagedRuntime.make(
    BatchCallsRepo.layer.pipe(Layer.provideMerge(Database.layerFromUrl(database.url, { maxConnections: 4 })))
  )
  const run = <A, E>(effect: Effect.Effect<A, E, BatchCallsRepo | SqlClient.SqlClient>) => runtime.runPromise(effect)

  const double = await Effect.runPromise(Scope.provide(TwilioDouble.make(ACCOUNT, TOKEN), scope))
  // a short call: created, ringing, answered, completed within 120 ms
  double.script = () => [
    { status: "initiated", afterMs: 10 },
    { status: "ringing", afterMs: 30 },
    { status: "in-progress", afterMs: 30, answeredBy: "human" },
    { status: "completed", afterMs: 50, answeredBy: "human" }
  ]
  const port = await freePort()
  const publicUrl = `http://127.0.0.1:${port}`
  const server = await spawnNode("apps/server/src/main.ts", {
    DATABASE_URL: url,
    PORT: String(port),
    TWILIO_AUTH_TOKEN: TOKEN,
    SVC_PUBLIC_URL: publicUrl
  }, "svc-server listening")
  children.push(server)

  let serial = 0
  const seed = (tasks = TASKS) =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const orgId = OrgId.make(`org_bench_twilio_${++serial}`)
      yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
                 VALUES (${orgId}, 'bench', 500, 0)`
      yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, ${FROM}, 0)`
      const repo = yield* BatchCallsRepo
      const batch = yield* repo.create(
        orgId,
        `bench_${serial}`,
        Schema.decodeUnknownSync(CreateBatchCallRequest)({
          from_number: FROM,
          tasks: Array.from({ length: tasks }, (_, i) => ({
            to_number: `+4420${String(serial % 100).padStart(2, "0")}${String(i).padStart(6, "0")}`
          }))
        }),
        { maxTasks: tasks, legalGrouper: () => new LegalGrouper() }
      ).pipe(Effect.orDie)
      return batch.batch_call_id
    }))
  const finished = (batchCallId: string) =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ status: string }>`SELECT status FROM batch_calls WHERE batch_call_id = ${batchCallId}`
      return row?.status === "completed"
    }))

  const workerEnv = (adapter: "twilio" | "simulated", index: number): Record<string, string> => ({
    DATABASE_URL: url,
    SVC_DB_MAX_CONNECTIONS: "6",
    SCHEDULER_WORKER_ID: `bench-${adapter}-${index}`,
    SCHEDULER_BACKFILL_CRON: "off",
    ...(adapter === "twilio"
      ? {
        SVC_DIALER: "twilio",
        TWILIO_ACCOUNT_SID: ACCOUNT,
        TWILIO_AUTH_TOKEN: TOKEN,
        SVC_PUBLIC_URL: publicUrl,
        SVC_AGENT_SIP_SERVER: "agents.example.com:5060",
        SVC_TWILIO_API_URL: double.baseUrl,
        SVC_CARRIER_CPS: String(CPS)
      }
      : { SIMULATED_DIALER_STORE: "memory", SIMULATED_DIALER_LATENCY_MS: "0" })
  })

  interface Round {
    readonly rate: number
    readonly busiest: number
    readonly workerCpuPerCall: number
    readonly serverCpuPerCall: number
    readonly seconds: number
  }
  const results: Record<"twilio" | "simulated", Array<Round>> = { twilio: [], simulated: [] }

  const measure = async (adapter: "twilio" | "simulated") => {
    const workers = [
      await spawnNode("apps/scheduler/src/main.ts", workerEnv(adapter, 0), "svc-scheduler started"),
      await spawnNode("apps/scheduler/src/main.ts", workerEnv(adapter, 1), "svc-scheduler started")
    ]
    children.push(...workers)
    // a warm-up batch through the same processes first: modules the SDK loads on first use, JIT, pools (a
    // long-running worker is past them)
    const warmUp = await seed(100)
    while (!(await finished(warmUp))) await new Promise((resolve) => setTimeout(resolve, 50))
    await new Promise((resolve) => setTimeout(resolve, 500))
    const before = double.calls.size
    const cpuBefore = workers.map((w) => cpuMs(w.pid))
    const serverBefore = cpuMs(server.pid)
    const started = performance.now()
    const batch = await seed()
    while (!(await finished(batch))) await new Promise((resolve) => setTimeout(resolve, 50))
    const seconds = (performance.now() - started) / 1000
    const workerCpu = workers.reduce((sum, w, i) => sum + cpuMs(w.pid) - cpuBefore[i]!, 0)
    const serverCpu = cpuMs(server.pid) - serverBefore
    await stop(workers)
    children.splice(children.indexOf(workers[0]!), 2)
    let rate = TASKS / seconds
    let busiest = 0
    if (adapter === "twilio") {
      const created = [...double.calls.values()].slice(before).map((c) => c.dateCreated).sort((a, b) => a - b)
      if (created.length !== TASKS) throw new Error(`expected ${TASKS} calls at the double, found ${created.length}`)
      rate = (created.length - 1) / ((created.at(-1)! - created[0]!) / 1000)
      for (let i = 0, j = 0; i < created.length; i++) {
        while (created[i]! - created[j]! >= 1_000) j++
        busiest = Math.max(busiest, i - j + 1)
      }
    }
    const round: Round = {
      rate,
      busiest,
      workerCpuPerCall: workerCpu / TASKS,
      serverCpuPerCall: serverCpu / TASKS,
      seconds
    }
    results[adapter].push(round)
    say(`${adapter}: ${rate.toFixed(2)} calls/s, ${round.workerCpuPerCall.toFixed(2)} ms worker CPU per call`)
  }

  for (let round = 0; round < ROUNDS; round++) {
    say(`round ${round + 1} of ${ROUNDS}`)
    const order = round % 2 === 0 ? ["twilio", "simulated"] as const : ["simulated", "twilio"] as const
    for (const adapter of order) await measure(adapter)
  }
  const cell = (adapter: "twilio" | "simulated", pick: (r: Round) => number, digits = 2) =>
    median(results[adapter].map(pick)).toFixed(digits)
  const twilioCpu = median(results.twilio.map((r) => r.workerCpuPerCall))
  const simulatedCpu = median(results.simulated.map((r) => r.workerCpuPerCall))
  process.stdout.write(
    `Dispatch through the Twilio adapter, ${TASKS.toLocaleString()} tasks a batch, 2 worker processes, ` +
      `SVC_CARRIER_CPS=${CPS} (PostgreSQL pacer); medians of ${ROUNDS} alternating rounds; ${os.cpus().length} cores, ` +
      `load ${os.loadavg()[0]?.toFixed(1)}\n\n` +
      "| adapter | calls/s | busiest second | worker CPU ms per call | server CPU ms per call | batch s |\n" +
      "|---|---:|---:|---:|---:|---:|\n" +
      `| Twilio (double, paced at ${CPS}/s) | ${cell("twilio", (r) => r.rate)} | ${
        cell("twilio", (r) => r.busiest, 0)
      } | ${cell("twilio", (r) => r.workerCpuPerCall)} | ${cell("twilio", (r) => r.serverCpuPerCall)} | ${
        cell("twilio", (r) => r.seconds, 1)
      } |\n` +
      `| simulated (zero latency, unpaced) | ${cell("simulated", (r) => r.rate)} | - | ${
        cell("simulated", (r) => r.workerCpuPerCall)
      } | ${cell("simulated", (r) => r.serverCpuPerCall)} | ${cell("simulated", (r) => r.seconds, 1)} |\n\n` +
      `Achieved rate vs ${CPS}/s: ${
        (median(results.twilio.map((r) => r.rate)) / CPS).toFixed(3)
      }x (goal within 5 %); ` +
      `worker CPU per call, Twilio vs simulated: ${(twilioCpu / simulatedCpu).toFixed(2)}x.\n`
  )
  await runtime.dispose()
} finally {
  await stop(children)
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
}
