// The scheduler's exactly-once guarantee through the Twilio adapter (issue 14, "Done when"): the crash test of
// schedulerCrash.integration.test.ts with `SVC_DIALER=twilio`. Three `svc-scheduler` processes dial a 2,000-task
// batch through the real adapter and the official SDK against a local Twilio double (in this process, the carrier's
// side: it survives the workers' deaths as Twilio would), which sends signed status callbacks to a real svc-server
// process (`POST /carrier/twilio/status`). Each worker is SIGKILLed at random moments (at least 20 kills), and the
// double injects faults meanwhile: create requests answered 500 (a call may or may not exist: lookup decides), 429
// (rate limited: backed off and retried) and callbacks duplicated.
//
// Afterwards: every task's number got exactly one call at the double (at most one call per key, none lost), every
// task finished with its call recorded, the org's calls in flight never exceeded its limit (at the double and in
// the tasks), and call creation never exceeded SVC_CARRIER_CPS in any second.
import { assert, describe, it } from "@effect/vitest"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import * as Database from "@svc/store/db/Database.ts"
import * as DatabaseAdmin from "@svc/store/db/DatabaseAdmin.ts"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { Config, Deferred, Effect, Fiber, Layer, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { TwilioDouble } from "../../apps/scheduler/test/fixtures/TwilioDouble.ts"
import { freePort, waitFor } from "./support/Svc.ts"

const root = path.resolve(import.meta.dirname, "..", "..")
const schedulerMain = path.join(root, "apps/scheduler/src/main.ts")
const serverMain = path.join(root, "apps/server/src/main.ts")

const TASKS = 2_000
const LIMIT = 20
const RESERVED = 2
const WORKERS = 3
const MIN_KILLS = 20
const CPS = 60
const ACCOUNT = "AC" + "c0ffee00".repeat(4)
const TOKEN = "crash-test-auth-token"
const FROM = "+14155550100"

interface Child {
  readonly child: ChildProcess
  readonly exited: Deferred.Deferred<number | null>
  output: string
}

const spawnNode = (main: string, env: Record<string, string>) =>
  Effect.gen(function*() {
    const exited = yield* Deferred.make<number | null>()
    const child = spawn(process.execPath, [main], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: "Warn", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const running: Child = { child, exited, output: "" }
    const keep = (chunk: Buffer) => {
      running.output = (running.output + chunk.toString()).slice(-4_000)
    }
    child.stdout?.on("data", keep)
    child.stderr?.on("data", keep)
    child.once("exit", (code) => Deferred.doneUnsafe(exited, Effect.succeed(code)))
    return running
  })

const randomBetween = (low: number, high: number) => Math.floor(low + Math.random() * (high - low))

describe("svc-scheduler crash test through the Twilio adapter", () => {
  it.live(
    "three workers SIGKILLed at random at least 20 times place exactly one Twilio call per task, within the limit and the CPS",
    () =>
      Effect.gen(function*() {
        const admin = Redacted.make(yield* Config.String("SVC_TEST_ADMIN_URL"))
        const template = yield* Config.String("SVC_TEST_TEMPLATE")
        const name = `svc_crash_twilio_${process.pid}_${Date.now().toString(36)}`
        yield* Effect.acquireRelease(
          DatabaseAdmin.ensureDatabase(admin, name, template).pipe(Effect.orDie),
          () => DatabaseAdmin.dropDatabase(admin, name).pipe(Effect.ignore)
        )
        const url = TestDatabase.urlFor(admin, name)
        const context = yield* Layer.build(
          BatchCallsRepo.layer.pipe(
            Layer.provideMerge(Database.layerFromUrl(url, { migrate: false, maxConnections: 4 }))
          )
        )

        const double = yield* TwilioDouble.make(ACCOUNT, TOKEN)
        // each call: initiated, ringing, answered, completed about 0.45 s after its creation
        double.script = () => [
          { status: "initiated", afterMs: 20 },
          { status: "ringing", afterMs: 80 },
          { status: "in-progress", afterMs: 100, answeredBy: "human" },
          { status: "completed", afterMs: 250, answeredBy: "human" }
        ]

        const port = yield* Effect.promise(freePort)
        const publicUrl = `http://127.0.0.1:${port}`
        const server = yield* spawnNode(serverMain, {
          DATABASE_URL: Redacted.value(url),
          PORT: String(port),
          TWILIO_AUTH_TOKEN: TOKEN,
          SVC_PUBLIC_URL: publicUrl
        })
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => server.child.kill("SIGTERM")).pipe(Effect.andThen(Deferred.await(server.exited)))
        )
        yield* Effect.promise(() => waitFor(`${publicUrl}/readyz`, 60_000, (status) => status === 200))

        const startWorker = (index: number) =>
          spawnNode(schedulerMain, {
            DATABASE_URL: Redacted.value(url),
            SVC_DB_MAX_CONNECTIONS: "5",
            SCHEDULER_WORKER_ID: `twilio-worker-${index}-${Math.random().toString(36).slice(2, 6)}`,
            SCHEDULER_LEASE_MS: "3000",
            SCHEDULER_POLL_MS: "200",
            SCHEDULER_RECONCILE_RECHECK_MS: "300",
            SCHEDULER_SHUTDOWN_GRACE_MS: "2000",
            SCHEDULER_BACKFILL_CRON: "off",
            SVC_DIALER: "twilio",
            TWILIO_ACCOUNT_SID: ACCOUNT,
            TWILIO_AUTH_TOKEN: TOKEN,
            SVC_PUBLIC_URL: publicUrl,
            SVC_AGENT_SIP_SERVER: "agents.example.com:5060",
            SVC_TWILIO_API_URL: double.baseUrl,
            SVC_CARRIER_CPS: String(CPS),
            // calls start within 20 ms of their slot, so that no second holds more than CPS creations at the
            // double even when a loaded machine wakes a worker late (decision 0610)
            SVC_CARRIER_START_TOLERANCE_MS: "20"
          })

        return yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const orgId = OrgId.make("org_crash_twilio")
          yield* sql`
            INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
            VALUES (${orgId}, 'twilio crash test', ${LIMIT}, 0)`
          yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, ${FROM}, 0)`
          const repo = yield* BatchCallsRepo
          // UK numbers: NANP numbers wait for the recipient's legal hours (issue 15, decision 0623), and this test runs
          // at any hour of the day
          const numbers = Array.from({ length: TASKS }, (_, i) => `+44207${String(i).padStart(7, "0")}`)
          const batch = yield* repo.create(
            orgId,
            "key_crash_twilio",
            Schema.decodeUnknownSync(CreateBatchCallRequest)({
              from_number: FROM,
              reserved_concurrency: RESERVED,
              tasks: numbers.map((to_number) => ({ to_number }))
            }),
            { maxTasks: TASKS, legalGrouper: () => new LegalGrouper() }
          ).pipe(Effect.orDie)

          const workers: Array<Child> = []
          for (let i = 0; i < WORKERS; i++) workers.push(yield* startWorker(i))

          // Sampler: the org's tasks in flight, and the calls live at the double (created, not ended).
          let maxTasksInFlight = 0
          let maxLiveCalls = 0
          let samples = 0
          const ended = new Set(["completed", "busy", "no-answer", "failed", "canceled"])
          const sampler = yield* Effect.forkChild(Effect.forever(Effect.gen(function*() {
            const [row] = yield* sql<{ tasks: number }>`
              SELECT count(*)::int4 AS tasks FROM batch_call_tasks
              WHERE org_id = ${orgId} AND state IN ('dialling', 'unknown')`
            let live = 0
            for (const call of double.calls.values()) if (!ended.has(call.status)) live++
            maxTasksInFlight = Math.max(maxTasksInFlight, row!.tasks)
            maxLiveCalls = Math.max(maxLiveCalls, live)
            samples++
            yield* Effect.sleep(10)
          })))

          // Faults: now and then a create answered 500 (no call, but the adapter cannot know: lookup decides) or
          // 429 (the pacer backs every worker off and the create is retried).
          let faults = 0
          const faulter = yield* Effect.forkChild(Effect.forever(Effect.gen(function*() {
            yield* Effect.sleep(randomBetween(500, 1_500))
            double.createAnswers.push(
              Math.random() < 0.5
                ? { _tag: "Fail", status: 500, code: 20500 }
                : { _tag: "Fail", status: 429, code: 20429 }
            )
            faults++
          })))

          const remaining = sql<{ n: number }>`
            SELECT (SELECT count(*)::int4 FROM batch_call_tasks
              WHERE batch_call_id = ${batch.batch_call_id} AND state NOT IN ('completed', 'failed')) +
              (SELECT count(*)::int4 FROM contact_feed) AS n`.pipe(Effect.map((rows) => rows[0]!.n))

          let kills = 0
          let remainingAtLastKill = 0
          while (kills < MIN_KILLS + 4 && (remainingAtLastKill = yield* remaining) > 0) {
            yield* Effect.sleep(randomBetween(400, 1_200))
            const index = randomBetween(0, WORKERS)
            const victim = workers[index]!
            victim.child.kill("SIGKILL")
            yield* Deferred.await(victim.exited)
            kills++
            yield* Effect.sleep(randomBetween(0, 500))
            workers[index] = yield* startWorker(index)
          }
          yield* Fiber.interrupt(faulter)
          double.createAnswers.length = 0
          double.callbackMode = "inOrder"

          // every call costs the server four signed callbacks: on a loaded machine the drain takes a while
          const deadline = Date.now() + 240_000
          while ((yield* remaining) > 0 && Date.now() < deadline) yield* Effect.sleep(200)
          const left = yield* remaining
          for (const worker of workers) worker.child.kill("SIGTERM")
          const codes = yield* Effect.forEach(workers, (w) => Deferred.await(w.exited))
          yield* Fiber.interrupt(sampler)
          const tails = [...workers.map((w, i) => `worker ${i}:\n${w.output}`), `server:\n${server.output}`].join("\n")

          assert.strictEqual(left, 0, `tasks not finished after the kills stopped:\n${tails}`)
          assert.isAtLeast(kills, MIN_KILLS)
          assert.isAbove(remainingAtLastKill, 0, "the kills happened while the batch was running")
          assert.isAtLeast(faults, 10, "faults were injected while the batch ran")
          assert.deepStrictEqual(codes, workers.map(() => 0), `graceful stop after SIGTERM:\n${tails}`)

          // exactly once at the carrier: one call per task's number, none twice, no other number
          const perNumber = numbers.map((to) => double.createsFor(to, FROM))
          assert.strictEqual(perNumber.filter((n) => n > 1).length, 0, "no number was called twice")
          assert.strictEqual(perNumber.filter((n) => n === 0).length, 0, "every number was called")
          assert.strictEqual(double.calls.size, TASKS)
          // none lost: every task finished with its call recorded and counted on its contact
          const [recorded] = yield* sql<{ calls: number; conversations: number; status: string; records: number }>`
            SELECT (SELECT count(*)::int4 FROM calls WHERE batch_call_id = ${batch.batch_call_id}
                      AND call_status = 'ended') AS calls,
              (SELECT sum(conversation_count)::int4 FROM contacts WHERE org_id = ${orgId}) AS conversations,
              (SELECT status FROM batch_calls WHERE batch_call_id = ${batch.batch_call_id}) AS status,
              (SELECT count(*)::int4 FROM twilio_calls WHERE status = 'completed') AS records`
          assert.deepStrictEqual(recorded, { calls: TASKS, conversations: TASKS, status: "completed", records: TASKS })
          // the org's limit held throughout: concurrency_limit - reserved_concurrency
          assert.isAtLeast(samples, 200)
          assert.isAtMost(maxTasksInFlight, LIMIT - RESERVED)
          assert.isAtMost(maxLiveCalls, LIMIT - RESERVED)
          // the account's rate held: at most CPS creations in any one-second window
          const created = [...double.calls.values()].map((c) => c.dateCreated).sort((a, b) => a - b)
          let busiest = 0
          for (let i = 0, j = 0; i < created.length; i++) {
            while (created[i]! - created[j]! >= 1_000) j++
            busiest = Math.max(busiest, i - j + 1)
          }
          assert.isAtMost(busiest, CPS, "call creations in the busiest second")
        }).pipe(Effect.provideContext(context))
      }).pipe(Effect.scoped),
    420_000
  )
})
