// A database outage under a dialling worker (issue 16, "Outages"): an `svc-scheduler` process dials a batch on a
// PostgreSQL this test owns; the test kills the postmaster with SIGKILL twice mid-batch, once for less than the
// worker's lease and once for longer, and starts it again on the same port each time. After the longer one, another
// worker's lease expiry (DispatchRepo.expireLeases, run by the test while the worker is frozen with SIGSTOP) gets to
// the database first: the tasks whose results the worker holds become `unknown`, and are still recorded once and
// dialled once.
// Afterwards: the worker is still the same process (it paused and resumed on its own), the batch completed, every
// task reached the carrier exactly once and was recorded once, the org's limit held (the crash test's checks; the
// limit from the carrier's records rather than by sampling, which an outage would interrupt), and the worker's log told
// each outage in one "database unavailable" line and one "available again" line, with no stack trace.
import { assert, describe, it } from "@effect/vitest"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { BatchCallsRepo } from "@svc/store/BatchCallsRepo.ts"
import * as Database from "@svc/store/Database.ts"
import * as DatabaseAdmin from "@svc/store/DatabaseAdmin.ts"
import { DispatchRepo } from "@svc/store/DispatchRepo.ts"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { Deferred, Effect, Layer, Redacted, Schedule, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { spawn } from "node:child_process"
import * as path from "node:path"
import * as ScratchPostgres from "./support/ScratchPostgres.ts"

const root = path.resolve(import.meta.dirname, "..", "..")
const main = path.join(root, "apps/scheduler/src/main.ts")

const TASKS = 600
const LIMIT = 20
// 600 tasks on 20 lines at 300 ms a call: ~9 s of dialling with the database up
const LATENCY_MS = 300
const LEASE_MS = 4_000
/** The two outages: shorter than the lease (held results are recorded on return), then longer (leases expire). */
const OUTAGES_MS = [2_000, LEASE_MS + 3_000] as const

interface LogLine {
  readonly level?: string
  readonly message?: unknown
  readonly [key: string]: unknown
}

describe("svc-scheduler during a database outage", () => {
  it.live(
    "pauses while PostgreSQL is down (SIGKILL, twice), resumes on its own, dials each task once, logs each outage twice",
    () =>
      Effect.gen(function*() {
        const server = yield* ScratchPostgres.start
        yield* DatabaseAdmin.ensureDatabase(server.url, "svc").pipe(Effect.orDie)
        const url = TestDatabase.urlFor(server.url, "svc")
        const context = yield* Layer.build(
          Layer.mergeAll(BatchCallsRepo.layer, DispatchRepo.layer).pipe(
            Layer.provideMerge(Database.layerFromUrl(url, { maxConnections: 2 }))
          )
        )
        return yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          // the test's own statements ride out the outages too: a pooled connection may be one the kill broke
          const query = <A>(statement: Effect.Effect<A, unknown>) =>
            statement.pipe(Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 100 }), Effect.orDie)

          const orgId = "org_outage"
          yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
                     VALUES (${orgId}, 'outage test', ${LIMIT}, 0)`
          yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp)
                     VALUES (${orgId}, '+14155550100', 0)`
          const batch = yield* (yield* BatchCallsRepo).create(
            orgId,
            "key_outage",
            Schema.decodeUnknownSync(CreateBatchCallRequest)({
              from_number: "+14155550100",
              tasks: Array.from({ length: TASKS }, (_, i) => ({ to_number: `+1917${String(i).padStart(7, "0")}` }))
            }),
            { maxTasks: TASKS }
          ).pipe(Effect.orDie)

          const exited = yield* Deferred.make<number | null>()
          let output = ""
          const child = spawn(process.execPath, [main], {
            cwd: root,
            env: {
              ...process.env,
              DATABASE_URL: Redacted.value(url),
              LOG_LEVEL: "Info",
              SVC_DB_MAX_CONNECTIONS: "5",
              SCHEDULER_WORKER_ID: "outage-worker",
              SCHEDULER_LEASE_MS: String(LEASE_MS),
              SCHEDULER_POLL_MS: "200",
              SCHEDULER_RECONCILE_RECHECK_MS: "300",
              SCHEDULER_SHUTDOWN_GRACE_MS: "2000",
              SCHEDULER_BACKFILL_CRON: "off",
              SIMULATED_DIALER_STORE: "sql",
              SIMULATED_DIALER_SEED: "42",
              SIMULATED_DIALER_LATENCY_MS: String(LATENCY_MS)
            },
            stdio: ["ignore", "pipe", "pipe"]
          })
          child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
          child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
          child.once("exit", (code) => Deferred.doneUnsafe(exited, Effect.succeed(code)))
          yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))

          const done = query(sql<{ n: number }>`
            SELECT count(*)::int4 AS n FROM batch_call_tasks
            WHERE batch_call_id = ${batch.batch_call_id} AND state IN ('completed', 'failed')`).pipe(
            Effect.map((rows) => rows[0]!.n)
          )
          const waitFor = (what: string, ok: (n: number) => boolean, ms: number) =>
            Effect.gen(function*() {
              const deadline = Date.now() + ms
              for (;;) {
                const n = yield* done
                if (ok(n)) return n
                if (Date.now() > deadline) {
                  assert.fail(`${what}: ${n} tasks done after ${ms} ms\n${output.slice(-3_000)}`)
                }
                yield* Effect.sleep(50)
              }
            })

          const doneAtKill: Array<number> = []
          let expiredWhileHeld = 0
          for (const [i, downMs] of OUTAGES_MS.entries()) {
            yield* waitFor(`dialling before outage ${i + 1}`, (n) => n >= (TASKS / 4) * (i + 1), 60_000)
            yield* server.kill
            yield* Effect.sleep(downMs)
            assert.isTrue(child.exitCode === null && child.signalCode === null, `worker exited:\n${output}`)
            if (downMs <= LEASE_MS) {
              yield* server.restart
            } else {
              // the worker's leases ran out while it could not renew them; another worker's pass gets there first
              child.kill("SIGSTOP")
              yield* server.restart
              expiredWhileHeld = yield* query((yield* DispatchRepo).expireLeases(Date.now()))
              child.kill("SIGCONT")
            }
            doneAtKill.push(yield* done)
          }

          yield* waitFor("the batch after the outages", (n) => n === TASKS, 90_000)
          const remainingFeed = sql<{ n: number }>`SELECT count(*)::int4 AS n FROM contact_feed`.pipe(
            Effect.map((rows) => rows[0]!.n)
          )
          for (let i = 0; i < 200 && (yield* query(remainingFeed)) > 0; i++) yield* Effect.sleep(50)
          assert.isTrue(child.exitCode === null, `the worker ran through both outages without exiting:\n${output}`)
          child.kill("SIGTERM")
          assert.strictEqual(yield* Deferred.await(exited), 0, `graceful stop after SIGTERM:\n${output}`)

          // exactly once: every task's key reached the carrier once, no key twice, no other key
          const [dials] = yield* query(sql<{ attempts: number; keys: number; repeated: number }>`
            SELECT count(*)::int4 AS attempts, count(DISTINCT idempotency_key)::int4 AS keys,
              (SELECT count(*)::int4 FROM (
                SELECT 1 FROM simulated_dialer_attempts GROUP BY idempotency_key HAVING count(*) > 1) r) AS repeated
            FROM simulated_dialer_attempts`)
          assert.deepStrictEqual(dials, { attempts: TASKS, keys: TASKS, repeated: 0 })
          // none lost: every task finished, each with one recorded call, each call counted once on its contact
          const [recorded] = yield* query(sql<{ calls: number; conversations: number; status: string }>`
            SELECT (SELECT count(*)::int4 FROM calls WHERE batch_call_id = ${batch.batch_call_id}) AS calls,
              (SELECT sum(conversation_count)::int4 FROM contacts WHERE org_id = ${orgId}) AS conversations,
              (SELECT status FROM batch_calls WHERE batch_call_id = ${batch.batch_call_id}) AS status`)
          assert.deepStrictEqual(recorded, { calls: TASKS, conversations: TASKS, status: "completed" })
          // the org's limit held throughout, outages included: the most calls live at once at the carrier, from its
          // records (placed and line-free times), at each call's placement
          const [live] = yield* query(sql<{ max: number }>`
            SELECT max((SELECT count(*) FROM simulated_dialer_calls b
              WHERE b.placed_timestamp <= a.placed_timestamp AND b.ends_timestamp > a.placed_timestamp))::int4 AS max
            FROM simulated_dialer_calls a`)
          assert.isAtMost(live!.max, LIMIT)
          assert.isAtLeast(live!.max, LIMIT - 2, "the worker used the lines it had")

          // the log: one line when each outage began, one when it ended; no stack trace, no flood
          const lines = output.split("\n").filter((l) => l.trim() !== "").map((l): LogLine => {
            try {
              return JSON.parse(l) as LogLine
            } catch {
              return { level: "raw", message: l }
            }
          })
          const messages = lines.map((l) => String(l.message))
          const count = (prefix: string) => messages.filter((m) => m.startsWith(prefix)).length
          const tail = `\n${output.slice(-4_000)}`
          assert.strictEqual(count("database unavailable"), OUTAGES_MS.length, tail)
          assert.strictEqual(count("database available again after"), OUTAGES_MS.length, tail)
          assert.isAtMost(count("database still unavailable"), OUTAGES_MS.length, tail)
          assert.isFalse(output.includes("    at "), `no stack trace in the log${tail}`)
          assert.deepStrictEqual(lines.filter((l) => l.level === "raw"), [], "every line is a log record")
          assert.isAtMost(
            lines.filter((l) => l.level === "ERROR" || l.level === "WARN").length,
            4 * OUTAGES_MS.length,
            `a few warnings per outage at most${tail}`
          )
          // both outages hit the batch mid-way, and the second one left the worker holding calls whose leases expired
          assert.isBelow(doneAtKill[0]!, TASKS)
          assert.isBelow(doneAtKill[1]!, TASKS)
          assert.isAbove(expiredWhileHeld, 0, "tasks in flight at the second outage had their leases expire")
        }).pipe(Effect.provideContext(context))
      }).pipe(Effect.scoped),
    180_000
  )
})
