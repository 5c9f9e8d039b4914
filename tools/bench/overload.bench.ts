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
//
// Small create-batch-calls (issue 27 item 7, decision 0547): BENCH_ENDPOINT=create-batch-call sends batches of one
// task (a new batch each: the names differ) at BENCH_LEVELS (default 10,25,50,100,200 here) and reports, per level
// and server, the success rate (200s among all answers) and p50/p99 of all answers and of the 200s, first for one
// burst of that many requests sent at once from idle (what a CRM sync does), then for connections that keep
// sending. BENCH_BASELINE=<checkout> adds that checkout's server beside this one (e.g. a worktree of the commit
// before, made with tools/bench/support/benchWorktree.sh): before and after in the same run on the same database.
//
//   BENCH_ENDPOINT=create-batch-call BENCH_BASELINE=../wt-abc1234 node tools/bench/overload.bench.ts
import * as ContactSeed from "@svc/store/contacts/ContactSeed.ts"
import * as Database from "@svc/store/db/Database.ts"
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import { ApiKeys } from "@svc/store/orgs/ApiKeys.ts"
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import { SqlClient } from "effect/sql"
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
const ENDPOINT = process.env["BENCH_ENDPOINT"] === "create-batch-call" ? "create-batch-call" : "list-contacts"
const BASELINE = process.env["BENCH_BASELINE"]
const CREATE_LEVELS = (process.env["BENCH_LEVELS"] ?? "10,25,50,100,200").split(",").map(Number)

const say = (s: string) => process.stderr.write(`[bench] ${s}\n`)

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const startServer = async (env: Record<string, string>, checkout = root) => {
  const port = await freePort()
  const child = spawn(process.execPath, ["apps/server/src/main.ts"], {
    cwd: checkout,
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
  /** p50 and p99 of every answer, 200 or 503 */
  readonly allP50: number
  readonly allP99: number
  readonly okPerSecond: number
  readonly okP50: number
  readonly okP99: number
  readonly refusedShare: number
  readonly refusedP99: number
  readonly errors: number
}

let batchNames = 0
/** The endpoint's path and a body for its next request (create-batch-call: a new batch of one task each time). */
const requestFor = (): { path: string; body: string } =>
  ENDPOINT === "list-contacts"
    ? { path: "/list-contacts", body: JSON.stringify({ limit: 100 }) }
    : {
      path: "/create-batch-call",
      body: JSON.stringify({
        from_number: "+14155550100",
        name: `bench ${process.pid} ${++batchNames}`,
        trigger_timestamp: 4_000_000_000_000,
        tasks: [{ to_number: `+1415555${String(batchNames % 10_000).padStart(4, "0")}` }]
      })
    }

/** How many 503s gave each reason (the message without its numbers), for the log. */
const refusals = new Map<string, number>()
const noteRefusal = (body: string) => {
  const reason = body.replace(/\d+/g, "N")
  refusals.set(reason, (refusals.get(reason) ?? 0) + 1)
}

/** One request on `agent`: its status. */
const send = (port: number, key: string, agent: http.Agent) =>
  new Promise<number>((resolve, reject) => {
    const { body, path: target } = requestFor()
    const headers = {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(body))
    }
    const request = http.request(
      { host: "127.0.0.1", port, path: target, method: "POST", agent, headers },
      (response) => {
        let text = ""
        if (response.statusCode === 503) response.on("data", (chunk) => (text += chunk))
        else response.resume()
        response.on("end", () => {
          if (text !== "") noteRefusal(text)
          resolve(response.statusCode ?? 0)
        })
        response.on("error", reject)
      }
    )
    request.on("error", reject)
    request.end(body)
  })

/** `connections` clients on keep-alive sockets, each sending its next request when the last is answered. */
const load = async (port: number, key: string, connections: number): Promise<Run> => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const ok: Array<number> = []
  const refused: Array<number> = []
  let errors = 0
  const one = () => send(port, key, agent)
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
  // concat, not push(...): a long run's latencies are more arguments than a call takes
  const all = ok.concat(refused).sort((a, b) => a - b)
  return {
    allP50: quantile(all, 0.5),
    allP99: quantile(all, 0.99),
    okPerSecond: ok.length / elapsed,
    okP50: quantile(ok, 0.5),
    okP99: quantile(ok, 0.99),
    refusedShare: refused.length / Math.max(1, ok.length + refused.length),
    refusedP99: quantile(refused, 0.99),
    errors
  }
}

interface Burst {
  readonly ok: number
  readonly p50: number
  readonly p99: number
}

/**
 * `count` requests sent at once: every socket connected first, then every request written in one go (a sync job
 * with a pool of open connections), so they all reach the server together. How many got 200, and the latencies
 * of all answers, from the write to the status line.
 */
const burst = async (port: number, key: string, count: number): Promise<Burst> => {
  const sockets = await Promise.all(Array.from({ length: count }, () =>
    new Promise<net.Socket>((resolve, reject) => {
      const socket = net.connect({ host: "127.0.0.1", port }, () => resolve(socket))
      socket.once("error", reject)
    })))
  const answers = sockets.map((socket) => {
    const { body, path: target } = requestFor()
    const answered = new Promise<{ status: number; ms: number }>((resolve) => {
      let head = ""
      socket.on("data", (chunk) => {
        if (head.includes("\r\n")) return
        head += chunk
        if (head.includes("\r\n")) resolve({ status: Number(head.split(" ")[1]), ms: performance.now() - t })
      })
      socket.once("error", () => resolve({ status: 0, ms: performance.now() - t }))
      socket.once("close", () => resolve({ status: 0, ms: performance.now() - t }))
    })
    const t = performance.now()
    socket.write(
      `POST ${target} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `connection: close\r\n\r\n${body}`
    )
    return answered
  })
  const results = await Promise.all(answers)
  for (const socket of sockets) socket.destroy()
  const times = results.map((a) => a.ms).sort((a, b) => a - b)
  return { ok: results.filter((a) => a.status === 200).length, p50: quantile(times, 0.5), p99: quantile(times, 0.99) }
}

/** The create-batch-call curve: each server at each level, one burst then sustained connections, per round. */
const createBatchCallCurve = async (servers: ReadonlyArray<readonly [string, { port: number }]>, key: string) => {
  const bursts = new Map<string, Array<Burst>>()
  const runs = new Map<string, Array<Run>>()
  for (let round = 0; round < ROUNDS; round++) {
    for (const level of CREATE_LEVELS) {
      // rotate which server goes first, so none always runs on a machine warmed by another
      const order = servers.map((_, i) => servers[(i + round) % servers.length]!)
      for (const [name, target] of order) {
        const id = `${name}:${level}`
        const b = await burst(target.port, key, level)
        bursts.set(id, [...(bursts.get(id) ?? []), b])
        refusals.clear()
        const run = await load(target.port, key, level)
        runs.set(id, [...(runs.get(id) ?? []), run])
        for (const [reason, count] of refusals) say(`  ${count} x ${reason}`)
        say(
          `round ${round + 1} ${id}: burst ${b.ok}/${level} ok, p99 ${b.p99.toFixed(0)} ms; sustained ` +
            `${((1 - run.refusedShare) * 100).toFixed(1)} % ok, ${run.okPerSecond.toFixed(0)}/s, p99 ${
              run.allP99.toFixed(0)
            } ms`
        )
      }
    }
  }
  const b = (id: string, pick: (x: Burst) => number) => median((bursts.get(id) ?? []).map(pick))
  const r = (id: string, pick: (x: Run) => number) => median((runs.get(id) ?? []).map(pick))
  process.stdout.write(
    `create-batch-call (one task, a new batch each), pool 10, server defaults; burst: that many requests written at ` +
      `once on open connections, from idle; sustained: that many connections for ${SECONDS} s, each sending its next request when answered ` +
      `(503 retried ${HONOUR_RETRY_AFTER ? "after Retry-After" : "at once"}); medians of ${ROUNDS} rotating rounds; ` +
      `${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(1)}\n\n` +
      "| concurrency | server | burst 200s | burst p50 ms | burst p99 ms | sustained success | 200/s | p50 ms | " +
      "p99 ms | p99 ms (200s) | errors |\n" +
      "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n" +
      CREATE_LEVELS.flatMap((level) =>
        servers.map(([name]) => {
          const id = `${name}:${level}`
          return `| ${level} | ${name} | ${b(id, (x) => x.ok)}/${level} | ${b(id, (x) => x.p50).toFixed(0)} | ` +
            `${b(id, (x) => x.p99).toFixed(0)} | ${(r(id, (x) => 1 - x.refusedShare) * 100).toFixed(1)} % | ` +
            `${r(id, (x) => x.okPerSecond).toFixed(0)} | ${r(id, (x) => x.allP50).toFixed(0)} | ` +
            `${r(id, (x) => x.allP99).toFixed(0)} | ${r(id, (x) => x.okP99).toFixed(0)} | ${r(id, (x) => x.errors)} |`
        })
      ).join("\n") + "\n"
  )
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
    if (ENDPOINT === "create-batch-call") {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, '+14155550100', 0)`
    } else {
      yield* ContactSeed.load([{ orgId, contacts: CONTACTS }], { seed: 1 })
    }
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
  if (ENDPOINT === "create-batch-call") {
    const after = await startServer({ DATABASE_URL: url })
    children.push(after.child)
    const servers: Array<readonly [string, { port: number }]> = [["this checkout", after]]
    if (BASELINE !== undefined) {
      const before = await startServer({ DATABASE_URL: url }, path.resolve(BASELINE))
      children.push(before.child)
      servers.push([`baseline (${path.basename(path.resolve(BASELINE))})`, before])
    }
    const open = await startServer({ DATABASE_URL: url, SVC_HTTP_MAX_IN_FLIGHT: "0" })
    children.push(open.child)
    servers.push(["no admission control", open])
    for (const [, target] of servers) await load(target.port, key, 8)
    await createBatchCallCurve(servers, key)
  } else {
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
  }
} finally {
  for (const child of children) child.kill("SIGTERM")
  await new Promise((resolve) => setTimeout(resolve, 500))
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
}
