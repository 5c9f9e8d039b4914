// Database outages under a dialling worker (issue 16, "Outages"), on a PostgreSQL each test starts itself from the
// embedded binaries (support/ScratchPostgres.ts) and kills with SIGKILL.
//
// 1. An `svc-scheduler` process dials a batch; the postmaster is killed twice mid-batch, once for less than the
//    worker's lease and once for longer, and started again on the same port each time. After the longer one, another
//    worker's lease expiry (DispatchRepo.expireLeases, run by the test while the worker is frozen with SIGSTOP) gets
//    to the database first: the tasks whose results the worker holds become `unknown`, and are still recorded once
//    and dialled once. Afterwards: the worker is still the same process (it paused and resumed on its own), the batch
//    completed, every task reached the carrier exactly once and was recorded once, the org's limit held (the crash
//    test's checks; the limit from the carrier's records rather than by sampling, which an outage would interrupt),
//    and the worker's log told each outage in one "database unavailable" line and one "available again" line, with
//    no stack trace.
// 2. The worker is told to stop (SIGTERM) while the database is down, holding results it cannot write: it stops
//    cleanly (exit 0, "dispatcher stopped", no stack), and a worker started after the database is back finishes the
//    batch through the leases the first one left, dialling no one twice.
import { assert, describe, it } from "@effect/vitest"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import * as Database from "@svc/store/db/Database.ts"
import * as DatabaseAdmin from "@svc/store/db/DatabaseAdmin.ts"
import { DispatchRepo } from "@svc/store/dispatch/DispatchRepo.ts"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { Deferred, Effect, Layer, Redacted, Schedule, Schema, type Scope } from "effect"
import { SqlClient } from "effect/sql"
import { spawn } from "node:child_process"
import * as path from "node:path"
import * as ScratchPostgres from "./support/ScratchPostgres.ts"

const root = path.resolve(import.meta.dirname, "..", "..")
const main = path.join(root, "apps/scheduler/src/main.ts")

const LIMIT = 20
// 20 lines at 300 ms a call: 600 tasks are ~9 s of dialling with the database up
const LATENCY_MS = 300
const LEASE_MS = 4_000
const ORG = OrgId.make("org_outage")

interface LogLine {
  readonly level?: string
  readonly message?: unknown
  readonly [key: string]: unknown
}

/** A worker process and what it printed. */
interface Worker {
  readonly child: ReturnType<typeof spawn>
  readonly exited: Deferred.Deferred<number | null>
  readonly output: () => string
}

const startWorker = (url: Redacted.Redacted<string>, id: string, extra: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const exited = yield* Deferred.make<number | null>()
    let output = ""
    const child = spawn(process.execPath, [main], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: Redacted.value(url),
        LOG_LEVEL: "Info",
        SVC_DB_MAX_CONNECTIONS: "5",
        SCHEDULER_WORKER_ID: id,
        SCHEDULER_LEASE_MS: String(LEASE_MS),
        SCHEDULER_POLL_MS: "200",
        SCHEDULER_RECONCILE_RECHECK_MS: "300",
        SCHEDULER_SHUTDOWN_GRACE_MS: "2000",
        SCHEDULER_BACKFILL_CRON: "off",
        SIMULATED_DIALER_STORE: "sql",
        SIMULATED_DIALER_SEED: "42",
        SIMULATED_DIALER_LATENCY_MS: String(LATENCY_MS),
        ...extra
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.once("exit", (code) => Deferred.doneUnsafe(exited, Effect.succeed(code)))
    yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))
    return { child, exited, output: () => output } satisfies Worker
  })

/** Every line a log record (JSON), none with a stack trace. */
const logLines = (output: string): Array<LogLine> => {
  assert.isFalse(output.includes("    at "), `no stack trace in the log\n${output.slice(-4_000)}`)
  return output.split("\n").filter((l) => l.trim() !== "").map((l): LogLine => {
    try {
      return JSON.parse(l) as LogLine
    } catch {
      return assert.fail(`not a log record: ${l}`)
    }
  })
}

/**
 * A scratch PostgreSQL with the schema, an org and a batch of `tasks`, and the test's own pool on it; runs `body`
 * with them.
 */
const withBatch = <A, E>(
  tasks: number,
  body: (setup: {
    readonly server: ScratchPostgres.ScratchPostgres
    readonly url: Redacted.Redacted<string>
    readonly batchCallId: string
    /** A statement that rides out the outages: a pooled connection may be one the kill broke. */
    readonly query: <B>(statement: Effect.Effect<B, unknown>) => Effect.Effect<B>
  }) => Effect.Effect<A, E, SqlClient.SqlClient | DispatchRepo | Scope.Scope>
) =>
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
      yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
                 VALUES (${ORG}, 'outage test', ${LIMIT}, 0)`
      yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp)
                 VALUES (${ORG}, '+14155550100', 0)`
      const batch = yield* (yield* BatchCallsRepo).create(
        ORG,
        "key_outage",
        Schema.decodeUnknownSync(CreateBatchCallRequest)({
          from_number: "+14155550100",
          tasks: Array.from({ length: tasks }, (_, i) => ({ to_number: `+4420${String(i).padStart(8, "0")}` }))
        }),
        { maxTasks: tasks, legalGrouper: () => new LegalGrouper() }
      ).pipe(Effect.orDie)
      const query = <B>(statement: Effect.Effect<B, unknown>) =>
        statement.pipe(Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 100 }), Effect.orDie)
      return yield* body({ server, url, batchCallId: batch.batch_call_id, query })
    }).pipe(Effect.provideContext(context))
  }).pipe(Effect.scoped)

/** Tasks of the batch finished (completed or failed). */
const finished = (batchCallId: string, query: <B>(s: Effect.Effect<B, unknown>) => Effect.Effect<B>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* query(sql<{ n: number }>`
      SELECT count(*)::int4 AS n FROM batch_call_tasks
      WHERE batch_call_id = ${batchCallId} AND state IN ('completed', 'failed')`)
    return rows[0]!.n
  })

/** Polls until `ok` holds for the finished count; fails with the workers' logs after `ms`. */
const waitFor = <R>(
  what: string,
  count: Effect.Effect<number, never, R>,
  ok: (n: number) => boolean,
  ms: number,
  logs: () => string
) =>
  Effect.gen(function*() {
    const deadline = Date.now() + ms
    for (;;) {
      const n = yield* count
      if (ok(n)) return n
      if (Date.now() > deadline) assert.fail(`${what}: ${n} tasks done after ${ms} ms\n${logs().slice(-3_000)}`)
      yield* Effect.sleep(50)
    }
  })

/** Waits (at most 10 s) until a running worker has fed every recorded call to its contact. */
const fedAll = (query: <B>(s: Effect.Effect<B, unknown>) => Effect.Effect<B>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const remainingFeed = sql<{ n: number }>`SELECT count(*)::int4 AS n FROM contact_feed`.pipe(
      Effect.map((rows) => rows[0]!.n)
    )
    for (let i = 0; i < 200 && (yield* query(remainingFeed)) > 0; i++) yield* Effect.sleep(50)
  })

/** The crash test's checks: each key dialled once, each task recorded once, each call fed once, the limit held. */
const exactlyOnce = (
  tasks: number,
  batchCallId: string,
  query: <B>(s: Effect.Effect<B, unknown>) => Effect.Effect<B>
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [dials] = yield* query(sql<{ attempts: number; keys: number; repeated: number }>`
      SELECT count(*)::int4 AS attempts, count(DISTINCT idempotency_key)::int4 AS keys,
        (SELECT count(*)::int4 FROM (
          SELECT 1 FROM simulated_dialer_attempts GROUP BY idempotency_key HAVING count(*) > 1) r) AS repeated
      FROM simulated_dialer_attempts`)
    assert.deepStrictEqual(dials, { attempts: tasks, keys: tasks, repeated: 0 })
    const [recorded] = yield* query(sql<{ calls: number; conversations: number; status: string }>`
      SELECT (SELECT count(*)::int4 FROM calls WHERE batch_call_id = ${batchCallId}) AS calls,
        (SELECT sum(conversation_count)::int4 FROM contacts WHERE org_id = ${ORG}) AS conversations,
        (SELECT status FROM batch_calls WHERE batch_call_id = ${batchCallId}) AS status`)
    assert.deepStrictEqual(recorded, { calls: tasks, conversations: tasks, status: "completed" })
    // the most calls live at once at the carrier, from its records, at each call's placement
    const [live] = yield* query(sql<{ max: number }>`
      SELECT max((SELECT count(*) FROM simulated_dialer_calls b
        WHERE b.placed_timestamp <= a.placed_timestamp AND b.ends_timestamp > a.placed_timestamp))::int4 AS max
      FROM simulated_dialer_calls a`)
    assert.isAtMost(live!.max, LIMIT)
    assert.isAtLeast(live!.max, LIMIT - 2, "the workers used the lines they had")
  })

describe("svc-scheduler during a database outage", () => {
  it.live(
    "pauses while PostgreSQL is down (SIGKILL, twice), resumes on its own, dials each task once, logs each outage twice",
    () =>
      withBatch(600, ({ batchCallId, query, server, url }) =>
        Effect.gen(function*() {
          const TASKS = 600
          /** The two outages: shorter than the lease (held results recorded on return), then longer (leases expire). */
          const outagesMs = [2_000, LEASE_MS + 3_000] as const
          const worker = yield* startWorker(url, "outage-worker")
          const done = finished(batchCallId, query)
          const doneAtKill: Array<number> = []
          let expiredWhileHeld = 0
          for (const [i, downMs] of outagesMs.entries()) {
            yield* waitFor(`before outage ${i + 1}`, done, (n) => n >= (TASKS / 4) * (i + 1), 60_000, worker.output)
            yield* server.kill
            yield* Effect.sleep(downMs)
            assert.isNull(worker.child.exitCode, `worker exited:\n${worker.output()}`)
            if (downMs <= LEASE_MS) {
              yield* server.restart
            } else {
              // the worker's leases ran out while it could not renew them; another worker's pass gets there first
              worker.child.kill("SIGSTOP")
              yield* server.restart
              expiredWhileHeld = yield* query((yield* DispatchRepo).expireLeases(Date.now()))
              worker.child.kill("SIGCONT")
            }
            doneAtKill.push(yield* done)
          }
          yield* waitFor("the batch after the outages", done, (n) => n === TASKS, 90_000, worker.output)
          yield* fedAll(query)
          assert.isNull(worker.child.exitCode, `the worker ran through both outages:\n${worker.output()}`)
          worker.child.kill("SIGTERM")
          assert.strictEqual(
            yield* Deferred.await(worker.exited),
            0,
            `graceful stop after SIGTERM:\n${worker.output()}`
          )

          yield* exactlyOnce(TASKS, batchCallId, query)
          // both outages hit the batch mid-way, and the second one left the worker holding calls whose leases expired
          assert.isBelow(doneAtKill[0]!, TASKS)
          assert.isBelow(doneAtKill[1]!, TASKS)
          assert.isAbove(expiredWhileHeld, 0, "tasks in flight at the second outage had their leases expire")

          // the log: one line when each outage began, one when it ended; no stack trace, no flood
          const lines = logLines(worker.output())
          const count = (prefix: string) => lines.filter((l) => String(l.message).startsWith(prefix)).length
          const tail = `\n${worker.output().slice(-4_000)}`
          assert.strictEqual(count("database unavailable"), outagesMs.length, tail)
          assert.strictEqual(count("database available again after"), outagesMs.length, tail)
          assert.isAtMost(count("database still unavailable"), outagesMs.length, tail)
          // one line per call whose result could not be written (it names the task the reconciler will settle):
          // bounded by the calls in flight (the org's limit), not by the outage's length
          const unknown = count("dial outcome unknown")
          assert.isAtMost(unknown, LIMIT * outagesMs.length, `at most one line per call in flight${tail}`)
          assert.isAtMost(
            lines.filter((l) => l.level === "ERROR" || l.level === "WARN").length - unknown,
            4 * outagesMs.length,
            `a few warnings per outage at most${tail}`
          )
        })),
    180_000
  )

  it.live(
    "stops cleanly on SIGTERM while PostgreSQL is down; the next worker finishes the batch, dialling no one twice",
    () =>
      withBatch(300, ({ batchCallId, query, server, url }) =>
        Effect.gen(function*() {
          const first = yield* startWorker(url, "outage-stopped", { SCHEDULER_SHUTDOWN_GRACE_MS: "0" })
          const done = finished(batchCallId, query)
          yield* waitFor("before the outage", done, (n) => n >= 100, 60_000, first.output)
          yield* server.kill
          // its calls in flight end meanwhile; their results cannot be written. SIGTERM once the worker has met the
          // outage (its "database unavailable" line), not after a fixed second
          const metOutage = Date.now() + 30_000
          while (!logLines(first.output()).some((l) => String(l.message).startsWith("database unavailable"))) {
            if (Date.now() > metOutage) {
              assert.fail(`the worker never logged the outage:\n${first.output().slice(-3_000)}`)
            }
            yield* Effect.sleep(50)
          }
          first.child.kill("SIGTERM")
          // 60 s: under the full suite's parallel load a stop once took longer than 20 s in CI (not reproduced
          // alone, under CPU load, or in a 0700 checkout); a hang still fails here
          const code = yield* Deferred.await(first.exited).pipe(Effect.timeoutOption("60 seconds"))
          assert.deepStrictEqual(code._tag === "Some" ? code.value : "still running", 0, first.output())
          const lines = logLines(first.output())
          const stopped = lines.find((l) => l.message === "dispatcher stopped")
          assert.isDefined(stopped, first.output())
          const annotations = stopped!["annotations"] as Record<string, unknown>
          assert.isAbove(Number(annotations["leftToLeases"]), 0, "it held calls it could neither record nor release")
          assert.strictEqual(lines[lines.length - 1]!.message, "svc-scheduler stopped")

          yield* server.restart
          const second = yield* startWorker(url, "outage-successor")
          yield* waitFor("after the restart", done, (n) => n === 300, 90_000, second.output)
          yield* fedAll(query)
          second.child.kill("SIGTERM")
          assert.strictEqual(yield* Deferred.await(second.exited), 0, second.output())
          yield* exactlyOnce(300, batchCallId, query)
        })),
    180_000
  )
})
