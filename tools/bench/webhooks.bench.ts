// Webhook delivery (issue 13, "Performance"): two goals, each against a baseline in the same run.
//
// 1. Throughput: `--events` (default 20,000) outbox events of one org delivered by ONE worker (WebhookWorker.loop,
//    default settings) to a local receiver in another process that answers 200 at once. Goal: >= 2,000 events/s.
//    Baseline: the same number of signed POSTs with the same sender and the same number in flight (the per-org
//    cap), without the database: the HTTP floor, so the ratio shows what the outbox costs.
// 2. Isolation: `--victim` (default 5,000) events of org B delivered by one worker, alone, and with `--backlog`
//    (default 100,000) events of org A queued behind a dead endpoint (accepts connections, never answers; each
//    attempt holds a slot for its 10 s timeout). Goal: B's time with the backlog within 1.1x of B's time without.
//
//   node tools/bench/webhooks.bench.ts [--rounds=5] [--events=20000] [--victim=5000] [--backlog=100000]
//                                      [--per-org=64] [--only=throughput|isolation]
//
// Runs on DATABASE_URL when set, else on an embedded PostgreSQL in a temporary directory. Rounds alternate the two
// paths of each goal (and swap their order every round). Prints Markdown tables of medians; exits 0 either way.
import { CallId, OrgId } from "@svc/domain/models/Ids.ts"
import { DatabaseHealth } from "@svc/scheduler/runtime/DatabaseHealth.ts"
import * as HttpSender from "@svc/scheduler/webhooks/HttpSender.ts"
import * as WebhookConfig from "@svc/scheduler/webhooks/WebhookConfig.ts"
import * as WebhookWorker from "@svc/scheduler/webhooks/WebhookWorker.ts"
import * as Database from "@svc/store/db/Database.ts"
import { WebhooksRepo } from "@svc/store/webhooks/WebhooksRepo.ts"
import { Effect, Fiber, Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { type ChildProcess, spawn } from "node:child_process"
import * as os from "node:os"
import { argument, benchDatabase, median } from "./support/BenchSupport.ts"

const rounds = argument("rounds", 5)
const events = argument("events", 20_000)
const victim = argument("victim", 5_000)
const backlog = argument("backlog", 100_000)
const perOrg = argument("per-org", WebhookConfig.defaults().perOrg)
const settings = WebhookConfig.defaults({ allowPrivate: true, perOrg })
/** `--only=throughput` or `--only=isolation`: run one part. */
const only = process.argv.find((a) => a.startsWith("--only="))?.split("=")[1]

// ---------------------------------------------------------------------------------------------------------------
// Receivers in a process of their own (so they do not share the worker's one thread)
// ---------------------------------------------------------------------------------------------------------------

const receiverCode = (mode: "ok" | "dead") => `
  const http = require("node:http")
  const server = http.createServer({ keepAliveTimeout: 60000 }, (req, res) => {
    req.resume()
    ${mode === "ok" ? `req.on("end", () => { res.writeHead(200); res.end("ok") })` : ""}
  })
  server.listen(0, "127.0.0.1", () => console.log(server.address().port))
`

const startReceiver = (mode: "ok" | "dead") =>
  new Promise<{ readonly url: string; readonly child: ChildProcess }>((resolve) => {
    const child = spawn(process.execPath, ["-e", receiverCode(mode)], { stdio: ["ignore", "pipe", "inherit"] })
    child.stdout!.once(
      "data",
      (data: Buffer) => resolve({ url: `http://127.0.0.1:${String(data).trim()}/hook`, child })
    )
  })

// ---------------------------------------------------------------------------------------------------------------
// Database
// ---------------------------------------------------------------------------------------------------------------

const database = await benchDatabase("webhooks")
const runtime = ManagedRuntime.make(
  WebhooksRepo.layer.pipe(Layer.provideMerge(Database.layerFromUrl(database.url, { maxConnections: 4 })))
)
const run = <A, E>(effect: Effect.Effect<A, E, WebhooksRepo | SqlClient.SqlClient>) => runtime.runPromise(effect)

const ORGS = ["org_bench_hooks", "org_bench_victim", "org_bench_dead"].map((id) => OrgId.make(id))
await run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const repo = yield* WebhooksRepo
  for (const org of ORGS) {
    yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${org}, 'webhook benchmark', 0)
               ON CONFLICT DO NOTHING`
    yield* repo.createSecret(org, 0, 0)
  }
}))

/** Removes every event, then queues `count` call_ended events of `org` to `url` (one per call). */
const enqueue = (org: string, url: string, count: number, tag: string) =>
  run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO webhook_events (event_id, org_id, call_id, event, url, timeout_ms, body)
      SELECT ${`${org}_${tag}_`} || i, ${org}, ${`call_${tag}_`} || i, 'call_ended', ${url}, 10000,
             jsonb_build_object('event', 'call_ended', 'call', jsonb_build_object(
               'call_id', ${`call_${tag}_`} || i, 'call_status', 'ended', 'call_type', 'phone_call',
               'from_number', '+14155550100', 'to_number', '+14155550111', 'duration_ms', 61000))::text
      FROM generate_series(1, ${count}) AS i`
  }))

const clear = () =>
  run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`TRUNCATE webhook_events`
    yield* sql`VACUUM ANALYZE webhook_events`
  }))

const delivered = (org: string) =>
  run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ n: number }>`
      SELECT count(*)::int AS n FROM webhook_events WHERE org_id = ${org} AND state = 'delivered'`
    return rows[0]!.n
  }))

/** Runs one worker until `org` has `count` events delivered; returns the milliseconds. */
const workerUntil = async (org: string, count: number) => {
  const started = performance.now()
  const fiber = runtime.runFork(
    Effect.scoped(WebhookWorker.loop(settings, `bench-${process.pid}`)).pipe(Effect.provide(DatabaseHealth.layer))
  )
  while ((await delivered(org)) < count) await new Promise((r) => setTimeout(r, 20))
  const ms = performance.now() - started
  await runtime.runPromise(Fiber.interrupt(fiber))
  return ms
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Throughput
// ---------------------------------------------------------------------------------------------------------------

const ok = await startReceiver("ok")
const dead = await startReceiver("dead")

/** The floor: the same signed POSTs, `settings.perOrg` in flight, same sender, no database. */
const bare = () =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const send = yield* HttpSender.make({ allowPrivate: true })
    const body = JSON.stringify({ event: "call_ended", call: { call_id: "call_x", call_status: "ended" } })
    const started = performance.now()
    yield* Effect.forEach(
      Array.from({ length: events }, (_, i) => i),
      (i) =>
        send({
          url: ok.url,
          headers: WebhookWorker.headers({
            eventSeq: String(i),
            eventId: `evt_${i}`,
            orgId: OrgId.make("o"),
            callId: CallId.make("c"),
            event: "call_ended",
            url: ok.url,
            timeoutMs: 10_000,
            body,
            attempts: 1,
            firstAttemptAt: 0,
            secret: "whsec_bench",
            nextSecret: undefined
          }, Date.now()),
          body,
          timeoutMs: 10_000
        }),
      { concurrency: settings.perOrg, discard: true }
    )
    return performance.now() - started
  })))

const throughput = { worker: [] as Array<number>, bare: [] as Array<number> }
for (let round = 0; round < (only === "isolation" ? 0 : rounds); round++) {
  const order = round % 2 === 0 ? ["worker", "bare"] as const : ["bare", "worker"] as const
  for (const path of order) {
    if (path === "worker") {
      await clear()
      await enqueue(ORGS[0]!, ok.url, events, `r${round}`)
      throughput.worker.push(await workerUntil(ORGS[0]!, events))
    } else throughput.bare.push(await bare())
  }
  process.stderr.write(
    `throughput round ${round + 1}/${rounds}: worker ${throughput.worker.at(-1)!.toFixed(0)} ms, bare ${
      throughput.bare.at(-1)!.toFixed(0)
    } ms\n`
  )
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Isolation
// ---------------------------------------------------------------------------------------------------------------

const isolation = { alone: [] as Array<number>, backlog: [] as Array<number> }
for (let round = 0; round < (only === "throughput" ? 0 : rounds); round++) {
  const order = round % 2 === 0 ? ["alone", "backlog"] as const : ["backlog", "alone"] as const
  for (const path of order) {
    await clear()
    if (path === "backlog") await enqueue(ORGS[2]!, dead.url, backlog, `d${round}`)
    await enqueue(ORGS[1]!, ok.url, victim, `v${round}`)
    await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`ANALYZE webhook_events`))
    isolation[path].push(await workerUntil(ORGS[1]!, victim))
  }
  process.stderr.write(
    `isolation round ${round + 1}/${rounds}: alone ${isolation.alone.at(-1)!.toFixed(0)} ms, with backlog ${
      isolation.backlog.at(-1)!.toFixed(0)
    } ms\n`
  )
}

// ---------------------------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------------------------

// the report goes to stdout (progress went to stderr)
const report = (line: string) => process.stdout.write(`${line}\n`)
report(
  `\n${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), load ${os.loadavg()[0]!.toFixed(1)}, ` +
    `Node ${process.version}, ${rounds} rounds, ${settings.perOrg} in flight per org\n`
)
if (throughput.worker.length > 0) {
  const w = median(throughput.worker)
  const b = median(throughput.bare)
  const rate = (ms: number) => (events / ms * 1000).toFixed(0)
  report(`| delivery of ${events.toLocaleString("en-US")} events | median ms | events/s | vs floor |`)
  report("| --- | ---: | ---: | ---: |")
  report(
    `| one worker (outbox -> signed POST -> result) | ${w.toFixed(0)} | ${rate(w)} | ${(w / b).toFixed(2)}x |`
  )
  report(`| floor: the same POSTs, no database | ${b.toFixed(0)} | ${rate(b)} | 1.00x |`)
  report(`\nGoal >= 2,000 events/s: ${events / w * 1000 >= 2000 ? "met" : "NOT met"}\n`)
}
if (isolation.alone.length > 0) {
  const alone = median(isolation.alone)
  const withBacklog = median(isolation.backlog)
  const rate = (ms: number) => (victim / ms * 1000).toFixed(0)
  const perRound = isolation.backlog.map((x, i) => (x / isolation.alone[i]!).toFixed(2)).join(", ")
  report(`| org B's ${victim.toLocaleString("en-US")} events | median ms | events/s | ratio |`)
  report("| --- | ---: | ---: | ---: |")
  report(`| alone | ${alone.toFixed(0)} | ${rate(alone)} | 1.00x |`)
  report(
    `| with ${backlog.toLocaleString("en-US")} of org A behind a dead endpoint | ${withBacklog.toFixed(0)} | ${
      rate(withBacklog)
    } | ${(withBacklog / alone).toFixed(2)}x |`
  )
  report(`\nPer-round ratios: ${perRound}. Goal <= 1.10x: ${withBacklog / alone <= 1.1 ? "met" : "NOT met"}`)
}

ok.child.kill()
dead.child.kill()
await runtime.dispose()
await database.close()
