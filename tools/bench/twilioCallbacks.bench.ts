// Twilio status callbacks through svc-server (issue 14; decision 0606): how many signed callbacks one replica takes
// per second, beside its own floor in the same run. At the 50 calls/s, each call's four events (initiated,
// ringing, answered, completed) are ~200 callbacks/s for the replicas together.
//
// One svc-server process (apps/server/src/main.ts) on an embedded PostgreSQL (or DATABASE_URL); autocannon drives
// it from this process, `--connections` (16) at a time, `--seconds` (5) per run, `--rounds` (5) rounds in which the
// order of the modes rotates; medians are printed.
//
// - healthz: `GET /healthz`, no database, no body (the floor: HTTP, middleware, logging of the request).
// - applied: a signed `completed` callback for a new key each time (the record moves requesting -> completed: the
//   signature, the form, one UPDATE with NOTIFY).
// - replayed: the same signed callback again and again (stale: the same statement, nothing changes).
// - forged: an unsigned callback (403 before decoding: what a flood of forged requests costs).
//
//   node tools/bench/twilioCallbacks.bench.ts [--rounds=5] [--seconds=5] [--connections=16]
import { statusCallbackUrl } from "@svc/domain/carrier/TwilioStatusCallbackUrl.ts"
import * as Database from "@svc/store/db/Database.ts"
import autocannon from "autocannon"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { spawn } from "node:child_process"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks.js"
import { argument, benchDatabase, median } from "./support/BenchSupport.ts"

const root = path.resolve(import.meta.dirname, "..", "..")
const ROUNDS = argument("rounds", 5)
const SECONDS = argument("seconds", 5)
const CONNECTIONS = argument("connections", 16)
const RECORDS = 400_000
const TOKEN = "0123456789abcdef0123456789abcdef"
const BASE = "https://svc.bench.example"
const ACCOUNT = "AC0123456789abcdef0123456789abcdef"
const say = (s: string) => process.stderr.write(`[bench] ${s}\n`)

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const database = await benchDatabase("twilio-callbacks")
/** Runs `f` over a connection of its own to the bench database (migrated first when `migrate`). */
const withSql = <A>(migrate: boolean, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      return yield* f(yield* SqlClient.SqlClient)
    }).pipe(Effect.provide(Database.layerFromUrl(database.url, { migrate, maxConnections: 1 })))
  )
const children: Array<ReturnType<typeof spawn>> = []
try {
  await withSql(true, (sql) =>
    sql`
      INSERT INTO twilio_calls (idempotency_key, call_id, account_sid, from_number, to_number, requested_at, updated_at)
      SELECT 'bench-' || g, 'call-' || g, ${ACCOUNT}, '+14155550100', '+14155550101', 0, 0
      FROM generate_series(0, ${RECORDS - 1}) AS g
      ON CONFLICT DO NOTHING`)
  say(`${RECORDS} records reserved`)
  const port = await freePort()
  const child = spawn(process.execPath, ["apps/server/src/main.ts"], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: Redacted.value(database.url),
      PORT: String(port),
      LOG_LEVEL: "Warn",
      TWILIO_AUTH_TOKEN: TOKEN,
      SVC_PUBLIC_URL: BASE
    },
    stdio: ["ignore", "ignore", "inherit"]
  })
  children.push(child)
  const origin = `http://127.0.0.1:${port}`
  for (let i = 0;; i++) {
    if (child.exitCode !== null) throw new Error(`svc-server exited ${child.exitCode}`)
    if (await fetch(`${origin}/healthz`).then((r) => r.ok, () => false)) break
    if (i > 600) throw new Error("svc-server did not start in 60 s")
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  say("svc-server started")

  let next = 0
  const callback = (key: string, sign: boolean) => {
    const params = {
      AccountSid: ACCOUNT,
      CallSid: `CA${key.replace("bench-", "").padStart(32, "0")}`,
      CallStatus: "completed",
      CallDuration: "42",
      From: "+14155550100",
      To: "+14155550101",
      Timestamp: "Sat, 28 Nov 2026 03:00:40 +0000"
    }
    const url = statusCallbackUrl(BASE, key)
    return {
      method: "POST" as const,
      path: url.slice(BASE.length),
      body: new URLSearchParams(params).toString(),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        ...(sign ? { "x-twilio-signature": getExpectedTwilioSignature(TOKEN, url, params) } : {})
      }
    }
  }
  const replayed = callback(`bench-${RECORDS - 1}`, true)
  // the replayed callback's record is completed once, before any run
  await fetch(`${origin}${replayed.path}`, { method: "POST", headers: replayed.headers, body: replayed.body })

  type Mode = "healthz" | "applied" | "replayed" | "forged"
  const modes: ReadonlyArray<Mode> = ["healthz", "applied", "replayed", "forged"]
  const run = (mode: Mode) =>
    autocannon({
      url: origin,
      connections: CONNECTIONS,
      duration: SECONDS,
      requests: [
        mode === "healthz"
          ? { method: "GET", path: "/healthz" }
          : mode === "replayed"
          ? replayed
          : mode === "forged"
          ? callback("bench-0", false)
          : {
            setupRequest: (request) => {
              if (next >= RECORDS - 1) throw new Error("out of reserved records: raise RECORDS")
              return { ...request, ...callback(`bench-${next++}`, true) }
            }
          }
      ]
    })

  const expected: Record<Mode, number> = { healthz: 200, applied: 204, replayed: 204, forged: 403 }
  const results: Record<Mode, Array<autocannon.Result>> = { healthz: [], applied: [], replayed: [], forged: [] }
  // warm-up: plans, pools, JIT
  await autocannon({ url: `${origin}/healthz`, connections: 4, duration: 2 })
  await autocannon({ url: origin, connections: 4, duration: 2, requests: [replayed] })
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < modes.length; i++) {
      const mode = modes[(i + round) % modes.length]!
      const result = await run(mode)
      const wrong = result.errors + result.timeouts +
        Object.entries(result.statusCodeStats ?? {}).filter(([code]) => Number(code) !== expected[mode])
          .reduce((sum, [, stats]) => sum + (stats.count ?? 0), 0)
      if (wrong > 0) throw new Error(`${mode}: ${wrong} answers were not ${expected[mode]}`)
      results[mode].push(result)
    }
    say(`round ${round + 1} of ${ROUNDS}`)
  }

  // every applied callback moved its record exactly once
  const completed = await withSql(false, (sql) =>
    Effect.map(
      sql<{ n: number }>`SELECT count(*)::int4 AS n FROM twilio_calls WHERE status = 'completed'`,
      ([row]) => row?.n ?? 0
    ))
  const appliedAnswers = results.applied.reduce((sum, r) => sum + r.requests.total, 0)
  // between the callbacks answered and the callbacks built (those in flight when a run ends were applied unanswered)
  if (completed < appliedAnswers + 1 || completed > next + 1) {
    throw new Error(
      `${completed} records completed; ${appliedAnswers} applied callbacks answered, ${next} sent (+1 replayed)`
    )
  }

  const floor = median(results.healthz.map((r) => r.requests.average))
  process.stdout.write(
    `Twilio status callbacks, one svc-server process, ${CONNECTIONS} connections, ${SECONDS} s per run, ` +
      `medians of ${ROUNDS} rotating rounds; load ${os.loadavg()[0]?.toFixed(1)} at the end; ` +
      `${completed.toLocaleString()} records completed (${appliedAnswers.toLocaleString()} applied callbacks answered)\n\n` +
      "| mode | answer | req/s | / healthz | p50 ms | p99 ms |\n|---|---|---:|---:|---:|---:|\n" +
      modes.map((mode) => {
        const rate = median(results[mode].map((r) => r.requests.average))
        return `| ${mode} | ${expected[mode]} | ${rate.toFixed(0)} | ${(rate / floor).toFixed(2)} | ` +
          `${median(results[mode].map((r) => r.latency.p50))} | ${median(results[mode].map((r) => r.latency.p99))} |`
      }).join("\n") + "\n"
  )
} finally {
  for (const child of children) child.kill("SIGTERM")
  await new Promise((resolve) => setTimeout(resolve, 1_000))
  await database.close()
}
