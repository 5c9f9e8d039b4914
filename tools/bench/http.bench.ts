// list-contacts over HTTP (issue 4 goals), beside a baseline in the same run: the minimal
// node:http + pg server of httpListBaseline.ts serving the same page with the same SQL. Both run as
// their own processes against the same embedded PostgreSQL; autocannon drives them in turn.
//
//   npm run bench:http     (BENCH_CONTACTS=1000000 BENCH_OTHER=1000000 BENCH_SECONDS=10 by default)
//   BENCH_PROFILE=dir: the svc server runs with --cpu-prof into dir (summarise with tools/bench/cpuProfileSummary.ts)
import { ApiKeys } from "@svc/store/ApiKeys.ts"
import * as ContactSeed from "@svc/store/ContactSeed.ts"
import * as Database from "@svc/store/Database.ts"
import * as EmbeddedPostgres from "@svc/store/EmbeddedPostgres.ts"
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

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

/** Spawns a server process and waits until `probe` answers (any HTTP status). */
const startProcess = async (args: Array<string>, env: Record<string, string>, probe: string) => {
  const child = spawn(process.execPath, args, {
    cwd: root,
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
    await startProcess([
      ...(process.env["BENCH_PROFILE"] ? ["--cpu-prof", `--cpu-prof-dir=${process.env["BENCH_PROFILE"]}`] : []),
      "apps/server/src/main.ts"
    ], {
      DATABASE_URL: url,
      PORT: String(svcPort),
      LOG_LEVEL: "Warn",
      SVC_RATE_LIMIT: "100000000"
    }, `http://127.0.0.1:${svcPort}/healthz`)
  )
  children.push(
    await startProcess(
      ["tools/bench/httpListBaseline.ts", String(basePort), url, orgId],
      {},
      `http://127.0.0.1:${basePort}/`
    )
  )
  const svcUrl = `http://127.0.0.1:${svcPort}/list-contacts`
  const baseUrl = `http://127.0.0.1:${basePort}/list-contacts`
  // warm both (plans, pools, JIT)
  await load(svcUrl, key, 4)
  await load(baseUrl, undefined, 4)
  const rows: Array<[string, autocannon.Result, autocannon.Result]> = []
  for (const connections of [16, 1]) {
    const base = await load(baseUrl, undefined, connections)
    const svc = await load(svcUrl, key, connections)
    rows.push([`${connections} connection${connections > 1 ? "s" : ""}`, svc, base])
  }
  const check = await (await fetch(svcUrl, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: "{\"limit\":100}"
  })).json() as { total: number; items: Array<unknown> }
  process.stdout.write(
    `list-contacts, limit 100, no filter, exact total (${check.total.toLocaleString()} contacts in the org, ` +
      `${OTHER.toLocaleString()} in 100 others; seeded in ${seedSeconds.toFixed(0)} s); ${SECONDS} s per run; ` +
      `load ${os.loadavg()[0]?.toFixed(1)}\n\n` +
      "| clients | svc req/s | baseline req/s | svc / baseline | svc p50 ms | baseline p50 ms | svc p99 ms | errors (svc, baseline) |\n" +
      "|---|---:|---:|---:|---:|---:|---:|---:|\n" +
      rows.map(([name, svc, base]) =>
        `| ${name} | ${svc.requests.average.toFixed(0)} | ${base.requests.average.toFixed(0)} | ` +
        `${(svc.requests.average / base.requests.average).toFixed(2)} | ${svc.latency.p50} | ${base.latency.p50} | ` +
        `${svc.latency.p99} | ${svc.non2xx + svc.errors}, ${base.non2xx + base.errors} |`
      ).join("\n") + "\n"
  )
  if (check.items.length !== 100) throw new Error("svc did not serve a full page")
} finally {
  for (const child of children) child.kill("SIGTERM")
  await new Promise((resolve) => setTimeout(resolve, 500))
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
}
