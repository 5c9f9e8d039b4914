// list-calls at scale (issue 13, performance): CallsApiRepo.list against the same SQL through a bare `pg` client,
// measured in the same run, on 1,000,000 calls in one org plus 200,000 over 20 other orgs (CallsSeed: batches,
// agents, statuses, numbers, timestamps, metadata and analysis spread as after real dialling). Goals from the issue:
//   - first page with a batch_call_id filter and include_total: within 1.5x of the same bare SQL (page + count);
//   - a cursor page 1,000 within 1.2x of page 1.
//
//   npm run bench:listcalls            LISTCALLS_BENCH_SCALE=0.1 for 100,000 + 20,000; LISTCALLS_BENCH_REPS=n
//
// Runs on an embedded PostgreSQL in a temporary directory with the settings of the contacts benchmark, removed at
// the end. Each scenario's two paths alternate (and swap order every repetition), so background load on a shared
// machine hits both alike; medians over the repetitions. The bare path runs exactly the statements the repository
// builds (CallsApiRepo.listStatements): unnamed where the repository runs them unprepared (filtered statements),
// named where it prepares them, the count on a second connection in parallel as the repository does. Prints a
// Markdown table; the exit code is 0 either way (a loaded machine is not a regression).
//
// Through HTTP (LISTCALLS_BENCH_HTTP=0 to skip): svc's server in its own process (apps/server/src/main.ts) against a
// minimal node:http server, also in its own process (tools/bench/httpListCallsBaseline.ts; until 2026-11-29 it ran
// in this process, beside the client), that answers the same request with the same two statements and no auth,
// validation or pagination key: what PostgreSQL plus Node can do at best (as tools/bench/httpListBaseline.ts). The
// "HTTP floor" rows put the fixed stack alone (tools/bench/httpListCallsEffectFloor.ts) against the same bare server.
// LISTCALLS_BENCH_SERVER_ARGS="--cpu-prof --cpu-prof-dir=DIR" profiles svc's process (summary: cpuProfileSummary.ts).
import { ListCallsBody } from "@svc/domain/models/Call.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import * as CallsApi from "@svc/store/calls/CallsApiRepo.ts"
import { CursorKeys } from "@svc/store/db/CursorKeys.ts"
import * as Database from "@svc/store/db/Database.ts"
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import { ApiKeys } from "@svc/store/orgs/ApiKeys.ts"
import * as CallsSeed from "@svc/store/test-support/CallsSeed.ts"
import { Effect, Exit, Layer, ManagedRuntime, Redacted, Schema, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { HISTORY_SETTINGS } from "./support/BenchSupport.ts"

const scale = Number(process.env["LISTCALLS_BENCH_SCALE"] ?? 1)
const REPS = Number(process.env["LISTCALLS_BENCH_REPS"] ?? 60)
const BIG = Math.round(1_000_000 * scale)
const OTHER_ORGS = 20
const OTHER = Math.round(10_000 * scale)
const ORG = OrgId.make("org-a")
const NOW = 1_800_000_000_000
const LIMIT = 100

const SETTINGS = HISTORY_SETTINGS

const log = (line: string) => process.stderr.write(`${line}\n`)
const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}
const median = (values: ReadonlyArray<number>) => quantile(values, 0.5)
const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2))

const loadAtStart = os.loadavg()
const scope = Scope.makeUnsafe()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-listcalls-"))
fs.chmodSync(dataDir, 0o755)
const server = await Effect.runPromise(
  Scope.provide(EmbeddedPostgres.start({ dataDir, database: "bench", settings: SETTINGS }), scope)
)
const urlOf = (database: string) => {
  const parsed = new URL(Redacted.value(server.adminUrl))
  parsed.pathname = `/${database}`
  return Redacted.make(parsed.toString())
}

const children: Array<ChildProcess> = []

/** Waits until `child` answers HTTP at `url` (any status), 60 s at most. */
const answering = async (child: ChildProcess, url: string, what: string) => {
  for (let tries = 0;; tries++) {
    if (child.exitCode !== null || tries > 600) throw new Error(`${what} did not start (${child.exitCode})`)
    try {
      await fetch(url)
      return
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

const main = async () => {
  // -------------------------------------------------------------------------------------------------------------
  // 1. The data set, seeded by SQL (migrations run first: every index of the product is there while it loads)
  // -------------------------------------------------------------------------------------------------------------
  const others = Array.from({ length: OTHER_ORGS }, (_, k) => `org-${String(k).padStart(2, "0")}`)
  log(`scale ${scale}: ${BIG} calls in ${ORG} + ${OTHER * OTHER_ORGS} over ${OTHER_ORGS} orgs`)
  const seedMs = await Effect.runPromise(Effect.scoped(
    Effect.flatMap(
      Layer.build(Database.layerFromUrl(urlOf("bench"), { maxConnections: 2 })),
      (context) =>
        Effect.provideContext(
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            for (const orgId of [ORG, ...others]) {
              yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, ${orgId}, 0)`
            }
            const started = performance.now()
            // the other orgs first and last, the big org in between: its rows are not at the heap's start
            yield* CallsSeed.load([
              ...others.slice(0, 10).map((orgId) => ({ orgId, calls: OTHER })),
              { orgId: ORG, calls: BIG },
              ...others.slice(10).map((orgId) => ({ orgId, calls: OTHER }))
            ], { now: NOW })
            return performance.now() - started
          }),
          context
        )
    )
  ))
  log(`seeded in ${(seedMs / 1000).toFixed(1)} s`)

  // -------------------------------------------------------------------------------------------------------------
  // 2. The two paths
  // -------------------------------------------------------------------------------------------------------------
  const runtime = ManagedRuntime.make(
    CallsApi.CallsApiRepo.layer.pipe(
      Layer.provideMerge(CursorKeys.layer),
      Layer.provideMerge(Database.layerFromUrl(urlOf("bench"), { migrate: false, maxConnections: 4 }))
    )
  )
  const decode = Schema.decodeUnknownSync(ListCallsBody)
  const viaRepo = (body: Record<string, unknown>) =>
    runtime.runPromise(Effect.gen(function*() {
      const repo = yield* CallsApi.CallsApiRepo
      return yield* repo.list(ORG, decode(body))
    }))

  const client = new pg.Client({ connectionString: Redacted.value(urlOf("bench")) })
  await client.connect()
  const countClient = new pg.Client({ connectionString: Redacted.value(urlOf("bench")) })
  await countClient.connect()
  let statementNames = 0
  const names = new Map<string, string>()
  const run = (statement: { text: string; params: Array<unknown> }, custom: boolean, on: pg.Client = client) => {
    if (custom) return on.query(statement.text, statement.params)
    let name = names.get(`${on === client}${statement.text}`)
    if (name === undefined) names.set(`${on === client}${statement.text}`, name = `calls_${++statementNames}`)
    return on.query({ name, text: statement.text, values: statement.params })
  }
  /** The repository's statements for `body` at `after`, run bare: the page, and the count in parallel if asked. */
  const bare = (body: Record<string, unknown>, after?: { sortValue: number; callId: string }) => {
    const request = decode(body)
    const s = CallsApi.listStatements(ORG, request, after)
    return () =>
      request.include_total && after === undefined
        ? Promise.all([run(s.page, s.custom), run(s.count, s.custom, countClient)])
        : run(s.page, s.custom)
  }

  interface Scenario {
    readonly name: string
    readonly a: () => Promise<unknown>
    readonly b: () => Promise<unknown>
    readonly matches: number
    readonly labels: readonly [string, string]
    readonly reps?: number
  }
  const scenarios: Array<Scenario> = []
  const byBatch = (batch: string) => ({ batch_call_id: { type: "string", value: batch } })

  /** The key of page `n` (1-based) of `body`, walking the pages through the repository as a client would. */
  const keyOfPage = async (body: Record<string, unknown>, n: number) => {
    let key: string | undefined
    for (let page = 1; page < n; page++) {
      key = (await viaRepo({ ...body, ...(key === undefined ? {} : { pagination_key: key }) })).pagination_key
      if (key === undefined) throw new Error(`${JSON.stringify(body)} has fewer than ${n} pages`)
    }
    return key!
  }

  const count = async (filter: Record<string, unknown>) =>
    (await viaRepo({ limit: 1, include_total: true, filter_criteria: filter })).total ?? 0

  // (a) first page with a batch filter and include_total, repository against the same bare SQL
  const big = CallsSeed.bigBatch(ORG)
  const small = CallsSeed.smallBatch(ORG, 40)
  for (const [label, batch] of [["the long-running batch", big], ["a batch of ~1,000", small]] as const) {
    const body = { limit: LIMIT, include_total: true, filter_criteria: byBatch(batch) }
    scenarios.push({
      name: `batch_call_id = ${label}, first page + include_total`,
      a: () => viaRepo(body),
      b: bare(body),
      matches: await count(byBatch(batch)),
      labels: ["CallsApiRepo.list", "bare pg, same SQL"]
    })
  }

  // (b) a cursor page 1,000 against page 1, through the repository, unfiltered and within the big batch. In
  // descending order (the default) page 1 holds the org's calls in flight (the newest 200: no analysis yet, so a
  // smaller get-call object to build) and page 1,000 finished ones; in ascending order both pages hold finished
  // calls, which isolates what depth costs.
  const DEEP = Math.max(2, Math.min(1000, Math.floor(BIG / LIMIT / 5)))
  for (
    const [label, filter, matches] of [
      ["no filter", undefined, BIG],
      ["the long-running batch", byBatch(big), await count(byBatch(big))]
    ] as const
  ) {
    for (const sort_order of ["descending", "ascending"] as const) {
      const base = { limit: LIMIT, sort_order, ...(filter === undefined ? {} : { filter_criteria: filter }) }
      const pages = Math.min(DEEP, Math.floor(matches / LIMIT) - 1)
      const key = await keyOfPage({ ...base, include_total: true }, pages)
      scenarios.push({
        name: `${label}, ${sort_order}: cursor page ${pages.toLocaleString("en-US")} (total carried) vs page 1`,
        a: () => viaRepo({ ...base, include_total: true, pagination_key: key }),
        b: () => viaRepo(base),
        matches,
        labels: [`repo, page ${pages}`, "repo, page 1"]
      })
      if (filter === undefined && sort_order === "descending") {
        // the same depth against page 3, the first page past the calls in flight: finished calls on both sides
        const near = await keyOfPage({ ...base, include_total: true }, 3)
        scenarios.push({
          name: `${label}, ${sort_order}: cursor page ${pages.toLocaleString("en-US")} vs cursor page 3`,
          a: () => viaRepo({ ...base, include_total: true, pagination_key: key }),
          b: () => viaRepo({ ...base, include_total: true, pagination_key: near }),
          matches,
          labels: [`repo, page ${pages}`, "repo, page 3"]
        })
      }
    }
  }

  // (c) the cost of a selective filter without an index (decision 0511): a metadata value 1 call in 50,000 has, so
  // the page walks the org's whole list. Few repetitions: each reads every call of the org.
  {
    const filter = { metadata: [{ key: "customer_id", type: "string", value: "cus_123" }] }
    const body = { limit: LIMIT, filter_criteria: filter }
    scenarios.push({
      name: "metadata customer_id = cus_123 (no index), first page",
      a: () => viaRepo(body),
      b: bare(body),
      matches: await count(filter),
      labels: ["CallsApiRepo.list", "bare pg, same SQL"],
      reps: 6
    })
  }

  // (d) the batch first page + include_total through HTTP
  if (process.env["LISTCALLS_BENCH_HTTP"] !== "0") {
    const apiKey = await Effect.runPromise(Effect.scoped(
      Effect.flatMap(
        Layer.build(ApiKeys.layer.pipe(Layer.provideMerge(Database.layerFromUrl(urlOf("bench"), { migrate: false })))),
        (context) =>
          Effect.provideContext(
            Effect.gen(function*() {
              const keys = yield* ApiKeys
              return yield* keys.createKey(ORG)
            }),
            context
          )
      )
    ))
    const freePort = () =>
      new Promise<number>((resolve) => {
        const probe = net.createServer().listen(0, "127.0.0.1", () => {
          const port = (probe.address() as net.AddressInfo).port
          probe.close(() => resolve(port))
        })
      })
    const svcPort = await freePort()
    // LISTCALLS_BENCH_SERVER_ARGS: Node options for svc's process, e.g. `--cpu-prof --cpu-prof-dir=DIR` to profile it
    const serverArgs = (process.env["LISTCALLS_BENCH_SERVER_ARGS"] ?? "").split(" ").filter((arg) => arg !== "")
    const child = spawn(process.execPath, [...serverArgs, "apps/server/src/main.ts"], {
      cwd: path.resolve(import.meta.dirname, "..", ".."),
      env: {
        ...process.env,
        DATABASE_URL: Redacted.value(urlOf("bench")),
        PORT: String(svcPort),
        LOG_LEVEL: "Warn",
        SVC_RATE_LIMIT: "100000000"
      },
      stdio: ["ignore", "ignore", "inherit"]
    })
    children.push(child)
    await answering(child, `http://127.0.0.1:${svcPort}/healthz`, "svc server")
    // the bare server in a process of its own, as svc's is (tools/bench/httpListCallsBaseline.ts)
    const basePort = await freePort()
    const bare = spawn(
      process.execPath,
      ["tools/bench/httpListCallsBaseline.ts", String(basePort), Redacted.value(urlOf("bench")), ORG],
      { cwd: path.resolve(import.meta.dirname, "..", ".."), stdio: ["ignore", "pipe", "inherit"] }
    )
    children.push(bare)
    await new Promise<void>((resolve, reject) => {
      bare.stdout!.once("data", () => resolve())
      bare.once("exit", (code) => reject(new Error(`the bare server exited (${code})`)))
    })
    const post = (url: string, body: unknown, auth?: string) => async () => {
      const response = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(auth === undefined ? {} : { authorization: `Bearer ${auth}` })
        },
        body: JSON.stringify(body)
      })
      const parsed = await response.json() as { items?: Array<unknown> }
      if (response.status !== 200 || parsed.items === undefined) {
        throw new Error(`${url}: ${response.status} ${JSON.stringify(parsed).slice(0, 200)}`)
      }
      return parsed
    }
    // the fixed stack alone (Effect's HTTP server and @effect/sql-pg, nothing of svc): tools/bench/httpListCallsEffectFloor.ts
    const floorPort = await freePort()
    const floor = spawn(
      process.execPath,
      ["tools/bench/httpListCallsEffectFloor.ts", String(floorPort), Redacted.value(urlOf("bench")), ORG],
      { cwd: path.resolve(import.meta.dirname, "..", ".."), stdio: ["ignore", "ignore", "inherit"] }
    )
    children.push(floor)
    await answering(floor, `http://127.0.0.1:${floorPort}/`, "the Effect floor")
    for (const [label, batch] of [["the long-running batch", big], ["a batch of ~1,000", small]] as const) {
      const body = { limit: LIMIT, include_total: true, filter_criteria: byBatch(batch) }
      const matches = await count(byBatch(batch))
      scenarios.push({
        name: `HTTP: batch_call_id = ${label}, first page + include_total`,
        a: post(`http://127.0.0.1:${svcPort}/v3/list-calls`, body, apiKey),
        b: post(`http://127.0.0.1:${basePort}/`, body),
        matches,
        labels: ["svc POST /v3/list-calls", "node:http + pg, same SQL"]
      })
      scenarios.push({
        name: `HTTP floor: batch_call_id = ${label}, first page + include_total`,
        a: post(`http://127.0.0.1:${floorPort}/`, body),
        b: post(`http://127.0.0.1:${basePort}/`, body),
        matches,
        labels: ["Effect http + sql-pg alone", "node:http + pg, same SQL"]
      })
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // 3. Measure
  // -------------------------------------------------------------------------------------------------------------
  const time = async (f: () => Promise<unknown>) => {
    const started = performance.now()
    await f()
    return performance.now() - started
  }
  const rows: Array<string> = []
  const ratios = new Map<string, number>()
  for (const scenario of scenarios) {
    const reps = scenario.reps ?? REPS
    for (let i = 0; i < Math.min(5, reps); i++) {
      await scenario.a()
      await scenario.b()
    }
    const a: Array<number> = []
    const b: Array<number> = []
    for (let i = 0; i < reps; i++) {
      if (i % 2 === 0) {
        a.push(await time(scenario.a))
        b.push(await time(scenario.b))
      } else {
        b.push(await time(scenario.b))
        a.push(await time(scenario.a))
      }
    }
    const ratio = median(a) / median(b)
    ratios.set(scenario.name, ratio)
    const row = `| ${scenario.name} | ${scenario.matches.toLocaleString("en-US")} | ${scenario.labels[0]}: ${
      fmt(median(a))
    } / ${fmt(quantile(a, 0.95))} | ${scenario.labels[1]}: ${fmt(median(b))} / ${fmt(quantile(b, 0.95))} | ${
      ratio.toFixed(2)
    }x | ${reps} |`
    rows.push(row)
    log(row)
  }
  await client.end()
  await countClient.end()
  await runtime.dispose()

  process.stdout.write(
    [
      `list-calls benchmark, scale ${scale}: ${BIG.toLocaleString("en-US")} calls in ${ORG} + ${
        (OTHER * OTHER_ORGS).toLocaleString("en-US")
      } over ${OTHER_ORGS} orgs, seeded by SQL in ${
        (seedMs / 1000).toFixed(1)
      } s (indexes and VACUUM ANALYZE included); ${os.cpus().length} cores; PostgreSQL embedded with ${
        Object.entries(SETTINGS).map(([k, v]) => `${k}=${v}`).join(" ")
      }`,
      "",
      `Times in ms, p50 / p95 over the alternating repetitions, one client; ratio = first p50 / second p50. ` +
      `Load average at start ${loadAtStart.map((n) => n.toFixed(1)).join(" ")}, at end ${
        os.loadavg().map((n) => n.toFixed(1)).join(" ")
      } (a shared machine).`,
      "",
      "| query (org A, limit 100) | matches | measured | baseline | ratio |",
      "|---|---|---|---|---|",
      ...rows,
      "",
      `Goals: batch first page + total <= 1.5x of the bare SQL; cursor page ${DEEP} <= 1.2x of page 1.`
    ].join("\n") + "\n"
  )
}

try {
  await main()
} finally {
  // the children exit before the database goes (a profiled one writes its profile on the way out), 10 s at most
  await Promise.all(children.map((child) =>
    child.exitCode !== null ? undefined : new Promise((resolve) => {
      const timer = setTimeout(resolve, 10_000)
      child.once("exit", () => resolve(clearTimeout(timer)))
      child.kill("SIGTERM")
    })
  ))
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
}
