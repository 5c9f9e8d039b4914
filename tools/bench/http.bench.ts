// list-contacts over HTTP (issue 4 goals), beside a baseline in the same run: the minimal
// node:http + pg server of httpListBaseline.ts serving the same page with the same SQL. Both run as
// their own processes against the same embedded PostgreSQL; autocannon drives them in turn.
//
//   npm run bench:http     (BENCH_CONTACTS=1000000 BENCH_OTHER=1000000 BENCH_SECONDS=10 by default)
//   BENCH_PROFILE=dir: the svc server runs with --cpu-prof into dir (summarise with tools/bench/cpuProfileSummary.ts)
//   BENCH_SVC_DIR=dir: run the svc server of another checkout (e.g. `git archive` of an older commit with this
//   checkout's node_modules linked), to measure before and after against the same bare handler
//   --rounds N (default 5): N rounds per connection count, svc and baseline alternating which goes first; the
//   table gives medians and the ratio of each round (issue 17, item 5: never a single run or a mean)
//   BENCH_SVC_B_DIR=dir: a second svc server from another checkout (with its own node_modules) in every round, its
//     figures beside svc's: an A/B of two versions of the product in the same rounds, on the same data
//   BENCH_EFFECT_FLOOR=1: a third server in every round, the fixed stack's floor (httpListEffectFloor.ts: Effect's
//   HTTP server and @effect/sql-pg answering like the bare handler, nothing of svc); the order of the three rotates
import * as ContactSeed from "@svc/store/contacts/ContactSeed.ts"
import * as Database from "@svc/store/db/Database.ts"
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import { ApiKeys } from "@svc/store/orgs/ApiKeys.ts"
import autocannon from "autocannon"
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..", "..")
const CONTACTS = Number(process.env["BENCH_CONTACTS"] ?? 1_000_000)
const OTHER = Number(process.env["BENCH_OTHER"] ?? 1_000_000)
const SECONDS = Number(process.env["BENCH_SECONDS"] ?? 10)
const roundsAt = process.argv.indexOf("--rounds")
const ROUNDS = roundsAt === -1 ? 5 : Number(process.argv[roundsAt + 1])
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error("--rounds takes a whole number >= 1")

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const TICK_MS = 1000 / 100
/** CPU milliseconds (user + system) a process has used so far, from /proc (Linux clock ticks of 10 ms). */
const cpuMs = (pid: number | undefined): number => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS
}

/** Spawns a server process and waits until `probe` answers (any HTTP status). */
const startProcess = async (args: Array<string>, env: Record<string, string>, probe: string, cwd = root) => {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit"]
  })
  let exited: number | null | undefined
  child.once("exit", (code) => (exited = code))
  for (;;) {
    if (exited !== undefined) throw new Error(`${args.join(" ")} exited ${exited}`)
    try {
      await fetch(probe, { method: "POST", body: "{}" })
      return child
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

const load = (url: string, key: string | undefined, connections: number) =>
  autocannon({
    url,
    method: "POST",
    body: JSON.stringify({ limit: 100 }),
    headers: { "content-type": "application/json", ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
    connections,
    duration: SECONDS
  })

const scope = Scope.makeUnsafe()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-http-"))
fs.chmodSync(dataDir, 0o755)
const children: Array<ReturnType<typeof spawn>> = []
/** Each side's server process, for its CPU time. */
const pids = new Map<string, number | undefined>()
try {
  const say = (s: string) => process.stderr.write(`[bench] ${s}\n`)
  const server = await Effect.runPromise(Scope.provide(EmbeddedPostgres.start({ dataDir }), scope))
  say("database started")
  const url = Redacted.value(server.url)
  const setup = Effect.gen(function*() {
    const keys = yield* ApiKeys
    const orgId = yield* keys.createOrg("bench")
    const key = yield* keys.createKey(orgId)
    const others: Array<ContactSeed.SeedPlan> = []
    for (let i = 0; i < 100; i++) {
      others.push({ orgId: yield* keys.createOrg(`other ${i}`), contacts: Math.floor(OTHER / 100) })
    }
    const started = Date.now()
    yield* ContactSeed.load([{ orgId, contacts: CONTACTS }, ...others], { seed: 1 })
    return { orgId, key, seedSeconds: (Date.now() - started) / 1000 }
  })
  const { key, orgId, seedSeconds } = await Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(
        Layer.build(ApiKeys.layer.pipe(Layer.provideMerge(Database.layerFromUrl(server.url)))),
        (context) => Effect.provideContext(setup, context)
      )
    )
  )
  say(`seeded in ${seedSeconds.toFixed(0)} s`)
  const svcPort = await freePort()
  const basePort = await freePort()
  children.push(
    await startProcess(
      [
        ...(process.env["BENCH_PROFILE"] ? ["--cpu-prof", `--cpu-prof-dir=${process.env["BENCH_PROFILE"]}`] : []),
        "apps/server/src/main.ts"
      ],
      {
        DATABASE_URL: url,
        PORT: String(svcPort),
        LOG_LEVEL: "Warn",
        SVC_RATE_LIMIT: "100000000"
      },
      `http://127.0.0.1:${svcPort}/healthz`,
      process.env["BENCH_SVC_DIR"] ?? root
    )
  )
  pids.set("svc", children.at(-1)!.pid)
  children.push(
    await startProcess(
      ["tools/bench/httpListBaseline.ts", String(basePort), url, orgId],
      {},
      `http://127.0.0.1:${basePort}/`
    )
  )
  pids.set("base", children.at(-1)!.pid)
  const svcBDir = process.env["BENCH_SVC_B_DIR"]
  const svcBPort = await freePort()
  if (svcBDir !== undefined) {
    children.push(
      await startProcess(
        ["apps/server/src/main.ts"],
        { DATABASE_URL: url, PORT: String(svcBPort), LOG_LEVEL: "Warn", SVC_RATE_LIMIT: "100000000" },
        `http://127.0.0.1:${svcBPort}/healthz`,
        svcBDir
      )
    )
    pids.set("svcB", children.at(-1)!.pid)
  }
  const withFloor = process.env["BENCH_EFFECT_FLOOR"] === "1"
  const floorPort = await freePort()
  if (withFloor) {
    children.push(
      await startProcess(
        ["tools/bench/httpListEffectFloor.ts", String(floorPort), url, orgId],
        {},
        `http://127.0.0.1:${floorPort}/list-contacts`
      )
    )
    pids.set("floor", children.at(-1)!.pid)
  }
  const svcUrl = `http://127.0.0.1:${svcPort}/list-contacts`
  const baseUrl = `http://127.0.0.1:${basePort}/list-contacts`
  const floorUrl = `http://127.0.0.1:${floorPort}/list-contacts`
  const svcBUrl = `http://127.0.0.1:${svcBPort}/list-contacts`
  // warm them (plans, pools, JIT)
  await load(svcUrl, key, 4)
  await load(baseUrl, undefined, 4)
  if (withFloor) await load(floorUrl, undefined, 4)
  if (svcBDir !== undefined) await load(svcBUrl, key, 4)
  interface Round {
    readonly svc: autocannon.Result
    readonly base: autocannon.Result
    readonly floor: autocannon.Result | undefined
    readonly svcB: autocannon.Result | undefined
    /** Server CPU per request of each side, µs (the server process only; PostgreSQL's is not in it). */
    readonly cpu: ReadonlyMap<string, number>
  }
  const rows: Array<[string, Array<Round>]> = []
  for (const connections of [16, 1]) {
    const rounds: Array<Round> = []
    for (let round = 0; round < ROUNDS; round++) {
      // rotate who goes first, so that no side always runs on a machine another just warmed or loaded
      const results = new Map<string, autocannon.Result>()
      const cpu = new Map<string, number>()
      const sides: Array<[string, string, string | undefined]> = [
        ["base", baseUrl, undefined],
        ["svc", svcUrl, key],
        ...(withFloor ? [["floor", floorUrl, undefined] as [string, string, string | undefined]] : []),
        ...(svcBDir !== undefined ? [["svcB", svcBUrl, key] as [string, string, string | undefined]] : [])
      ]
      for (let i = 0; i < sides.length; i++) {
        const [name, target, auth] = sides[(round + i) % sides.length]!
        const before = cpuMs(pids.get(name))
        const result = await load(target, auth, connections)
        results.set(name, result)
        cpu.set(name, ((cpuMs(pids.get(name)) - before) * 1000) / Math.max(1, result.requests.total))
      }
      const svc = results.get("svc")!
      const base = results.get("base")!
      const floor = results.get("floor")
      rounds.push({ svc, base, floor, svcB: results.get("svcB"), cpu })
      say(
        `${connections} connections, round ${round + 1}: svc ${svc.requests.average.toFixed(0)} req/s, ` +
          `baseline ${base.requests.average.toFixed(0)} req/s` +
          (floor === undefined ? "" : `, effect floor ${floor.requests.average.toFixed(0)} req/s`)
      )
    }
    rows.push([`${connections} connection${connections > 1 ? "s" : ""}`, rounds])
  }
  const check = await (await fetch(svcUrl, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: "{\"limit\":100}"
  })).json() as { total: number; items: Array<unknown> }
  process.stdout.write(
    `list-contacts, limit 100, no filter, exact total (${check.total.toLocaleString()} contacts in the org, ` +
      `${OTHER.toLocaleString()} in 100 others; seeded in ${seedSeconds.toFixed(0)} s); ${ROUNDS} alternating ` +
      `rounds of ${SECONDS} s per side; load ${os.loadavg()[0]?.toFixed(1)}; medians; the page ` +
      `${/[\u0100-\uffff]/.test(JSON.stringify(check.items)) ? "has a" : "has no"} character past U+00FF (then a ` +
      "two-byte string in V8: docs/benchmarks.md)\n\n" +
      "| clients | svc req/s | baseline req/s | svc / baseline (median of rounds) | per-round ratios | " +
      "svc p50 ms | baseline p50 ms | svc p99 ms | baseline p99 ms | errors (svc, baseline) |\n" +
      "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|\n" +
      rows.map(([name, rounds]) => {
        const ratios = rounds.map((r) => r.svc.requests.average / r.base.requests.average)
        const of = (pick: (r: Round) => number) => median(rounds.map(pick))
        return `| ${name} | ${of((r) => r.svc.requests.average).toFixed(0)} | ` +
          `${of((r) => r.base.requests.average).toFixed(0)} | ${median(ratios).toFixed(2)} | ` +
          `${ratios.map((r) => r.toFixed(2)).join(", ")} | ${of((r) => r.svc.latency.p50)} | ` +
          `${of((r) => r.base.latency.p50)} | ${of((r) => r.svc.latency.p99)} | ${of((r) => r.base.latency.p99)} | ` +
          `${rounds.reduce((n, r) => n + r.svc.non2xx + r.svc.errors, 0)}, ` +
          `${rounds.reduce((n, r) => n + r.base.non2xx + r.base.errors, 0)} |`
      }).join("\n") + "\n"
  )
  if (withFloor) {
    process.stdout.write(
      "\nThe fixed stack's floor (httpListEffectFloor.ts) in the same rounds:\n\n" +
        "| clients | floor req/s | baseline req/s | floor / baseline (median of rounds) | per-round ratios | " +
        "svc / floor (median) | floor p50 ms | floor p99 ms | errors |\n|---|---:|---:|---:|---|---:|---:|---:|---:|\n" +
        rows.map(([name, rounds]) => {
          const ratios = rounds.map((r) => r.floor!.requests.average / r.base.requests.average)
          const svcOverFloor = rounds.map((r) => r.svc.requests.average / r.floor!.requests.average)
          const of = (pick: (r: Round) => number) => median(rounds.map(pick))
          return `| ${name} | ${of((r) => r.floor!.requests.average).toFixed(0)} | ` +
            `${of((r) => r.base.requests.average).toFixed(0)} | ${median(ratios).toFixed(2)} | ` +
            `${ratios.map((r) => r.toFixed(2)).join(", ")} | ${median(svcOverFloor).toFixed(2)} | ` +
            `${of((r) => r.floor!.latency.p50)} | ${of((r) => r.floor!.latency.p99)} | ` +
            `${rounds.reduce((n, r) => n + r.floor!.non2xx + r.floor!.errors, 0)} |`
        }).join("\n") + "\n"
    )
  }
  process.stdout.write(
    "\nServer CPU per request (µs, user + system of the server process, medians of the rounds; lower is better):\n\n" +
      `| clients | svc | baseline | svc / baseline | per-round ratios |${withFloor ? " floor | svc / floor |" : ""}\n` +
      `|---|---:|---:|---:|---|${withFloor ? "---:|---:|" : ""}\n` +
      rows.map(([name, rounds]) => {
        const of = (side: string) => median(rounds.map((r) => r.cpu.get(side)!))
        const ratios = rounds.map((r) => r.cpu.get("svc")! / r.cpu.get("base")!)
        return `| ${name} | ${of("svc").toFixed(0)} | ${of("base").toFixed(0)} | ${median(ratios).toFixed(2)} | ` +
          `${ratios.map((r) => r.toFixed(2)).join(", ")} |` +
          (withFloor
            ? ` ${of("floor").toFixed(0)} | ${
              median(rounds.map((r) => r.cpu.get("svc")! / r.cpu.get("floor")!)).toFixed(2)
            } |`
            : "")
      }).join("\n") + "\n"
  )
  if (svcBDir !== undefined) {
    process.stdout.write(
      `\nsvc B (${svcBDir}) in the same rounds:\n\n` +
        "| clients | svc B req/s | svc / svc B (median of rounds) | per-round ratios | svc B / baseline | " +
        "CPU µs/request svc B | CPU svc / svc B |\n|---|---:|---:|---|---:|---:|---:|\n" +
        rows.map(([name, rounds]) => {
          const ratios = rounds.map((r) => r.svc.requests.average / r.svcB!.requests.average)
          return `| ${name} | ${median(rounds.map((r) => r.svcB!.requests.average)).toFixed(0)} | ` +
            `${median(ratios).toFixed(2)} | ${ratios.map((r) => r.toFixed(2)).join(", ")} | ` +
            `${median(rounds.map((r) => r.svcB!.requests.average / r.base.requests.average)).toFixed(2)} | ` +
            `${median(rounds.map((r) => r.cpu.get("svcB")!)).toFixed(0)} | ` +
            `${median(rounds.map((r) => r.cpu.get("svc")! / r.cpu.get("svcB")!)).toFixed(2)} |`
        }).join("\n") + "\n"
    )
  }
  if (check.items.length !== 100) throw new Error("svc did not serve a full page")
  if (withFloor) {
    // the floor must serve the same page (not errors, which would be cheap): same items as svc, in the same order
    const floorCheck = await (await fetch(floorUrl, { method: "POST", body: "{\"limit\":100}" })).json() as {
      total: number
      items: Array<unknown>
    }
    if (
      floorCheck.total !== check.total || JSON.stringify(floorCheck.items) !== JSON.stringify(check.items)
    ) throw new Error("the floor's page differs from svc's")
  }
} finally {
  for (const child of children) child.kill("SIGTERM")
  await new Promise((resolve) => setTimeout(resolve, 500))
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
}
