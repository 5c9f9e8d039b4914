// How long a batch takes to finish after its worker is killed with SIGKILL and started again (issue 16, item 8),
// broken down by phase, beside the same batch dialled without a crash in the same run:
//
//   restart     SIGKILL -> the new process logs "svc-scheduler started"
//   lease wait  -> the dead worker's last lease has expired (its tasks are `unknown`: no task `dialling` under it)
//   reconcile   -> no task of the batch is `unknown` (the dialer was asked about each)
//   drain       -> the batch is `completed`
//
// The crash is measured twice: with the default worker ids (a restarted worker on the same machine sees that its
// predecessor's process is gone and releases its calls at once: WorkerIdentity, decision 0402) and with configured
// ids (`SCHEDULER_WORKER_ID`, as in containers or on other machines: the dead worker's leases must run out first).
// All runs use `svc-scheduler` processes (apps/scheduler/src/main.ts) with the simulated carrier's records in
// PostgreSQL, as the crash test does; every task's key must reach the carrier exactly once (checked every round).
//
//   node tools/bench/crashDrain.bench.ts [--rounds=3] [--tasks=2000] [--concurrency=50] [--latency=500]
//     [--kill-after=1000] [--lease=30000] [--poll=1000] [--recheck=5000]
//
// `--kill-after`: tasks finished before the kill. Runs on DATABASE_URL when set, else on an embedded PostgreSQL in a
// temporary directory. Prints a Markdown table of medians.
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import * as Database from "@svc/store/db/Database.ts"
import { Effect, Layer, ManagedRuntime, Redacted, References, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { argument, benchDatabase, median } from "./support/BenchSupport.ts"

const rounds = argument("rounds", 3)
const taskCount = argument("tasks", 2_000)
const concurrency = argument("concurrency", 50)
const latencyMs = argument("latency", 500)
const killAfter = argument("kill-after", Math.floor(taskCount / 2))
const leaseMs = argument("lease", 30_000)
const pollMs = argument("poll", 1_000)
const recheckMs = argument("recheck", 5_000)
const root = path.resolve(import.meta.dirname, "..", "..")
const main = path.join(root, "apps/scheduler/src/main.ts")
const FROM = "+14155550100"

const database = await benchDatabase("crash-drain")
const runtime = ManagedRuntime.make(
  BatchCallsRepo.layer.pipe(
    Layer.provideMerge(Database.layerFromUrl(database.url, { maxConnections: 4 })),
    Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "Warn"))
  )
)
const run = <A, E>(effect: Effect.Effect<A, E, BatchCallsRepo | SqlClient.SqlClient>) => runtime.runPromise(effect)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let serial = 0

/** A fresh org of `concurrency` lines and a batch of `taskCount` tasks to numbers no other batch uses. */
const seedBatch = () =>
  run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const orgId = OrgId.make(`org_crash_drain_${process.pid}_${++serial}`)
    yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
               VALUES (${orgId}, 'crash drain', ${concurrency}, 0)`
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, ${FROM}, 0)`
    const request = Schema.decodeUnknownSync(CreateBatchCallRequest)({
      from_number: FROM,
      tasks: Array.from({ length: taskCount }, (_, i) => ({
        // not NANP: NANP numbers wait for their legal hours (decision 0623), which would make the figures depend on
        // the time of day the bench runs at
        to_number: `+44${String(100 + serial % 900)}${String(i).padStart(7, "0")}`
      }))
    })
    const repo = yield* BatchCallsRepo
    const batch = yield* repo.create(orgId, "bench_key", request, {
      maxTasks: taskCount,
      legalGrouper: () => new LegalGrouper()
    }).pipe(Effect.orDie)
    return batch.batch_call_id
  }))

interface Sample {
  readonly done: number
  readonly unknown: number
  /** Tasks `dialling` under the given lease owner. */
  readonly heldBy: number
  readonly status: string
}

const sample = (batchCallId: string, owner: string) =>
  run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<Sample>`
      SELECT
        (SELECT count(*)::int4 FROM batch_call_tasks
          WHERE batch_call_id = ${batchCallId} AND state IN ('completed', 'failed')) AS done,
        (SELECT count(*)::int4 FROM batch_call_tasks
          WHERE batch_call_id = ${batchCallId} AND state = 'unknown') AS unknown,
        (SELECT count(*)::int4 FROM batch_call_tasks
          WHERE batch_call_id = ${batchCallId} AND state = 'dialling' AND lease_owner = ${owner}) AS "heldBy",
        (SELECT status FROM batch_calls WHERE batch_call_id = ${batchCallId}) AS status`
    return row!
  }))

/** Dial requests per key of the batch: every task once, none twice. */
const checkExactlyOnce = (batchCallId: string) =>
  run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ attempts: number; keys: number }>`
      SELECT count(*)::int4 AS attempts, count(DISTINCT a.idempotency_key)::int4 AS keys
      FROM simulated_dialer_attempts a
      WHERE a.idempotency_key IN (SELECT task_id::text FROM batch_call_tasks WHERE batch_call_id = ${batchCallId})`
    if (row!.attempts !== taskCount || row!.keys !== taskCount) {
      throw new Error(`exactly once broken: ${row!.attempts} dial requests for ${row!.keys} of ${taskCount} keys`)
    }
  }))

interface Worker {
  readonly child: ChildProcess
  /** When it logged that it started (performance.now()), and its worker id. */
  readonly started: Promise<{ readonly at: number; readonly id: string }>
  readonly exited: Promise<void>
}

type Ids = "default" | "configured"

/** A worker process, with a configured id or the default one (read from its start-up line). */
const startWorker = (name: string, ids: Ids): Worker => {
  const { SCHEDULER_WORKER_ID: _, ...inherited } = process.env
  const configured = ids === "configured"
    ? { SCHEDULER_WORKER_ID: `${name}-${Math.random().toString(36).slice(2, 8)}` }
    : {}
  const child = spawn(process.execPath, [main], {
    cwd: root,
    env: {
      ...inherited,
      DATABASE_URL: Redacted.value(database.url),
      LOG_LEVEL: "Info",
      SVC_DB_MAX_CONNECTIONS: "5",
      ...configured,
      SCHEDULER_LEASE_MS: String(leaseMs),
      SCHEDULER_POLL_MS: String(pollMs),
      SCHEDULER_RECONCILE_RECHECK_MS: String(recheckMs),
      SCHEDULER_BACKFILL_CRON: "off",
      SIMULATED_DIALER_STORE: "sql",
      SIMULATED_DIALER_SEED: "42",
      SIMULATED_DIALER_LATENCY_MS: String(latencyMs)
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  const started = new Promise<{ at: number; id: string }>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString()
      const line = output.split("\n").find((l) => l.includes("svc-scheduler started"))
      if (line !== undefined) {
        resolve({
          at: performance.now(),
          id: (JSON.parse(line) as { annotations: { worker: string } }).annotations.worker
        })
      }
      if (output.length > 100_000) output = output.slice(-10_000)
    })
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.once("exit", (code) => reject(new Error(`worker ${name} exited (${code}) before it started:\n${output}`)))
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  return { child, started, exited }
}

const stop = async (worker: Worker) => {
  worker.child.kill("SIGTERM")
  await worker.exited
}

/** Polls every 50 ms until `done` says so; returns when (performance.now()). */
const until = async (batchCallId: string, owner: string, done: (s: Sample) => boolean, limitMs = 600_000) => {
  const deadline = performance.now() + limitMs
  for (;;) {
    const s = await sample(batchCallId, owner)
    if (done(s)) return { at: performance.now(), sample: s }
    if (performance.now() > deadline) throw new Error(`timed out waiting (${JSON.stringify(s)})`)
    await sleep(50)
  }
}

/** The batch dialled by one worker that is never interrupted: seconds from creation to completed. */
const uninterrupted = async () => {
  const worker = startWorker("drain-baseline", "default")
  const { id } = await worker.started
  const batch = await seedBatch()
  const created = performance.now()
  const { at } = await until(batch, id, (s) => s.status === "completed")
  await stop(worker)
  await checkExactlyOnce(batch)
  return (at - created) / 1000
}

/** The batch's worker killed with SIGKILL after `killAfter` tasks and started again at once. */
const crashed = async (ids: Ids) => {
  const first = startWorker("drain-victim", ids)
  const { id } = await first.started
  const batch = await seedBatch()
  const created = performance.now()
  const before = await until(batch, id, (s) => s.done >= killAfter)
  first.child.kill("SIGKILL")
  const killed = performance.now()
  await first.exited
  const atKill = await sample(batch, id)
  const second = startWorker("drain-successor", ids)
  const ready = (await second.started).at
  const leases = await until(batch, id, (s) => s.heldBy === 0)
  const reconciled = await until(batch, id, (s) => s.unknown === 0)
  const completed = await until(batch, id, (s) => s.status === "completed")
  await stop(second)
  await checkExactlyOnce(batch)
  const s = (ms: number) => ms / 1000
  return {
    beforeKill: s(before.at - created),
    heldAtKill: atKill.heldBy,
    remainingAtKill: taskCount - atKill.done,
    restart: s(ready - killed),
    leaseWait: s(Math.max(ready, leases.at) - ready),
    reconcile: s(Math.max(leases.at, reconciled.at) - Math.max(ready, leases.at)),
    drain: s(completed.at - Math.max(ready, leases.at, reconciled.at)),
    afterKill: s(completed.at - killed)
  }
}

type Crash = Awaited<ReturnType<typeof crashed>>

try {
  const baseline: Array<number> = []
  const crashes: Record<Ids, Array<Crash>> = { default: [], configured: [] }
  const rounded = (c: Crash) =>
    JSON.stringify(Object.fromEntries(Object.entries(c).map(([k, v]) => [k, Math.round(v * 10) / 10])))
  for (let round = 1; round <= rounds; round++) {
    baseline.push(await uninterrupted())
    for (const ids of ["default", "configured"] as const) crashes[ids].push(await crashed(ids))
    process.stdout.write(
      `round ${round}: uninterrupted ${baseline[round - 1]!.toFixed(1)} s; crash, default ids: ${
        rounded(crashes.default[round - 1]!)
      }; crash, configured ids: ${rounded(crashes.configured[round - 1]!)}\n`
    )
  }
  const m = (pick: (c: Crash) => number) => (ids: Ids) => median(crashes[ids].map(pick))
  const row = (label: string, pick: (c: Crash) => number, digits = 1) =>
    `| ${label.padEnd(48)} | ${m(pick)("default").toFixed(digits)} | ${m(pick)("configured").toFixed(digits)} |`
  const dialling = median(baseline)
  process.stdout.write(`
${taskCount} tasks, concurrency ${concurrency}, ${latencyMs} ms calls, SIGKILL after ${killAfter} finished; lease ${
    leaseMs / 1000
  } s, poll ${pollMs} ms, recheck ${recheckMs} ms; medians of ${rounds} rounds. The whole batch uninterrupted (same
run): ${dialling.toFixed(1)} s; the dialling left at the kill, at that rate: ${
    (dialling * m((c) => c.remainingAtKill)("default") / taskCount).toFixed(1)
  } s.

| seconds                                          | default ids (dead worker released) | configured ids (lease runs out) |
| ------------------------------------------------ | ---------------------------------- | ------------------------------- |
${row("SIGKILL to completed", (c) => c.afterKill)}
${row("- restart (to \"svc-scheduler started\")", (c) => c.restart)}
${row("- lease wait (dead worker's tasks held)", (c) => c.leaseWait)}
${row("- reconcile (until no task unknown)", (c) => c.reconcile)}
${row("- drain (until completed)", (c) => c.drain)}
${row("tasks held by the dead worker at the kill", (c) => c.heldAtKill, 0)}
`)
} finally {
  await runtime.dispose()
  await database.close()
}
