// Issue 16, item 8: after `kill -9` of a worker and its restart, how long a batch takes to drain, and where the
// time goes. One svc-scheduler on its own database; a 2,000-task batch, org limit 50, simulated calls of 500 ms
// (SQL store: the carrier's records survive the kill); the worker is killed with SIGKILL after `--kill-after`
// seconds and started again at once. The baseline in the same run is the same batch without a kill.
//
//   node tools/bench/crashDrain.bench.ts [--tasks=2000] [--limit=50] [--latency=500] [--kill-after=5]
//
// Prints, per second after the restart, the tasks by state, so a stall shows where it sits.
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { BatchCallsRepo } from "@svc/store/BatchCallsRepo.ts"
import * as Database from "@svc/store/Database.ts"
import { Effect, Exit, Layer, Redacted, Schema, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { type ChildProcess, spawn } from "node:child_process"
import * as os from "node:os"
import * as path from "node:path"
import { argument, benchDatabase } from "./support/BenchSupport.ts"

const TASKS = argument("tasks", 2_000)
const LIMIT = argument("limit", 50)
const LATENCY = argument("latency", 500)
const KILL_AFTER_S = argument("kill-after", 5)
const root = path.resolve(import.meta.dirname, "..", "..")

const database = await benchDatabase("drain")
const url = Redacted.value(database.url)
const scope = Scope.makeUnsafe()
const context = await Effect.runPromise(
  Layer.buildWithScope(
    BatchCallsRepo.layer.pipe(Layer.provideMerge(Database.layerFromUrl(database.url, { maxConnections: 2 }))),
    scope
  )
)
const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient | BatchCallsRepo>) =>
  Effect.runPromise(Effect.provideContext(effect, context))

const worker = (env: Record<string, string> = {}): ChildProcess =>
  spawn(process.execPath, [path.join(root, "apps/scheduler/src/main.ts")], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: url,
      LOG_LEVEL: "Warn",
      SCHEDULER_BACKFILL_CRON: "off",
      SIMULATED_DIALER_STORE: "sql",
      SIMULATED_DIALER_LATENCY_MS: String(LATENCY),
      ...env
    },
    stdio: ["ignore", "ignore", "inherit"]
  })

const states = (batch: string) =>
  run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ state: string; n: number }>`
      SELECT state, count(*)::int4 AS n FROM batch_call_tasks WHERE batch_call_id = ${batch} GROUP BY state`)).then(
      (rows) => Object.fromEntries(rows.map((r) => [r.state, r.n])) as Record<string, number>
    )

const scenario = async (label: string, kill: boolean) => {
  const orgId = `org_drain_${label}_${Date.now()}`
  const batch = await run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp) VALUES (${orgId}, ${label}, ${LIMIT}, 0)`
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, '+14155550100', 0)`
    const repo = yield* BatchCallsRepo
    return (yield* repo.create(
      orgId,
      `key_${label}`,
      Schema.decodeUnknownSync(CreateBatchCallRequest)({
        from_number: "+14155550100",
        tasks: Array.from({ length: TASKS }, (_, i) => ({ to_number: `+1917${String(i).padStart(7, "0")}` }))
      }),
      { maxTasks: TASKS }
    ).pipe(Effect.orDie)).batch_call_id
  }))
  const started = Date.now()
  let child = worker()
  let killedAt: number | undefined
  const timeline: Array<string> = []
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    const now = Date.now()
    if (kill && killedAt === undefined && now - started >= KILL_AFTER_S * 1_000) {
      child.kill("SIGKILL")
      await new Promise((resolve) => child.once("exit", resolve))
      killedAt = Date.now()
      child = worker()
    }
    const counts = await states(batch)
    const done = (counts["completed"] ?? 0) + (counts["failed"] ?? 0)
    if (killedAt !== undefined) {
      timeline.push(
        `  +${((now - killedAt) / 1000).toFixed(0).padStart(3)} s  pending ${counts["pending"] ?? 0}, dialling ${
          counts["dialling"] ?? 0
        }, unknown ${counts["unknown"] ?? 0}, done ${done}`
      )
    }
    if (done === TASKS) break
    if (now - started > 600_000) throw new Error(`${label}: not drained in 10 minutes`)
  }
  const total = Date.now() - started
  child.kill("SIGTERM")
  await new Promise((resolve) => child.once("exit", resolve))
  return { total, afterKill: killedAt === undefined ? undefined : Date.now() - killedAt, timeline }
}

try {
  const baseline = await scenario("baseline", false)
  const crashed = await scenario("crash", true)
  process.stdout.write(
    [
      `crash drain: ${TASKS} tasks, limit ${LIMIT}, ${LATENCY} ms calls, SIGKILL after ${KILL_AFTER_S} s (load ${
        os.loadavg().map((l) => l.toFixed(2)).join(" ")
      })`,
      `  without a kill: ${(baseline.total / 1000).toFixed(1)} s`,
      `  with a kill:    ${(crashed.total / 1000).toFixed(1)} s (${(crashed.total / baseline.total).toFixed(2)}x), ${
        ((crashed.afterKill ?? 0) / 1000).toFixed(1)
      } s of it after the restart`,
      ...crashed.timeline,
      ""
    ].join("\n")
  )
} finally {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await database.close()
}
