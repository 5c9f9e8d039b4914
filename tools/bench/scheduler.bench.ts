// Scheduler dispatch (issue 5), with a zero-latency simulated dialer, each measurement beside a baseline in the same
// run:
//
//   1. sustained dispatch, one worker: the Dispatcher's own loop (claim under the org lock with the do_not_call
//      check, dial, record task + call + contact) against a bare claim-and-mark loop in SQL over an identical batch
//      (`FOR UPDATE SKIP LOCKED` claim of 1,000 pending rows, then mark them completed). Goals: >= 1,000 tasks/s and
//      within 2x of the bare loop's cost per task.
//   2. a 100,000-task batch at concurrency 1,000 drains in under 3 minutes (one worker).
//   3. from a window opening to the first dial, with the worker asleep until the opening: under 1 s.
//   4. one vs two `svc-scheduler` processes on the same batch size: two are not slower.
//
//   node tools/bench/scheduler.bench.ts [--rounds=3] [--tasks=20000] [--process-tasks=20000] [--warm-ups=8]
//     [--big=100000] [--skip-window]
//     [--dispatch-only | --processes-only] [--legal] [--profile]
//
//   --legal adds a third side to measurement 1 (issue 15 item 3, decision 0623): the same dispatcher on a batch whose
//   tasks all carry legal-hour constraints (NANP numbers in the zones legal when the bench starts, several legal
//   groups), beside the unconstrained batch, in rotating order each round. Goal: within 1.2x of its cost per task.
//
// Runs on DATABASE_URL when set (bench orgs are added and removed), else on an embedded PostgreSQL in a temporary
// directory. Prints a Markdown table; the exit code is 0 either way (a loaded machine is not a regression).
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { constraintOf } from "@svc/domain/compliance/LegalGroups.ts"
import { isLegalAt } from "@svc/domain/compliance/LegalHours.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import * as SimulatedDialer from "@svc/scheduler/carriers/simulated/SimulatedDialer.ts"
import { Dispatcher } from "@svc/scheduler/dispatch/Dispatcher.ts"
import * as ContactFeed from "@svc/scheduler/jobs/ContactFeed.ts"
import { DatabaseHealth } from "@svc/scheduler/runtime/DatabaseHealth.ts"
import * as SchedulerConfig from "@svc/scheduler/runtime/SchedulerConfig.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import { CallsRepo } from "@svc/store/calls/CallsRepo.ts"
import { SchedulerSimulatedCarrier } from "@svc/store/carriers/simulated/SchedulerSimulatedCarrier.ts"
import * as Database from "@svc/store/db/Database.ts"
import { DispatchRepo } from "@svc/store/dispatch/DispatchRepo.ts"
import { Effect, Fiber, Layer, ManagedRuntime, Redacted, References, Schema, type Scope } from "effect"
import { SqlClient } from "effect/sql"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as inspector from "node:inspector/promises"
import * as os from "node:os"
import * as path from "node:path"
import { argument, benchDatabase, median } from "./support/BenchSupport.ts"

const rounds = argument("rounds", 3)
const taskCount = argument("tasks", 20_000)
// the batch size of measurement 4 (one vs two processes); a 20,000-task batch lasts under a second, where each
// process's per-batch costs weigh more than in a long one (docs/benchmarks.md)
const processTaskCount = argument("process-tasks", taskCount)
const bigCount = argument("big", 100_000)
// full-size batches each set of worker processes runs before the measured one. Eight: a fresh Node process spends
// more CPU per task until it has run about that many (JIT tiers, heap sizing); with two, two processes measured
// 11 vs 17 µs of worker CPU a task and 0.84x the throughput, with eight 12-14 vs 12-13 µs and 1.03x-1.14x
// (docs/benchmarks.md). A long-running deployment's workers are past it
const warmUps = argument("warm-ups", 8)
const skipWindow = process.argv.includes("--skip-window")
// --dispatch-only: only measurement 1 (for quick comparisons while changing the dispatcher)
const dispatchOnly = process.argv.includes("--dispatch-only")
// --processes-only: only measurement 4 (for quick comparisons of one and two worker processes)
const processesOnly = process.argv.includes("--processes-only")
const withLegal = process.argv.includes("--legal")
const CONCURRENCY = 1_000
const root = path.resolve(import.meta.dirname, "..", "..")

// ---------------------------------------------------------------------------------------------------------------
// Database: DATABASE_URL, or an embedded server of our own
// ---------------------------------------------------------------------------------------------------------------

// --profile (with --dispatch-only): where PostgreSQL's time goes. pg_stat_statements tracks every statement, those
// run inside the claim function and the triggers included (track = all), and prints the top ones per dispatched task
// after the rounds. Needs the bench's own embedded server (the library is loaded at server start).
const profile = process.argv.includes("--profile")
// BENCH_PG_SLOW_MS=n (diagnostics): every statement slower than n ms, nested ones included, is logged with its plan
// (auto_explain, with its generic or custom plan and buffers) to the bench server's log directory, printed at the end
const slowMs = process.env["BENCH_PG_SLOW_MS"]
const slowLogDir = slowMs === undefined ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-pglog-"))
// the server runs as its own user (embedded PostgreSQL refuses root): the log directory must be writable to it
if (slowLogDir !== undefined) fs.chmodSync(slowLogDir, 0o777)
const database = await benchDatabase("scheduler", {
  settings: {
    ...(profile
      ? {
        shared_preload_libraries: "'pg_stat_statements'",
        "pg_stat_statements.track": "all",
        track_functions: "'all'"
      }
      : {}),
    ...(slowLogDir === undefined ? {} : {
      session_preload_libraries: "'auto_explain'",
      "auto_explain.log_min_duration": `${Number(slowMs)}`,
      "auto_explain.log_nested_statements": "on",
      "auto_explain.log_analyze": "on",
      "auto_explain.log_buffers": "on",
      "auto_explain.log_timing": "off",
      logging_collector: "on",
      log_directory: `'${slowLogDir}'`,
      log_lock_waits: "on"
    })
  }
})
const { dataDir, url } = database

/** A process's parent and CPU time (ms) so far, from /proc/PID/stat; undefined once it has ended. */
const procStat = (pid: number): { pid: number; parent: number; cpuMs: number } | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // utime + stime, in clock ticks of 10 ms (USER_HZ = 100 on Linux)
    return { pid, parent: Number(fields[1]), cpuMs: (Number(fields[11]) + Number(fields[12])) * 10 }
  } catch {
    return undefined
  }
}

/**
 * CPU time (ms) used so far by this process and by the PostgreSQL server's processes: with other work on the
 * machine, CPU per task varies far less than wall time per task. Zero for PostgreSQL when it is not ours to see.
 */
const cpuNow = (): { node: number; postgres: number } => {
  const usage = process.cpuUsage()
  let postgres = 0
  if (dataDir !== undefined) {
    try {
      const postmaster = Number(fs.readFileSync(path.join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0])
      for (const entry of fs.readdirSync("/proc")) {
        if (!/^\d+$/.test(entry)) continue
        const stat = procStat(Number(entry))
        if (stat !== undefined && (stat.pid === postmaster || stat.parent === postmaster)) postgres += stat.cpuMs
      }
    } catch {
      // no pid file: leave PostgreSQL out
    }
  }
  return { node: (usage.user + usage.system) / 1000, postgres }
}

/** CPU time (ms) a process has used so far, from /proc; 0 once it has ended. */
const processCpu = (pid: number | undefined): number => (pid === undefined ? undefined : procStat(pid))?.cpuMs ?? 0
const cpuSince = (before: { node: number; postgres: number }) => {
  const after = cpuNow()
  return { node: after.node - before.node, postgres: after.postgres - before.postgres }
}

const runtime = ManagedRuntime.make(
  Layer.mergeAll(BatchCallsRepo.layer, DispatchRepo.layer, CallsRepo.layer).pipe(
    Layer.provideMerge(Database.layerFromUrl(url, { maxConnections: 8 })),
    Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, process.env["BENCH_DEBUG"] ? "Debug" : "Warn"))
  )
)
type Services = BatchCallsRepo | DispatchRepo | CallsRepo | SqlClient.SqlClient
const run = <A, E>(effect: Effect.Effect<A, E, Services | Scope.Scope>) => runtime.runPromise(Effect.scoped(effect))

const FROM = "+14155550100"
const orgs: Array<string> = []
let serial = 0

/**
 * Area codes (one per zone set: New York, Miami (FL rules too), Chicago, Phoenix, Seattle (WA), Anchorage,
 * Honolulu, Guam) of which those legal now and for the next hour give --legal's numbers.
 */
const legalPrefixes = (() => {
  const now = Date.now()
  return ["+1212", "+1305", "+1312", "+1602", "+1206", "+1907", "+1808", "+1671"].filter((prefix) => {
    const c = constraintOf(`${prefix}5550100`)
    return c !== undefined && isLegalAt(now, c.zones, c.rules) && isLegalAt(now + 3_600_000, c.zones, c.rules)
  })
})()

/**
 * A fresh org with the given concurrency limit and one batch of `count` tasks to distinct new numbers. A batch for
 * the bare loop is triggered a year from now, so no dispatcher of this run touches it.
 */
const seedBatch = (
  count: number,
  window?: unknown,
  options: { readonly forBareLoop?: boolean; readonly legal?: boolean } = {}
) =>
  run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const orgId = OrgId.make(`org_bench_sched_${process.pid}_${++serial}`)
    orgs.push(orgId)
    yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
               VALUES (${orgId}, 'scheduler benchmark', ${CONCURRENCY}, 0)`
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, ${FROM}, 0)`
    const repo = yield* BatchCallsRepo
    const request = Schema.decodeUnknownSync(CreateBatchCallRequest)({
      from_number: FROM,
      ...(window === undefined ? {} : { call_time_window: window }),
      ...(options.forBareLoop === true ? { trigger_timestamp: Date.now() + 365 * 86_400_000 } : {}),
      tasks: Array.from({ length: count }, (_, i) => ({
        // not NANP: NANP numbers wait for their legal hours (decision 0623), which would make the figures depend on
        // the time of day the bench runs at
        to_number: options.legal === true
          ? `${legalPrefixes[i % legalPrefixes.length]}${String((serial * count + i) % 10_000_000).padStart(7, "0")}`
          : `+44${String(100 + serial % 900)}${String(i).padStart(7, "0")}`,
        svc_llm_dynamic_variables: { first_name: `Customer ${i}` }
      }))
    })
    const batch = yield* repo.create(orgId, "bench_key", request, {
      maxTasks: count,
      legalGrouper: () => new LegalGrouper()
    }).pipe(Effect.orDie)
    return { orgId, batchCallId: batch.batch_call_id }
  }))

const batchStatus = (batchCallId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ status: string }>`SELECT status FROM batch_calls WHERE batch_call_id = ${batchCallId}`
    return row!.status
  })

const checkpoint = () =>
  run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CHECKPOINT`
  }))

// ---------------------------------------------------------------------------------------------------------------
// The dispatcher (in this process) and the bare loop
// ---------------------------------------------------------------------------------------------------------------

const dialer = SimulatedDialer.layerMemory({
  seed: 1,
  latencyMs: 0,
  outcomes: SchedulerConfig.defaultOutcomes,
  store: "memory"
})

/**
 * Runs a dispatcher's loop until the batch completes, then the contact feed until every call reached its contact;
 * returns both elapsed times and the carrier's first dial time. The feed is measured on its own because it is the
 * contacts table's cost, not dispatch's: in a worker it runs beside the loop, on the same CPUs.
 */
const viaDispatcher = (batchCallId: string, extra: { readonly untilFirstDial?: boolean } = {}) =>
  profiled(
    Effect.gen(function*() {
      const dispatcher = yield* Dispatcher.make(SchedulerConfig.defaults())
      const carrier = yield* SchedulerSimulatedCarrier
      const sql = yield* SqlClient.SqlClient
      const cpu = cpuNow()
      const started = performance.now()
      const loop = yield* Effect.forkChild(dispatcher.run)
      for (;;) {
        if (extra.untilFirstDial === true) {
          const attempts = yield* Effect.orDie(carrier.attempts)
          if (attempts.length > 0) break
          yield* Effect.sleep(2)
        } else {
          if ((yield* batchStatus(batchCallId)) === "completed") break
          yield* Effect.sleep(20)
        }
      }
      const ms = performance.now() - started
      const dispatchCpu = cpuSince(cpu)
      yield* Fiber.interrupt(loop)
      const feedStarted = performance.now()
      const fed = yield* ContactFeed.drain()
      const fedMs = performance.now() - feedStarted
      const [left] = yield* sql<{ n: number }>`SELECT count(*)::int4 AS n FROM contact_feed`
      if (left!.n !== 0) throw new Error(`${left!.n} calls were not fed to contacts`)
      const attempts = yield* Effect.orDie(carrier.attempts)
      return {
        ms,
        fedMs,
        fed,
        dispatchCpu,
        firstDialAt: attempts[0]?.attemptedAt ?? Number.NaN,
        dials: attempts.length
      }
    }).pipe(Effect.provide(dialer), Effect.provide(DatabaseHealth.layer))
  )

// BENCH_CPU_PROFILE=dir: a V8 CPU profile of each dispatcher run in this process (dispatch and feed only, not the
// seeding) to dir/dispatch-N.cpuprofile (diagnostics: where Node's time per task goes)
const profileDir = process.env["BENCH_CPU_PROFILE"]
let profiles = 0
const profiled = async <A, E>(effect: Effect.Effect<A, E, Services | Scope.Scope>): Promise<A> => {
  if (profileDir === undefined) return run(effect)
  const session = new inspector.Session()
  session.connect()
  await session.post("Profiler.enable")
  await session.post("Profiler.setSamplingInterval", { interval: 100 })
  await session.post("Profiler.start")
  try {
    return await run(effect)
  } finally {
    const { profile } = await session.post("Profiler.stop")
    fs.writeFileSync(path.join(profileDir, `dispatch-${++profiles}.cpuprofile`), JSON.stringify(profile))
    session.disconnect()
  }
}

/**
 * The floor: claim pending tasks with SKIP LOCKED and mark them done, until none is left, on as many connections at
 * once as the dispatcher's pool has (issue 17, "the bare loop given the same connections and SKIP LOCKED as the
 * dispatcher"): BARE_LOOPS loops, each claiming its share of the concurrency limit per round trip.
 */
const BARE_LOOPS = argument("bare-loops", 8)
const viaBareLoop = (batchCallId: string) =>
  run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const started = performance.now()
    const loop = Effect.gen(function*() {
      for (;;) {
        const claimed = yield* sql<{ task_id: string }>`
          UPDATE batch_call_tasks t SET state = 'dialling', lease_owner = 'bare', lease_expires_at = ${
          Date.now() + 30_000
        }
          WHERE t.task_id = ANY(ARRAY(
            SELECT task_id FROM batch_call_tasks WHERE batch_call_id = ${batchCallId} AND state = 'pending'
            ORDER BY task_index LIMIT ${Math.ceil(CONCURRENCY / BARE_LOOPS)} FOR UPDATE SKIP LOCKED))
          RETURNING t.task_id::text AS task_id`
        if (claimed.length === 0) return
        yield* sql`
          UPDATE batch_call_tasks SET state = 'completed', lease_owner = NULL, lease_expires_at = NULL
          WHERE task_id = ANY(${claimed.map((r) => r.task_id)}::text[]::int8[])`
      }
    })
    yield* Effect.all(Array.from({ length: BARE_LOOPS }, () => loop), { concurrency: "unbounded" })
    return performance.now() - started
  }))

// ---------------------------------------------------------------------------------------------------------------
// Worker processes
// ---------------------------------------------------------------------------------------------------------------

const startWorker = (index: number) =>
  new Promise<ChildProcess>((resolve, reject) => {
    // BENCH_WORKER_NODE_FLAGS: extra Node flags for the workers (diagnostics: --cpu-prof, GC flags)
    const flags = (process.env["BENCH_WORKER_NODE_FLAGS"] ?? "").split(" ").filter((f) => f !== "")
    const child = spawn(process.execPath, [...flags, path.join(root, "apps/scheduler/src/main.ts")], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: Redacted.value(url),
        // BENCH_WORKER_LOGS=dir: each worker's debug log (claims, records, sleeps) to dir/worker-N-PID.log
        LOG_LEVEL: process.env["BENCH_WORKER_LOGS"] ? "Debug" : "Info",
        SVC_DB_MAX_CONNECTIONS: "6",
        SCHEDULER_WORKER_ID: `bench-${index}`,
        SCHEDULER_BACKFILL_CRON: "off",
        SIMULATED_DIALER_STORE: "memory",
        SIMULATED_DIALER_LATENCY_MS: "0"
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    const logDir = process.env["BENCH_WORKER_LOGS"]
    const log = logDir === undefined
      ? undefined
      : fs.createWriteStream(path.join(logDir, `worker-${index}-${child.pid}.log`))
    child.stdout?.on("data", (chunk: Buffer) => {
      log?.write(chunk)
      if (output.includes("svc-scheduler started")) return
      output += chunk.toString()
      if (output.includes("svc-scheduler started")) resolve(child)
    })
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.once("exit", () => log?.end())
    child.once("exit", (code) => reject(new Error(`worker ${index} exited (${code}): ${output.slice(-2000)}`)))
  })

const stopWorkers = (workers: ReadonlyArray<ChildProcess>) =>
  Promise.all(workers.map((w) =>
    new Promise<void>((resolve) => {
      w.removeAllListeners("exit")
      w.once("exit", () => resolve())
      w.kill("SIGTERM")
    })
  ))

const feedQueue = () =>
  run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ n: number }>`SELECT count(*)::int4 AS n FROM contact_feed`
    return row!.n
  }))

/**
 * Starts `count` worker processes, runs a warm-up batch through them, then creates a batch and measures until it completes and until every call is
 * applied to its contact too (the workers' contact feed runs beside dispatch, as in production).
 */
const viaProcesses = async (count: number) => {
  const workers: Array<ChildProcess> = []
  for (let i = 0; i < count; i++) workers.push(await startWorker(i))
  // warm-up batch first: the workers' JIT and pools reach their steady state, as in a long-running deployment (cold,
  // two processes would each pay the warm-up that one process pays once)
  for (let i = 0; i < warmUps; i++) {
    const warmUp = await seedBatch(processTaskCount)
    while (await run(batchStatus(warmUp.batchCallId)) !== "completed") await new Promise((r) => setTimeout(r, 20))
    while (await feedQueue() > 0) await new Promise((r) => setTimeout(r, 20))
  }
  // as before each dispatch round: a checkpoint due to the warm-ups' WAL should not land in the measured batch.
  // Before the batch is created: the workers start on it at once
  await checkpoint()
  const { batchCallId } = await seedBatch(processTaskCount)
  const workersCpu = () => workers.reduce((sum, w) => sum + processCpu(w.pid), 0)
  const cpuBefore = { workers: workersCpu(), postgres: cpuNow().postgres }
  const created = performance.now()
  while (await run(batchStatus(batchCallId)) !== "completed") await new Promise((r) => setTimeout(r, 20))
  const ms = performance.now() - created
  const cpu = { workers: workersCpu() - cpuBefore.workers, postgres: cpuNow().postgres - cpuBefore.postgres }
  while (await feedQueue() > 0) await new Promise((r) => setTimeout(r, 20))
  const fedMs = performance.now() - created
  await stopWorkers(workers)
  return { ms, fedMs, cpu }
}

// ---------------------------------------------------------------------------------------------------------------
// Rounds
// ---------------------------------------------------------------------------------------------------------------

const progress = (text: string) => process.stderr.write(`${new Date().toISOString()} ${text}\n`)
const loadBefore = os.loadavg()[0]!
// warm-up, both sides a full-size batch: JIT, prepared statements and plans, the tables' first pages. "Sustained"
// dispatch is a worker's steady state (a 2,000-task warm-up left the first measured round 20-40% slower than the rest)
progress("warm-up")
await viaDispatcher((await seedBatch(taskCount)).batchCallId)
await viaBareLoop((await seedBatch(taskCount, undefined, { forBareLoop: true })).batchCallId)

if (profile) {
  await run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`
    yield* sql`SELECT pg_stat_statements_reset()`
    yield* sql`SELECT pg_stat_reset()`
  }))
}

const ours: Array<number> = []
const feeds: Array<number> = []
const bare: Array<number> = []
const oursCpu: Array<{ node: number; postgres: number }> = []
const legal: Array<number> = []
const legalBase: Array<number> = []
if (withLegal && legalPrefixes.length === 0) throw new Error("--legal: no test zone is legal for the next hour")
const bareCpu: Array<{ node: number; postgres: number }> = []
for (let round = 0; round < (processesOnly ? 0 : rounds); round++) {
  progress(`round ${round + 1} of ${rounds}`)
  // with --legal each dispatcher side's batch is created just before it runs: a dispatcher drains every due batch,
  // so a batch created at the round's start would be drained by whichever dispatcher side ran first
  const a = withLegal ? undefined : await seedBatch(taskCount)
  const b = await seedBatch(taskCount, undefined, { forBareLoop: true })
  await checkpoint()
  const measure = async () => {
    const batch = a ?? await seedBatch(taskCount)
    const result = await viaDispatcher(batch.batchCallId)
    oursCpu.push(result.dispatchCpu)
    ours.push(result.ms)
    feeds.push(result.fedMs)
  }
  const measureBare = async () => {
    const cpu = cpuNow()
    bare.push(await viaBareLoop(b.batchCallId))
    bareCpu.push(cpuSince(cpu))
  }
  if (withLegal) {
    // three sides, rotating which goes first; the unconstrained side's time is also the legal side's baseline
    const measureLegal = async () => {
      const c = await seedBatch(taskCount, undefined, { legal: true })
      legal.push((await viaDispatcher(c.batchCallId)).ms)
    }
    const sides = [measure, measureBare, measureLegal]
    for (let i = 0; i < 3; i++) {
      await sides[(round + i) % 3]!()
      await checkpoint()
    }
    legalBase.push(ours[ours.length - 1]!)
    continue
  }
  if (round % 2 === 0) {
    await measure()
    await checkpoint()
    await measureBare()
  } else {
    await measureBare()
    await checkpoint()
    await measure()
  }
}

let bigRun = { ms: Number.NaN, fedMs: Number.NaN }
let bigBareMs = Number.NaN
if (!dispatchOnly && !processesOnly) {
  progress(`${bigCount} tasks`)
  const big = await seedBatch(bigCount)
  await checkpoint()
  bigRun = await viaDispatcher(big.batchCallId)
  const bigBare = await seedBatch(bigCount, undefined, { forBareLoop: true })
  await checkpoint()
  bigBareMs = await viaBareLoop(bigBare.batchCallId)
}

let windowLag = Number.NaN
if (!skipWindow && !dispatchOnly && !processesOnly) {
  progress("window opening (waits for the next whole minute)")
  // a UTC window that opens at a whole minute at least 5 s from now (time to create the batch and start the worker,
  // which then sleeps until the opening) and stays open one minute
  const now = Date.now()
  const opening = Math.ceil((now + 5_000) / 60_000) * 60_000
  const minute = Math.floor((opening % 86_400_000) / 60_000)
  const waiting = await seedBatch(10, {
    windows: [{ start: minute, end: minute + 1 }],
    timezone: "UTC"
  })
  const result = await viaDispatcher(waiting.batchCallId, { untilFirstDial: true })
  windowLag = result.firstDialAt - opening
}

const one: Array<number> = []
const two: Array<number> = []
const oneCpu: Array<{ workers: number; postgres: number }> = []
const twoCpu: Array<{ workers: number; postgres: number }> = []
const oneFed: Array<number> = []
const twoFed: Array<number> = []
for (let round = 0; round < (dispatchOnly ? 0 : rounds); round++) {
  progress(`worker processes, round ${round + 1}`)
  // alternate which goes first, so a change in background load hits both alike
  const order = round % 2 === 0 ? [1, 2] : [2, 1]
  for (const count of order) {
    const result = await viaProcesses(count)
    ;(count === 1 ? oneCpu : twoCpu).push(result.cpu)
    ;(count === 1 ? one : two).push(result.ms)
    ;(count === 1 ? oneFed : twoFed).push(result.fedMs)
  }
}
const loadAfter = os.loadavg()[0]!

/** The profile: statements by total time, per task dispatched in the measured rounds (all sides together). */
const profileReport = !profile ? [] : await run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const statements = yield* sql<{ query: string; calls: number; rows: number; total: number; top: boolean }>`
    SELECT regexp_replace(left(query, 300), '[[:space:]]+', ' ', 'g') AS query, calls::int8 AS calls, rows::int8 AS rows,
      total_exec_time AS total, toplevel AS top
    FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 25`
  const functions = yield* sql<{ name: string; calls: number; total: number; self: number }>`
    SELECT funcname AS name, calls::int8 AS calls, total_time AS total, self_time AS self
    FROM pg_stat_user_functions ORDER BY total_time DESC`
  // tasks each side dispatched in the measured rounds: ours and the legal side (dispatcher), the bare loop
  const perTaskUs = (ms: number, sides: number) => ((ms * 1000) / (rounds * sides * taskCount)).toFixed(1)
  const dispatcherSides = withLegal ? 2 : 1
  return [
    "",
    `Profile (pg_stat_statements, track = all; µs per task over the ${rounds} rounds; "top" statements include the ` +
    `nested ones below them; the dispatcher's statements over ${dispatcherSides} side(s), the bare loop's over 1):`,
    "",
    "| statement | top level | calls | rows | total ms | µs per task |",
    "| --- | --- | ---: | ---: | ---: | ---: |",
    ...statements.map((s) =>
      `| \`${s.query.replaceAll("|", "\\|").slice(0, 160)}\` | ${s.top ? "yes" : "nested"} | ${Number(s.calls)} | ${
        Number(s.rows)
      } | ${s.total.toFixed(0)} | ${perTaskUs(s.total, s.query.includes("'bare'") ? 1 : dispatcherSides)} |`
    ),
    "",
    "| function (pg_stat_user_functions) | calls | total ms | self ms |",
    "| --- | ---: | ---: | ---: |",
    ...functions.map((f) => `| ${f.name} | ${Number(f.calls)} | ${f.total.toFixed(0)} | ${f.self.toFixed(0)} |`)
  ]
}))

// clean up: deleting an org deletes its batches' tasks (trigger), contacts and calls
await run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const orgId of orgs) {
    yield* sql`DELETE FROM batch_calls WHERE org_id = ${orgId}`
    yield* sql`DELETE FROM orgs WHERE org_id = ${orgId}`
  }
}))
await runtime.dispose()
if (slowLogDir !== undefined) process.stderr.write(`slow statements (BENCH_PG_SLOW_MS=${slowMs}): ${slowLogDir}\n`)
await database.close()

const perSecond = (count: number, ms: number) => Math.round(count / (ms / 1000)).toLocaleString("en-US")
const perTask = (count: number, ms: number) => `${((ms * 1000) / count).toFixed(0)} µs`
const oursMs = median(ours)
const feedMs = median(feeds)
const bareMs = median(bare)
const ratio = oursMs / bareMs
const cpuPerTask = (samples: ReadonlyArray<{ node: number; postgres: number }>) => ({
  node: (median(samples.map((c) => c.node)) * 1000) / taskCount,
  postgres: (median(samples.map((c) => c.postgres)) * 1000) / taskCount
})
const oursCpuTask = cpuPerTask(oursCpu)
const bareCpuTask = cpuPerTask(bareCpu)
const cpuRatio = (oursCpuTask.node + oursCpuTask.postgres) / (bareCpuTask.node + bareCpuTask.postgres)
const oneMs = median(one)
const twoMs = median(two)
const oneFedMs = median(oneFed)
const twoFedMs = median(twoFed)
const processCpuPerTask = (samples: ReadonlyArray<{ workers: number; postgres: number }>) => {
  const workers = (median(samples.map((c) => c.workers)) * 1000) / processTaskCount
  const postgres = (median(samples.map((c) => c.postgres)) * 1000) / processTaskCount
  return `${(workers + postgres).toFixed(0)} µs (${workers.toFixed(0)} + ${postgres.toFixed(0)})`
}
// the verdict on two processes is the median of the per-round ratios: a round runs both back to back, so its ratio is
// the least disturbed by the machine's drift (the medians of each side come from different moments)
const ratiosOf = (ones: ReadonlyArray<number>, twos: ReadonlyArray<number>) => ones.map((ms, i) => ms / twos[i]!)
const processRatio = (ones: ReadonlyArray<number>, twos: ReadonlyArray<number>) => median(ratiosOf(ones, twos))
const cpu = os.cpus()[0]?.model ?? "unknown CPU"
const n = (x: number) => x.toLocaleString("en-US")
const verdict = (ok: boolean) => ok ? "met" : "**missed**"
const report = [
  `Scheduler dispatch, zero-latency simulated dialer, concurrency ${n(CONCURRENCY)}, Node ${process.version}, ` +
  `${cpu} x ${os.cpus().length}, PostgreSQL ${dataDir === undefined ? "at DATABASE_URL" : "embedded"}; ` +
  `1-minute load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after; medians of ${rounds} rounds`,
  "",
  "| measurement | scheduler | baseline (same run) | goal | result |",
  "|---|---:|---:|---|---|",
  `| sustained dispatch, 1 worker, ${n(taskCount)} tasks | ${perSecond(taskCount, oursMs)} tasks/s ` +
  `(${perTask(taskCount, oursMs)}/task) | bare claim-and-mark loop: ${perSecond(taskCount, bareMs)} tasks/s ` +
  `(${perTask(taskCount, bareMs)}/task) | >= 1,000 tasks/s | ${verdict(taskCount / (oursMs / 1000) >= 1000)} |`,
  `| cost per task vs bare loop, wall time | ${ratio.toFixed(2)}x | 1.00x | <= 2x | ${verdict(ratio <= 2)} |`,
  `| cost per task vs bare loop, CPU time (Node + PostgreSQL) | ${
    (oursCpuTask.node + oursCpuTask.postgres).toFixed(0)
  } µs (${oursCpuTask.node.toFixed(0)} + ${oursCpuTask.postgres.toFixed(0)}) = ${cpuRatio.toFixed(2)}x | ${
    (bareCpuTask.node + bareCpuTask.postgres).toFixed(0)
  } µs (${bareCpuTask.node.toFixed(0)} + ${
    bareCpuTask.postgres.toFixed(0)
  }) | (diagnostic: the goal is wall time) | - |`,
  `| contact feed of the same calls, after dispatch | ${perSecond(taskCount, feedMs)} calls/s ` +
  `(${perTask(taskCount, feedMs)}/call; dispatch + feed ${((oursMs + feedMs) / bareMs).toFixed(2)}x the bare loop) | ` +
  `- | (not a goal: the contacts table's cost) | - |`,
  `| ${n(bigCount)}-task batch drains, 1 worker | ${(bigRun.ms / 1000).toFixed(1)} s (then contacts fed in ` +
  `${(bigRun.fedMs / 1000).toFixed(1)} s) | bare loop: ${(bigBareMs / 1000).toFixed(1)} s | < 180 s | ` +
  `${verdict(bigRun.ms < 180_000)} |`,
  `| window opening to first dial | ${Number.isNaN(windowLag) ? "skipped" : `${windowLag.toFixed(0)} ms`} | - | ` +
  `< 1,000 ms | ${Number.isNaN(windowLag) ? "-" : verdict(windowLag < 1000)} |`,
  `| 2 worker processes vs 1, ${n(processTaskCount)} tasks, batch completed | ${
    perSecond(processTaskCount, twoMs)
  } tasks/s (per-round ratio ${processRatio(one, two).toFixed(2)}x) | ` +
  `1 process: ${perSecond(processTaskCount, oneMs)} tasks/s | 2 not slower than 1 | ${
    verdict(processRatio(one, two) >= 1)
  } |`,
  `| 2 worker processes vs 1, CPU per task until the batch completed (workers + PostgreSQL) | ${
    processCpuPerTask(twoCpu)
  } | 1 process: ${processCpuPerTask(oneCpu)} | (diagnostic) | - |`,
  `| 2 worker processes vs 1, until every contact is fed too | ${
    perSecond(processTaskCount, twoFedMs)
  } tasks/s (per-round ratio ${processRatio(oneFed, twoFed).toFixed(2)}x) | ` +
  `1 process: ${perSecond(processTaskCount, oneFedMs)} tasks/s | 2 not slower than 1 | ${
    verdict(processRatio(oneFed, twoFed) >= 1)
  } |`
]
if (legal.length > 0) {
  const legalMs = median(legal)
  const legalRatio = median(ratiosOf(legal, legalBase))
  report.push(
    `| sustained dispatch, 100% of tasks under legal hours (${legalPrefixes.length} zone sets: ${
      legalPrefixes.join(" ")
    }), ${n(taskCount)} tasks | ${perSecond(taskCount, legalMs)} tasks/s (${perTask(taskCount, legalMs)}/task; ` +
      `per-round ratio ${legalRatio.toFixed(2)}x) | unconstrained (London numbers): ${
        perSecond(taskCount, median(legalBase))
      } tasks/s | <= 1.2x | ${verdict(legalRatio <= 1.2)} |`
  )
}
// each round ran both sides back to back: its ratio is the least disturbed by the machine's drift
const roundRatios = (ones: ReadonlyArray<number>, twos: ReadonlyArray<number>) => {
  const ratios = ratiosOf(ones, twos)
  return `${ratios.map((r) => `${r.toFixed(2)}x`).join(", ")}; median ${median(ratios).toFixed(2)}x`
}
if (ours.length > 0) {
  // ours over bare per round (a rising sequence means the cost grows with the tables, which every round enlarges)
  report.push(
    "",
    `cost per task over the bare loop's, per round (wall time): ${roundRatios(ours, bare)}; ` +
      `scheduler µs/task per round: ${ours.map((ms) => ((ms * 1000) / taskCount).toFixed(0)).join(", ")}`
  )
}
if (one.length > 0) {
  report.push(
    "",
    `2 processes' throughput over 1 process's, per round: batch completed ${roundRatios(one, two)}; ` +
      `every contact fed ${roundRatios(oneFed, twoFed)}`
  )
}
// rows of the measurements this run left out (--dispatch-only, --processes-only, --skip-window) have no figures
process.stdout.write([...report.filter((row) => !row.includes("NaN")), ...profileReport].join("\n") + "\n")
