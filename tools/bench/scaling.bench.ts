// Horizontal scaling (issue 30 item 6): what 1, 2 and 4 processes of each kind give on this machine, against ONE
// embedded PostgreSQL, with the CPU each unit of work costs, so that the cost of a replica is known:
//
//   1. dispatch: N `svc-scheduler` processes (simulated dialer in memory, zero latency, backfill cron off, distinct
//      SCHEDULER_WORKER_ID, as tools/bench/scheduler.bench.ts runs them) on one 20,000-task batch of a fresh org
//      (concurrency limit 1,000): tasks/s from the batch's creation to its completion, and CPU per task of the
//      worker processes and of PostgreSQL's processes (from /proc);
//   2. list-contacts: N `svc-server` processes (each on its own port, SVC_RATE_LIMIT high) over an org of 100,000
//      contacts, driven by one autocannon over all N ports at a fixed total of connections (spread evenly):
//      requests/s, CPU per request (servers, PostgreSQL, and the load generator, which runs on the same 2 cores),
//      p50 and p99 latency.
//
//   node tools/bench/scaling.bench.ts [--rounds=5] [--processes=1,2,4] [--tasks=20000] [--warm-ups=3]
//     [--contacts=100000] [--connections=16] [--seconds=10] [--dispatch-only | --http-only] [--statements]
//
// The machine is shared and noisy, so each round measures every process count back to back, starting with a
// different count each round (round r starts with the (r mod 3)-th: the tables grow with every batch and the load
// drifts, and neither should always favour the same count); the report gives medians over rounds and each round's
// ratio against 1 process, which is the least disturbed by drift (both sides measured minutes apart at most).
//
// Every set of processes is started once and kept warm for the whole run: a fresh Node process spends more CPU per
// task for its first batches (JIT tiers, heap sizing; scheduler.bench.ts measured it), and a deployment's replicas
// are long-running. While one set is measured the others are paused (SIGSTOP: no CPU, no timers, connections kept,
// paused only when none of their backends is inside a statement or transaction) and resumed for their turn, after
// which a small settle batch (or 2 s of load) lets their pools reconnect (pg closes connections idle for 10 s).
// Before the rounds each scheduler set dispatches `--warm-ups` full batches per process (4 processes: 12 batches,
// so each of them has dispatched as many tasks as the single process), each server set serves 5 s of load.
//
// Runs on DATABASE_URL when set (its CPU then is not seen: PostgreSQL's columns read 0), else on an embedded
// PostgreSQL of its own. Prints a Markdown section for docs/benchmarks.md (dated, with the commit and the load
// average before and after); the exit code is 0 unless something failed (a loaded machine is not a failure).
import * as ContactSeed from "@svc/store/contacts/ContactSeed.ts"
import * as Database from "@svc/store/db/Database.ts"
import { ApiKeys } from "@svc/store/orgs/ApiKeys.ts"
import autocannon from "autocannon"
import { Effect, Layer, Redacted } from "effect"
import { type ChildProcess } from "node:child_process"
import * as os from "node:os"
import pg from "pg"
import { argument, benchDatabase, gitCommit, median } from "./support/BenchSupport.ts"
import { makeDispatchBatches } from "./support/DispatchBatches.ts"
import { machineCpuMs, processCpuMs, startPostgresSampler } from "./support/ProcessCpu.ts"
import {
  freePort,
  killSpawned,
  pauseWhenIdle,
  resumeProcesses,
  startServer,
  startWorker,
  stopProcesses,
  withApplicationName
} from "./support/SvcProcesses.ts"

const ROUNDS = argument("rounds", 5)
const COUNTS = (process.argv.find((arg) => arg.startsWith("--processes="))?.split("=")[1] ?? "1,2,4")
  .split(",").map(Number)
if (COUNTS.length === 0 || COUNTS.some((n) => !Number.isInteger(n) || n < 1)) {
  throw new Error("--processes takes whole numbers >= 1, e.g. --processes=1,2,4")
}
if (!COUNTS.includes(1)) throw new Error("--processes must include 1: every ratio is against 1 process")
const TASKS = argument("tasks", 20_000)
// full batches per worker process before the rounds (see the header)
const WARM_UPS = argument("warm-ups", 3)
// the settle batch after a paused set is resumed: enough for every process to claim and record a few times
const SETTLE_TASKS = 2_000
const CONCURRENCY = 1_000
const CONTACTS = argument("contacts", 100_000)
const CONNECTIONS = argument("connections", 16)
const SECONDS = argument("seconds", 10)
const dispatchOnly = process.argv.includes("--dispatch-only")
const httpOnly = process.argv.includes("--http-only")
if (COUNTS.some((n) => CONNECTIONS % n !== 0)) {
  throw new Error(`--connections=${CONNECTIONS} must split evenly over ${COUNTS.join(", ")} servers`)
}

const say = (text: string) => process.stderr.write(`${new Date().toISOString()} ${text}\n`)
const commit = gitCommit()
const startedAt = new Date()
const loadBefore = os.loadavg()

/** One set of processes of one kind: `count` of them, each with its own application name (and port, for servers). */
interface ProcessSet {
  readonly count: number
  readonly children: ReadonlyArray<ChildProcess>
  readonly names: ReadonlyArray<string>
  readonly ports: ReadonlyArray<number>
}

/** One measurement of one set: wall time, units of work done, CPU (ms) of each party over the same interval. */
interface Sample {
  readonly count: number
  readonly ms: number
  readonly units: number
  readonly svcCpuMs: number
  readonly postgresCpuMs: number
  /** Of postgresCpuMs: client backends, autovacuum workers, background processes (see startPostgresSampler). */
  readonly postgresBackendMs: number
  readonly autovacuumMs: number
  readonly postgresBackgroundMs: number
  /** This process (the load generator, for list-contacts; the batch seeding and polling, for dispatch). */
  readonly benchCpuMs: number
  /** Every process on the machine, summed over its cores. */
  readonly machineBusyMs: number
  readonly fedMs?: number
  readonly p50?: number
  readonly p99?: number
  readonly errors?: number
}

// --statements (diagnostics): pg_stat_statements (track = all: the claim function's statements and the triggers'
// included) reset before each measurement and its top statements by time printed after it, per unit of work, with
// the dead tuples of the tables the claim reads: where PostgreSQL's CPU went in a slow round. Needs the bench's own
// embedded server (the library is loaded at server start)
const statements = process.argv.includes("--statements")
const database = await benchDatabase("scaling", {
  settings: statements
    ? { shared_preload_libraries: "'pg_stat_statements'", "pg_stat_statements.track": "all" }
    : {}
})
// interrupted (Ctrl-C, a timeout's SIGTERM): the database goes too (SvcProcesses kills its children on exit)
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    say(`${signal}: stopping`)
    killSpawned()
    void database.close().finally(() => process.exit(1))
  })
}
const url = Redacted.value(database.url)
const monitor = new pg.Client({ connectionString: withApplicationName(url, "scaling-monitor") })
await monitor.connect()
if (statements) await monitor.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")

/** With --statements: forgets the statements' counters (before a measurement). */
const resetStatements = async () => {
  if (statements) await monitor.query("SELECT pg_stat_statements_reset()")
}
/** With --statements: the top statements since the reset, per unit of work, and the claim's tables' dead tuples. */
const printStatements = async (units: number, unit: string) => {
  if (!statements) return
  const { rows } = await monitor.query<{ query: string; calls: string; rows: string; ms: number; hits: string }>(
    `SELECT regexp_replace(left(query, 110), '[[:space:]]+', ' ', 'g') AS query, calls, rows,
       total_exec_time AS ms, shared_blks_hit + shared_blks_read AS hits
     FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 6`
  )
  for (const r of rows) {
    say(
      `    ${((r.ms * 1000) / units).toFixed(0)} µs/${unit}, ${(Number(r.hits) / units).toFixed(1)} buffers/${unit}, ` +
        `${r.calls} calls, ${r.rows} rows: ${r.query}`
    )
  }
  const dead = await monitor.query<{ relname: string; live: string; dead: string }>(
    `SELECT relname, n_live_tup AS live, n_dead_tup AS dead FROM pg_stat_user_tables
     WHERE relname IN ('batch_call_tasks', 'calls', 'contacts', 'contact_feed', 'batch_calls') ORDER BY relname`
  )
  say(`    tuples live/dead: ${dead.rows.map((r) => `${r.relname} ${r.live}/${r.dead}`).join(", ")}`)
}

/** CPU (ms) so far of the set's processes, this process and the machine, and PostgreSQL's from now on. */
const snapshot = (set: ProcessSet) => {
  const self = process.cpuUsage()
  return {
    svc: set.children.reduce((sum, child) => sum + processCpuMs(child.pid), 0),
    postgres: startPostgresSampler(database.dataDir),
    bench: (self.user + self.system) / 1000,
    machine: machineCpuMs().busy,
    at: performance.now()
  }
}
const since = (set: ProcessSet, before: ReturnType<typeof snapshot>) => {
  const postgres = before.postgres.stop()
  const self = process.cpuUsage()
  return {
    ms: performance.now() - before.at,
    svcCpuMs: set.children.reduce((sum, child) => sum + processCpuMs(child.pid), 0) - before.svc,
    postgresCpuMs: postgres.total,
    postgresBackendMs: postgres.backend,
    autovacuumMs: postgres.autovacuum,
    postgresBackgroundMs: postgres.total - postgres.backend - postgres.autovacuum,
    benchCpuMs: (self.user + self.system) / 1000 - before.bench,
    machineBusyMs: machineCpuMs().busy - before.machine
  }
}

/** One sample in a line: throughput, CPU per unit by party, cores used, the machine's load. */
const describe = (s: Sample, unit: string) => {
  const per = (ms: number) => ((ms * 1000) / s.units).toFixed(0)
  return `${Math.round(s.units / (s.ms / 1000))} ${unit}s/s, CPU µs/${unit}: svc ${per(s.svcCpuMs)} + PostgreSQL ` +
    `${per(s.postgresCpuMs)} (backends ${per(s.postgresBackendMs)}, autovacuum ${per(s.autovacuumMs)}, other ` +
    `${per(s.postgresBackgroundMs)}); cores: svc + PostgreSQL ${((s.svcCpuMs + s.postgresCpuMs) / s.ms).toFixed(2)}, ` +
    `machine ${(s.machineBusyMs / s.ms).toFixed(2)}; load ${os.loadavg()[0]!.toFixed(1)}`
}

/** Round `round`'s order: the counts rotated by the round number. */
const orderOf = (round: number) => COUNTS.map((_, i) => COUNTS[(round + i) % COUNTS.length]!)

const dispatchSamples: Array<Sample> = []
const httpSamples: Array<Sample> = []
const allSets: Array<ProcessSet> = []
let contactTotal = 0
let seedSeconds = 0

try {
  // -------------------------------------------------------------------------------------------------------------
  // 1. Dispatch
  // -------------------------------------------------------------------------------------------------------------
  if (!httpOnly) {
    const batches = makeDispatchBatches(database.url, { concurrency: CONCURRENCY, name: "scaling" })
    const sets: Array<ProcessSet> = []
    try {
      let serial = 0
      for (const count of COUNTS) {
        say(`starting ${count} svc-scheduler process(es)`)
        const names = Array.from({ length: count }, () => `scaling-scheduler-${++serial}`)
        const children = await Promise.all(names.map((name) => startWorker(withApplicationName(url, name), name)))
        const set = { count, children, names, ports: [] }
        sets.push(set)
        allSets.push(set)
        // warm-up: WARM_UPS full batches per process, so that each has dispatched about as many tasks as the single
        // process of the 1-process set
        for (let i = 0; i < WARM_UPS * count; i++) {
          const { batchCallId } = await batches.seedBatch(TASKS)
          await batches.untilCompleted(batchCallId)
        }
        await batches.untilFed()
        say(`  warmed with ${WARM_UPS * count} batches of ${TASKS.toLocaleString("en-US")} tasks`)
        await pauseWhenIdle(monitor, children, names)
      }
      for (let round = 0; round < ROUNDS; round++) {
        for (const count of orderOf(round)) {
          const set = sets.find((s) => s.count === count)!
          resumeProcesses(set.children)
          const settle = await batches.seedBatch(SETTLE_TASKS)
          await batches.untilCompleted(settle.batchCallId)
          await batches.untilFed()
          // a checkpoint due to the earlier batches' WAL should not land in the measured batch. Before the batch is
          // created: the workers start on it at once
          await batches.checkpoint()
          const { batchCallId } = await batches.seedBatch(TASKS)
          await resetStatements()
          const before = snapshot(set)
          await batches.untilCompleted(batchCallId)
          const cpu = since(set, before)
          await batches.untilFed()
          const fedMs = performance.now() - before.at
          await pauseWhenIdle(monitor, set.children, set.names)
          const sample = { count, units: TASKS, ...cpu, fedMs }
          dispatchSamples.push(sample)
          say(`dispatch round ${round + 1}, ${count} process(es): ${describe(sample, "task")}`)
          await printStatements(TASKS, "task")
        }
      }
    } finally {
      await stopProcesses(sets.flatMap((s) => s.children))
      await batches.close()
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // 2. list-contacts
  // -------------------------------------------------------------------------------------------------------------
  if (!dispatchOnly) {
    say(`seeding ${CONTACTS.toLocaleString("en-US")} contacts`)
    const { key } = await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(
          Layer.build(ApiKeys.layer.pipe(Layer.provideMerge(Database.layerFromUrl(database.url)))),
          (context) =>
            Effect.provideContext(
              Effect.gen(function*() {
                const keys = yield* ApiKeys
                const orgId = yield* keys.createOrg("scaling bench")
                const key = yield* keys.createKey(orgId)
                const started = performance.now()
                yield* ContactSeed.load([{ orgId, contacts: CONTACTS }], { seed: 1 })
                seedSeconds = (performance.now() - started) / 1000
                return { key }
              }),
              context
            )
        )
      )
    )
    const load = (urls: ReadonlyArray<string>, duration: number) =>
      autocannon({
        // autocannon spreads connections over several URLs round robin (connection i on urls[i % n]); its types
        // (@types/autocannon 7) know only one
        url: urls as unknown as string,
        method: "POST",
        body: JSON.stringify({ limit: 100 }),
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        connections: CONNECTIONS,
        duration
      })
    const sets: Array<ProcessSet> = []
    try {
      let serial = 0
      for (const count of COUNTS) {
        say(`starting ${count} svc-server process(es)`)
        const names = Array.from({ length: count }, () => `scaling-server-${++serial}`)
        const ports: Array<number> = []
        for (let i = 0; i < count; i++) ports.push(await freePort())
        const children = await Promise.all(
          names.map((name, i) => startServer(withApplicationName(url, name), ports[i]!))
        )
        const set = { count, children, names, ports }
        sets.push(set)
        allSets.push(set)
        await load(ports.map((port) => `http://127.0.0.1:${port}/list-contacts`), 5)
        await pauseWhenIdle(monitor, children, names)
      }
      for (let round = 0; round < ROUNDS; round++) {
        for (const count of orderOf(round)) {
          const set = sets.find((s) => s.count === count)!
          const urls = set.ports.map((port) => `http://127.0.0.1:${port}/list-contacts`)
          resumeProcesses(set.children)
          await load(urls, 2)
          await resetStatements()
          const before = snapshot(set)
          const result = await load(urls, SECONDS)
          const cpu = since(set, before)
          await pauseWhenIdle(monitor, set.children, set.names)
          httpSamples.push({
            count,
            units: result.requests.total,
            ...cpu,
            p50: result.latency.p50,
            p99: result.latency.p99,
            errors: result.non2xx + result.errors + result.timeouts
          })
          say(
            `list-contacts round ${round + 1}, ${count} process(es): ${describe(httpSamples.at(-1)!, "request")}, ` +
              `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`
          )
          await printStatements(result.requests.total, "request")
        }
      }
      // what every request read: one full page of the org's contacts
      resumeProcesses(sets[0]!.children)
      const page = await (await fetch(`http://127.0.0.1:${sets[0]!.ports[0]}/list-contacts`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: "{\"limit\":100}"
      })).json() as { total: number; items: Array<unknown> }
      if (page.items.length !== 100) throw new Error(`list-contacts served ${page.items.length} items, not 100`)
      contactTotal = page.total
    } finally {
      await stopProcesses(sets.flatMap((s) => s.children))
    }
  }
} finally {
  await monitor.end()
  await database.close()
}
const loadAfter = os.loadavg()

// -------------------------------------------------------------------------------------------------------------------
// Report
// -------------------------------------------------------------------------------------------------------------------

const n = (x: number) => Math.round(x).toLocaleString("en-US")
const us = (cpuMs: number, units: number) => (cpuMs * 1000) / units
const rate = (s: Sample) => s.units / (s.ms / 1000)
const of = (samples: ReadonlyArray<Sample>, count: number) => samples.filter((s) => s.count === count)
/** Each round's throughput with `count` processes over the same round's with 1. */
const ratios = (samples: ReadonlyArray<Sample>, count: number) => {
  const ones = of(samples, 1)
  return of(samples, count).map((s, i) => rate(s) / rate(ones[i]!))
}
const x = (r: number) => `${r.toFixed(2)}x`

/** A column of a table: its title, whether its cells are numbers (right-aligned), and its cell for a count. */
type Column = readonly [title: string, numeric: boolean, cell: (count: number) => string]

const table = (samples: ReadonlyArray<Sample>, unit: "task" | "request") => {
  const m = (count: number, pick: (s: Sample) => number) => median(of(samples, count).map(pick))
  const cpuPer = (count: number, pick: (s: Sample) => number) => m(count, (s) => us(pick(s), s.units))
  const total = (count: number) => cpuPer(count, (s) => s.svcCpuMs + s.postgresCpuMs)
  const columns: Array<Column> = [
    [unit === "task" ? "svc-scheduler processes" : "svc-server processes", true, String],
    [`${unit}s/s (median)`, true, (count) => n(m(count, rate))],
    ["per-round ratio to 1 process: median (each round)", false, (count) => {
      if (count === 1) return "1.00x"
      const rs = ratios(samples, count)
      return `${x(median(rs))} (${rs.map(x).join(", ")})`
    }],
    ...(unit === "task"
      ? [
        [
          "tasks/s until every contact is fed",
          true,
          (count) => n(m(count, (s) => s.units / (s.fedMs! / 1000)))
        ] as Column
      ]
      : []),
    [
      `CPU µs per ${unit}: ${unit === "task" ? "workers" : "servers"} + PostgreSQL`,
      false,
      (count) =>
        `${total(count).toFixed(0)} (${cpuPer(count, (s) => s.svcCpuMs).toFixed(0)} + ${
          cpuPer(count, (s) => s.postgresCpuMs).toFixed(0)
        })`
    ],
    [
      "PostgreSQL's share",
      true,
      (count) => `${((cpuPer(count, (s) => s.postgresCpuMs) / total(count)) * 100).toFixed(0)} %`
    ],
    // autovacuum's work lands in whichever measurement it overlaps: a round with it costs more than one without
    [`of PostgreSQL's, autovacuum µs per ${unit}`, true, (count) => cpuPer(count, (s) => s.autovacuumMs).toFixed(0)],
    [
      `${unit === "task" ? "bench process (seeding, polling)" : "autocannon"} CPU µs per ${unit}`,
      true,
      (count) => cpuPer(count, (s) => s.benchCpuMs).toFixed(0)
    ],
    // what the 2 cores would give if svc and PostgreSQL had them to themselves, at this CPU per unit
    [`${unit}s/s if svc + PostgreSQL had both cores`, true, (count) => n(2_000_000 / total(count))],
    [
      "cores used by svc + PostgreSQL",
      true,
      (count) => m(count, (s) => (s.svcCpuMs + s.postgresCpuMs) / s.ms).toFixed(2)
    ],
    ["cores busy, whole machine", true, (count) => m(count, (s) => s.machineBusyMs / s.ms).toFixed(2)],
    ...(unit === "task" ? [] : [
      ["p50 ms", true, (count) => m(count, (s) => s.p50!).toFixed(0)] as Column,
      ["p99 ms", true, (count) => m(count, (s) => s.p99!).toFixed(0)] as Column,
      ["errors", true, (count) => String(of(samples, count).reduce((sum, s) => sum + s.errors!, 0))] as Column
    ])
  ]
  return [
    `| ${columns.map(([title]) => title).join(" | ")} |`,
    `|${columns.map(([, numeric]) => (numeric ? "---:" : "---")).join("|")}|`,
    ...COUNTS.map((count) => `| ${columns.map(([, , cell]) => cell(count)).join(" | ")} |`)
  ]
}

/** Every measurement, in the order taken: what the medians hide (a round with autovacuum in it, a burst of load). */
const rounds = (samples: ReadonlyArray<Sample>, unit: "task" | "request") => {
  const perRound = samples.length / ROUNDS
  return [
    `| round | processes | ${unit}s/s | CPU µs per ${unit}: svc | PostgreSQL backends | autovacuum | PostgreSQL, other | ` +
    "cores used by svc + PostgreSQL | cores busy, whole machine |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...samples.map((s, i) => {
      const per = (ms: number) => us(ms, s.units).toFixed(0)
      return `| ${Math.floor(i / perRound) + 1} | ${s.count} | ${n(rate(s))} | ${per(s.svcCpuMs)} | ` +
        `${per(s.postgresBackendMs)} | ${per(s.autovacuumMs)} | ${per(s.postgresBackgroundMs)} | ` +
        `${((s.svcCpuMs + s.postgresCpuMs) / s.ms).toFixed(2)} | ${(s.machineBusyMs / s.ms).toFixed(2)} |`
    })
  ]
}

const cpu = os.cpus()[0]?.model ?? "unknown CPU"
const lines = [
  `## Horizontal scaling (issue 30 item 6; ${startedAt.toISOString().slice(0, 10)}, ` +
  `${startedAt.toISOString().slice(11, 16)}-${new Date().toISOString().slice(11, 16)} UTC, commit ${commit})`,
  "",
  `\`node tools/bench/scaling.bench.ts --rounds=${ROUNDS} --processes=${COUNTS.join(",")}\` on ${cpu} x ` +
  `${os.cpus().length}, Node ${process.version}, one ${
    database.dataDir === undefined ? "PostgreSQL at DATABASE_URL" : "embedded PostgreSQL"
  }; ` +
  `1-minute load average ${loadBefore[0]!.toFixed(1)} before, ${loadAfter[0]!.toFixed(1)} after ` +
  `(5-minute ${loadBefore[1]!.toFixed(1)} -> ${loadAfter[1]!.toFixed(1)}); ${ROUNDS} round(s), each measuring every ` +
  "process count back to back (the first count rotating by round); medians.",
  ""
]
if (dispatchSamples.length > 0) {
  lines.push(
    `Dispatch: one ${n(TASKS)}-task batch of a fresh org (limit ${n(CONCURRENCY)}), simulated dialer in memory, zero ` +
      `latency; from the batch's creation to its completion. Each set warmed with ${WARM_UPS} batch(es) per process.`,
    "",
    ...table(dispatchSamples, "task"),
    "",
    "Each measurement:",
    "",
    ...rounds(dispatchSamples, "task"),
    ""
  )
}
if (httpSamples.length > 0) {
  lines.push(
    `list-contacts: limit 100, no filter, exact total (${n(contactTotal)} contacts in the org, seeded in ` +
      `${seedSeconds.toFixed(0)} s), ${CONNECTIONS} connections spread evenly over the servers' ports by one ` +
      `autocannon in the bench process, ${SECONDS} s per measurement.`,
    "",
    ...table(httpSamples, "request"),
    "",
    "Each measurement:",
    "",
    ...rounds(httpSamples, "request"),
    ""
  )
}
process.stdout.write(`${lines.join("\n")}\n`)
