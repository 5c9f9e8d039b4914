// Overload without collapse (issue 17 item 2, decision 0546): list-contacts at 16, 64, 256 and 1,024 connections,
// the server with admission control (defaults) beside the same server with it turned off
// (SVC_HTTP_MAX_IN_FLIGHT=0), alternating in the same run. Reports, per level, the median over rounds of: answered
// requests/s (200s), p50/p99 latency of the 200s (the admitted requests), the share refused with 503 and the p99
// of those refusals (how fast excess load is told to go away).
//
// The load generator is here (not autocannon): autocannon's latency mixes 200s and 503s, and the goal is about
// admitted requests. Each connection sends its next request as soon as the last is answered; a client that gets
// 503 retries at once (BENCH_RETRY_AFTER=honour makes it wait the Retry-After instead, as the vendor's clients do).
//
//   npm run bench:overload   (BENCH_CONTACTS=100000 BENCH_SECONDS=5 BENCH_ROUNDS=5 by default)
import { ApiKeys } from "@svc/store/ApiKeys.ts"
import * as ContactSeed from "@svc/store/ContactSeed.ts"
import * as Database from "@svc/store/Database.ts"
import * as EmbeddedPostgres from "@svc/store/EmbeddedPostgres.ts"
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..", "..")
const CONTACTS = Number(process.env["BENCH_CONTACTS"] ?? 100_000)
const SECONDS = Number(process.env["BENCH_SECONDS"] ?? 5)
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 5)
const LEVELS = (process.env["BENCH_LEVELS"] ?? "16,64,256,1024").split(",").map(Number)
const HONOUR_RETRY_AFTER = process.env["BENCH_RETRY_AFTER"] === "honour"

const say = (s: string) => process.stderr.write(`[bench] ${s}\n`)

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const startServer = async (env: Record<string, string>) => {
  const port = await freePort()
  const child = spawn(process.execPath, ["apps/server/src/main.ts"], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: "Warn", SVC_RATE_LIMIT: "1000000000" },
    stdio: ["ignore", "ignore", "inherit"]
  })
  let exited: number | null | undefined
  child.once("exit", (code) => (exited = code))
  for (;;) {
    if (exited !== undefined) throw new Error(`server exited ${exited}`)
    try {
      await fetch(`http://127.0.0.1:${port}/healthz`)
      return { child, port }
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

const quantile = (sorted: ReadonlyArray<number>, q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
const median = (values: ReadonlyArray<number>) => quantile([...values].sort((a, b) => a - b), 0.5)

interface Run {
  readonly okPerSecond: number
  readonly okP50: number
  readonly okP99: number
  readonly refusedShare: number
  readonly refusedP99: number
  readonly errors: number
}

/** `connections` clients on keep-alive sockets, each sending its next request when the last is answered. */
const load = async (port: number, key: string, connections: number): Promise<Run> => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const body = JSON.stringify({ limit: 100 })
  const headers = {
    authorization: `Bearer ${key}`,
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body))
  }
  const ok: Array<number> = []
  const refused: Array<number> = []
  let errors = 0
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const request = http.request(
        { host: "127.0.0.1", port, path: "/list-contacts", method: "POST", agent, headers },
        (response) => {
          response.resume()
          response.on("end", () => resolve(response.statusCode ?? 0))
          response.on("error", reject)
        }
      )
      request.on("error", reject)
      request.end(body)
    })
  const started = performance.now()
  const end = started + SECONDS * 1000
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < end) {
      const t = performance.now()
      try {
        const status = await one()
        const ms = performance.now() - t
        if (status === 200) ok.push(ms)
        else if (status === 503) {
          refused.push(ms)
          if (HONOUR_RETRY_AFTER) await new Promise((resolve) => setTimeout(resolve, 1000))
        } else errors++
      } catch {
        errors++
      }
    }
  }))
  const elapsed = (performance.now() - started) / 1000
  agent.destroy()
  ok.sort((a, b) => a - b)
  refused.sort((a, b) => a - b)
  return {
    okPerSecond: ok.length / elapsed,
    okP50: quantile(ok, 0.5),
    okP99: quantile(ok, 0.99),
    refusedShare: refused.length / Math.max(1, ok.length + refused.length),
    refusedP99: quantile(refused, 0.99),
    errors
  }
}

const scope = Scope.makeUnsafe()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-overload-"))
fs.chmodSync(dataDir, 0o755)
const children: Array<ReturnType<typeof spawn>> = []
try {
  const server = await Effect.runPromise(Scope.provide(EmbeddedPostgres.start({ dataDir }), scope))
  const url = Redacted.value(server.url)
  const setup = Effect.gen(function*() {
    const keys = yield* ApiKeys
    const orgId = yield* keys.createOrg("bench")
    const key = yield* keys.createKey(orgId)
    yield* ContactSeed.load([{ orgId, contacts: CONTACTS }], { seed: 1 })
    return key
  })
  const key = await Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(
        Layer.build(ApiKeys.layer.pipe(Layer.provideMerge(Database.layerFromUrl(server.url)))),
        (context) => Effect.provideContext(setup, context)
      )
    )
  )
  say(`seeded ${CONTACTS} contacts`)
  const gated = await startServer({ DATABASE_URL: url })
  const open = await startServer({ DATABASE_URL: url, SVC_HTTP_MAX_IN_FLIGHT: "0" })
  children.push(gated.child, open.child)
  await load(gated.port, key, 8)
  await load(open.port, key, 8)
  const results = new Map<string, Array<Run>>()
  for (let round = 0; round < ROUNDS; round++) {
    for (const connections of LEVELS) {
      // alternate which server goes first, so neither always runs on a machine warmed by the other
      const order = round % 2 === 0 ? [["with", gated], ["without", open]] as const : [
        ["without", open],
        ["with", gated]
      ] as const
      for (const [name, target] of order) {
        const run = await load(target.port, key, connections)
        const id = `${name}:${connections}`
        results.set(id, [...(results.get(id) ?? []), run])
        say(
          `round ${round + 1} ${id}: ${run.okPerSecond.toFixed(0)}/s p99 ${run.okP99.toFixed(1)} ms, ` +
            `refused ${(run.refusedShare * 100).toFixed(1)} %`
        )
      }
    }
  }
  const cell = (name: string, connections: number, pick: (run: Run) => number) =>
    median((results.get(`${name}:${connections}`) ?? []).map(pick))
  const saturationP99 = cell("with", LEVELS[0]!, (r) => r.okP99)
  process.stdout.write(
    `list-contacts (limit 100, exact total, ${CONTACTS.toLocaleString()} contacts), pool 10; ${SECONDS} s per run, ` +
      `medians of ${ROUNDS} alternating rounds; 503 answered ${
        HONOUR_RETRY_AFTER ? "after Retry-After" : "at once"
      }; ` +
      `${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(1)}\n\n` +
      "| connections | admission | 200/s | p50 ms (200s) | p99 ms (200s) | p99 / p99 at " + LEVELS[0] +
      " with | 503 share | p99 ms (503s) | errors |\n" +
      "|---:|---|---:|---:|---:|---:|---:|---:|---:|\n" +
      LEVELS.flatMap((connections) =>
        ["with", "without"].map((name) =>
          `| ${connections} | ${name} | ${cell(name, connections, (r) => r.okPerSecond).toFixed(0)} | ` +
          `${cell(name, connections, (r) => r.okP50).toFixed(1)} | ${
            cell(name, connections, (r) => r.okP99).toFixed(1)
          } | ` +
          `${(cell(name, connections, (r) => r.okP99) / saturationP99).toFixed(2)} | ` +
          `${(cell(name, connections, (r) => r.refusedShare) * 100).toFixed(1)} % | ` +
          `${cell(name, connections, (r) => r.refusedP99).toFixed(1)} | ${cell(name, connections, (r) => r.errors)} |`
        )
      ).join("\n") + "\n"
  )
} finally {
  for (const child of children) child.kill("SIGTERM")
  await new Promise((resolve) => setTimeout(resolve, 500))
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
}
