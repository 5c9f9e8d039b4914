// Carrier pacing (issue 14, "Carrier pacing"; decision 0610): two worker processes share one carrier account's
// pace at `--cps` (default 50) for `--seconds` (default 10) through PostgreSQL, and through Redis, each beside a
// baseline in the same run: the same schedule (SlotPacer) over an in-process store, two workers in ONE process, no
// round trips (what pacing costs when nothing is shared).
//
// Two more paths run each store with a start tolerance of `--tolerance` ms (SVC_CARRIER_START_TOLERANCE_MS, default
// 20): slots further apart, late ones given up, so that starts too stay within ceil(cps) a second.
//
// Each worker runs `--acquirers` (default 4) fibers that take slots back to back, as a dispatcher with calls
// waiting would. Reported, median over the rounds: the achieved rate (slots returned, first to last; goal within
// 5 % of --cps), the most call creations started in any 1 s window (by slot time, which must never exceed
// ceil(cps), and by the time acquire returned), and the acquire latency past the slot (how late after its slot a
// call creation may start: the round trips and timer delay), p50 / p99.
//
//   node tools/bench/carrierPacing.bench.ts [--rounds=5] [--cps=50] [--seconds=10] [--acquirers=4] [--tolerance=20]
//
// Needs /usr/bin/redis-server (or SVC_REDIS_SERVER); PostgreSQL is DATABASE_URL when set, else an embedded server
// in a temporary directory. Rounds alternate the three paths and rotate their order. Exits 0 either way.
import { NodeRedis } from "@effect/platform-node"
import * as CarrierPacerPostgres from "@svc/scheduler/carriers/pacing/CarrierPacerPostgres.ts"
import * as CarrierPacerRedis from "@svc/scheduler/carriers/pacing/CarrierPacerRedis.ts"
import * as CarrierPacingConfig from "@svc/scheduler/carriers/pacing/CarrierPacingConfig.ts"
import * as SlotPacer from "@svc/scheduler/carriers/pacing/SlotPacer.ts"
import * as Database from "@svc/store/db/Database.ts"
import { Clock, Effect, Layer, Option, Redacted } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as net from "node:net"
import * as os from "node:os"
import * as readline from "node:readline"
import { argument, benchDatabase, median } from "./support/BenchSupport.ts"

const rounds = argument("rounds", 5)
const cps = argument("cps", 50)
const seconds = argument("seconds", 10)
const acquirers = argument("acquirers", 4)
// --tolerance=N: the start tolerance of the "tolerance" paths (SVC_CARRIER_START_TOLERANCE_MS)
const tolerance = argument("tolerance", 20)
const strict = process.argv.includes("--strict")
const settings = CarrierPacingConfig.defaults({
  cps,
  startToleranceMs: strict ? Option.some(tolerance) : Option.none()
})
const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)

interface Taken {
  readonly slotUs: number
  readonly returnedMs: number
}

interface Run {
  readonly taken: ReadonlyArray<Taken>
  readonly failed: number
}

/** `acquirers` fibers on `pacer` taking slots of `account` from `startMs` for `seconds`. */
const drive = (pacers: ReadonlyArray<SlotPacer.SlotPacer>, account: string, startMs: number) =>
  Effect.gen(function*() {
    const taken: Array<Taken> = []
    const failures: Array<1> = []
    yield* Effect.sleep(Math.max(0, startMs - (yield* Clock.currentTimeMillis)))
    const acquirer = (pacer: SlotPacer.SlotPacer) =>
      Effect.gen(function*() {
        while ((yield* Clock.currentTimeMillis) < startMs + seconds * 1_000) {
          // with a start tolerance, five late slots in a row fail an acquire (DialerUnavailable): counted, not fatal
          const slotUs = yield* Effect.catchTag(
            pacer.acquireSlot(account),
            "DialerUnavailable",
            () => Effect.succeed(-1)
          )
          // sub-millisecond return times: the latency past the slot is a few hundred microseconds
          if (slotUs >= 0) taken.push({ slotUs, returnedMs: performance.timeOrigin + performance.now() })
          else failures.push(1)
        }
      })
    yield* Effect.all(pacers.flatMap((p) => Array.from({ length: acquirers }, () => acquirer(p))), {
      concurrency: "unbounded"
    })
    return { taken, failed: failures.length }
  })

// ---------------------------------------------------------------------------------------------------------------
// A worker process: `--child=postgres|redis --url=... --account=...`; prints "ready", reads the start time, prints
// its slots as JSON
// ---------------------------------------------------------------------------------------------------------------

const child = option("child")
if (child !== undefined) {
  const url = option("url")!
  const account = option("account")!
  const worker = (pacer: SlotPacer.SlotPacer) =>
    Effect.gen(function*() {
      // connections open and scripts loaded before the measured run
      yield* pacer.acquireSlot(`${account}_warm_up`)
      process.stdout.write("ready\n")
      const lines = readline.createInterface({ input: process.stdin })
      const startMs = yield* Effect.promise(() =>
        new Promise<number>((resolve) => lines.once("line", (l) => resolve(Number(l))))
      )
      lines.close()
      process.stdout.write(JSON.stringify(yield* drive([pacer], account, startMs)) + "\n")
    })
  await Effect.runPromise<void, unknown>(
    child === "postgres"
      ? Effect.flatMap(CarrierPacerPostgres.make(settings), worker).pipe(
        Effect.provide(Database.layerFromUrl(Redacted.make(url), { migrate: false, maxConnections: 2 }))
      )
      : Effect.flatMap(CarrierPacerRedis.make(settings), worker).pipe(
        Effect.provide(NodeRedis.layer({ url, disableOfflineQueue: true }))
      )
  )
  process.exit(0)
}

// ---------------------------------------------------------------------------------------------------------------
// The parent
// ---------------------------------------------------------------------------------------------------------------

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const startRedis = async () => {
  const port = await freePort()
  const server = spawn(
    process.env["SVC_REDIS_SERVER"] ?? "/usr/bin/redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: ["ignore", "pipe", "inherit"] }
  )
  await new Promise<void>((resolve, reject) => {
    let out = ""
    server.stdout!.on("data", (chunk) => {
      out += chunk
      if (out.includes("Ready to accept connections")) resolve()
    })
    server.once("exit", (code) => reject(new Error(`redis-server exited ${code}: ${out}`)))
  })
  return { url: `redis://127.0.0.1:${port}`, server }
}

/** Two worker processes on `store`, started together; their slots. */
const twoProcesses = async (
  store: "postgres" | "redis",
  url: string,
  account: string,
  withTolerance: boolean
): Promise<Run> => {
  const children: Array<{ readonly process: ChildProcess; readonly lines: AsyncIterator<string> }> = []
  for (let i = 0; i < 2; i++) {
    const proc = spawn(
      process.execPath,
      [
        import.meta.filename,
        `--child=${store}`,
        `--url=${url}`,
        `--account=${account}`,
        ...process.argv.slice(2),
        ...(withTolerance ? ["--strict"] : [])
      ],
      { stdio: ["pipe", "pipe", "inherit"] }
    )
    children.push({ process: proc, lines: readline.createInterface({ input: proc.stdout! })[Symbol.asyncIterator]() })
  }
  for (const c of children) {
    const line = await c.lines.next()
    if (line.value !== "ready") throw new Error(`worker did not start: ${line.value}`)
  }
  const startMs = Date.now() + 300
  for (const c of children) c.process.stdin!.write(`${startMs}\n`)
  const results = await Promise.all(children.map(async (c) => JSON.parse((await c.lines.next()).value) as Run))
  return { taken: results.flatMap((r) => r.taken), failed: results.reduce((n, r) => n + r.failed, 0) }
}

/** The baseline: two workers in this process over an in-process store (the same schedule, no round trips). */
const inProcess = (account: string) => {
  const state = new Map<string, { nextAt: number; pausedUntil: number }>()
  const store: SlotPacer.SlotStore = {
    take: (acc, nowUs, intervalUs) =>
      Effect.sync(() => {
        const s = state.get(acc) ?? { nextAt: 0, pausedUntil: 0 }
        const slot = Math.max(s.nextAt, nowUs, s.pausedUntil)
        state.set(acc, { ...s, nextAt: slot + intervalUs })
        return slot
      }),
    pause: (acc, _nowUs, untilUs) =>
      Effect.sync(() => {
        const s = state.get(acc) ?? { nextAt: 0, pausedUntil: 0 }
        state.set(acc, { ...s, pausedUntil: Math.max(s.pausedUntil, untilUs) })
      }),
    pausedUntil: (acc) => Effect.sync(() => state.get(acc)?.pausedUntil ?? 0)
  }
  const pacers = [SlotPacer.make(store, settings), SlotPacer.make(store, settings)]
  return Effect.runPromise(drive(pacers, account, Date.now() + 300))
}

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

const mostInOneSecond = (times: ReadonlyArray<number>, second: number) => {
  const sorted = [...times].sort((a, b) => a - b)
  let most = 0
  let first = 0
  for (let last = 0; last < sorted.length; last++) {
    while (sorted[last]! - sorted[first]! >= second) first++
    most = Math.max(most, last - first + 1)
  }
  return most
}

interface Measured {
  readonly rate: number
  readonly bySlot: number
  readonly byReturn: number
  readonly p50: number
  readonly p99: number
  readonly n: number
  readonly failed: number
}

const measure = ({ failed, taken }: Run): Measured => {
  const returns = taken.map((t) => t.returnedMs).sort((a, b) => a - b)
  const late = taken.map((t) => t.returnedMs - t.slotUs / 1_000)
  return {
    rate: (returns.length - 1) / ((returns[returns.length - 1]! - returns[0]!) / 1_000),
    bySlot: mostInOneSecond(taken.map((t) => t.slotUs), 1_000_000),
    byReturn: mostInOneSecond(returns, 1_000),
    p50: percentile(late, 50),
    p99: percentile(late, 99),
    n: taken.length,
    failed
  }
}

const database = await benchDatabase("pacing")
// migrations (0021 carrier_pacing) once, before the workers connect without migrating
await Effect.runPromise(Effect.scoped(Layer.build(Database.layerFromUrl(database.url, { maxConnections: 1 }))))
const redis = await startRedis()
const paths: Record<string, (account: string) => Promise<Run>> = {
  "in-process (baseline)": (account: string) => inProcess(account),
  "PostgreSQL, 2 processes": (account: string) =>
    twoProcesses("postgres", Redacted.value(database.url), account, false),
  "Redis, 2 processes": (account: string) => twoProcesses("redis", redis.url, account, false),
  [`PostgreSQL, 2 processes, tolerance ${tolerance} ms`]: (account: string) =>
    twoProcesses("postgres", Redacted.value(database.url), account, true),
  [`Redis, 2 processes, tolerance ${tolerance} ms`]: (account: string) =>
    twoProcesses("redis", redis.url, account, true)
} as const
type PathName = string
const names = Object.keys(paths)
const results = new Map<PathName, Array<Measured>>(names.map((n) => [n, []]))
try {
  for (let round = 0; round < rounds; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length]!)
    for (const name of order) {
      const m = measure(await paths[name]!(`AC_bench_${round}_${names.indexOf(name)}`))
      results.get(name)!.push(m)
      process.stderr.write(
        `round ${round + 1} ${name}: ${
          m.rate.toFixed(2)
        }/s, max ${m.bySlot} (slots) / ${m.byReturn} (returns) in 1 s, ` +
          `late p50 ${m.p50.toFixed(2)} ms p99 ${m.p99.toFixed(2)} ms, ${m.n} slots, ${m.failed} failed acquires\n`
      )
    }
  }
} finally {
  redis.server.kill("SIGTERM")
  await database.close()
}

const report = (line: string) => process.stdout.write(`${line}\n`)
const load = os.loadavg()
report(
  `\ncarrier pacing: ${cps} calls/s, 2 workers x ${acquirers} acquirers, ${seconds} s per run, medians of ${rounds} ` +
    `alternating rounds; ${os.cpus().length} cores, load ${load.map((l) => l.toFixed(1)).join(" ")}\n`
)
report(
  "| path | achieved calls/s | vs goal | max per 1 s (slots / returns) | latency past slot p50 / p99 (ms) | slots | failed acquires |"
)
report("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for (const name of names) {
  const ms = results.get(name)!
  const rate = median(ms.map((m) => m.rate))
  report(
    `| ${name} | ${rate.toFixed(2)} | ${((rate / cps - 1) * 100).toFixed(2)} % | ${
      Math.max(...ms.map((m) => m.bySlot))
    } / ` +
      `${Math.max(...ms.map((m) => m.byReturn))} | ${median(ms.map((m) => m.p50)).toFixed(2)} / ` +
      `${median(ms.map((m) => m.p99)).toFixed(2)} | ${median(ms.map((m) => m.n))} | ${
        ms.reduce((n, m) => n + m.failed, 0)
      } |`
  )
}
process.exit(0)
