// The scheduler's exactly-once guarantee under crashes (issue 5, "Done when"): a 2,000-task batch, three
// `svc-scheduler` processes on one PostgreSQL, each killed with SIGKILL at random moments (at least 20 kills in
// all) and started again. Afterwards every task was dialled exactly once, counted by idempotency key in the
// simulated carrier's own records (every dial request it received, shared by all processes), none was lost, and the
// org's calls in flight, sampled every few milliseconds throughout, never exceeded its limit.
import { assert, describe, it } from "@effect/vitest"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import * as Database from "@svc/store/db/Database.ts"
import { Deferred, Effect, Fiber, Layer, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { startWorker as startProcess, type Worker, workerDatabase } from "./support/SchedulerWorkers.ts"

const TASKS = 2_000
const LIMIT = 20
const RESERVED = 2
const WORKERS = 3
const MIN_KILLS = 20
// Each call holds its line 400 ms: at most 18 at once, the batch needs 45 s of dialling with every worker up, long
// enough for the kills to land while it runs.
const LATENCY_MS = 400

const startWorker = (url: string, index: number) =>
  startProcess(url, `crash-worker-${index}`, { latencyMs: LATENCY_MS })

const randomBetween = (low: number, high: number) => Math.floor(low + Math.random() * (high - low))

describe("svc-scheduler crash test", () => {
  it.live(
    "three workers SIGKILLed at random at least 20 times dial each of 2,000 tasks exactly once within the limit",
    () =>
      Effect.gen(function*() {
        const url = yield* workerDatabase("svc_crash")
        const context = yield* Layer.build(
          BatchCallsRepo.layer.pipe(
            Layer.provideMerge(Database.layerFromUrl(url, { migrate: false, maxConnections: 4 }))
          )
        )
        return yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const orgId = OrgId.make("org_crash")
          yield* sql`
            INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
            VALUES (${orgId}, 'crash test', ${LIMIT}, 0)`
          yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp)
                     VALUES (${orgId}, '+14155550100', 0)`
          const repo = yield* BatchCallsRepo
          const batch = yield* repo.create(
            orgId,
            "key_crash",
            Schema.decodeUnknownSync(CreateBatchCallRequest)({
              from_number: "+14155550100",
              reserved_concurrency: RESERVED,
              tasks: Array.from({ length: TASKS }, (_, i) => ({ to_number: `+4420${String(i).padStart(8, "0")}` }))
            }),
            { maxTasks: TASKS, legalGrouper: () => new LegalGrouper() }
          ).pipe(Effect.orDie)

          const workers: Array<Worker> = []
          for (let i = 0; i < WORKERS; i++) workers.push(yield* startWorker(Redacted.value(url), i))

          // Sampler: the org's calls in flight (tasks dialling or unknown) and the carrier's live calls.
          let maxTasksInFlight = 0
          let maxLiveCalls = 0
          let samples = 0
          const sampler = yield* Effect.forkChild(Effect.forever(Effect.gen(function*() {
            const [row] = yield* sql<{ tasks: number; live: number }>`
              SELECT
                (SELECT count(*)::int4 FROM batch_call_tasks
                  WHERE org_id = ${orgId} AND state IN ('dialling', 'unknown')) AS tasks,
                (SELECT count(*)::int4 FROM simulated_dialer_calls
                  WHERE placed_timestamp <= ${Date.now()} AND ends_timestamp > ${Date.now()}) AS live`
            maxTasksInFlight = Math.max(maxTasksInFlight, row!.tasks)
            maxLiveCalls = Math.max(maxLiveCalls, row!.live)
            samples++
            yield* Effect.sleep(10)
          })))

          // tasks not finished, and finished calls not yet applied to their contacts
          const remaining = sql<{ n: number }>`
            SELECT (SELECT count(*)::int4 FROM batch_call_tasks
              WHERE batch_call_id = ${batch.batch_call_id} AND state NOT IN ('completed', 'failed')) +
              (SELECT count(*)::int4 FROM contact_feed) AS n`.pipe(Effect.map((rows) => rows[0]!.n))

          // Killer: SIGKILL a random worker every 0.4-1.2 s, start it again 0-0.5 s later, until enough kills.
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
            workers[index] = yield* startWorker(Redacted.value(url), index)
          }

          // Let the survivors finish (reconciling what the kills left behind), then stop them gracefully.
          const deadline = Date.now() + 90_000
          while ((yield* remaining) > 0 && Date.now() < deadline) yield* Effect.sleep(200)
          const left = yield* remaining
          for (const worker of workers) worker.child.kill("SIGTERM")
          const codes = yield* Effect.forEach(workers, (w) => Deferred.await(w.exited))
          yield* Fiber.interrupt(sampler)
          const tails = workers.map((w, i) => `worker ${i}:\n${w.output}`).join("\n")

          assert.strictEqual(left, 0, `tasks not finished after the kills stopped:\n${tails}`)
          assert.isAtLeast(kills, MIN_KILLS)
          assert.isAbove(remainingAtLastKill, 0, "the kills happened while the batch was running")
          assert.deepStrictEqual(codes, workers.map(() => 0), `graceful stop after SIGTERM:\n${tails}`)

          // exactly once: every task's key reached the carrier once, no key twice, no other key
          const [dials] = yield* sql<{ attempts: number; keys: number; repeated: number; foreign: number }>`
            SELECT count(*)::int4 AS attempts, count(DISTINCT idempotency_key)::int4 AS keys,
              (SELECT count(*)::int4 FROM (
                SELECT 1 FROM simulated_dialer_attempts GROUP BY idempotency_key HAVING count(*) > 1) r) AS repeated,
              (SELECT count(*)::int4 FROM simulated_dialer_attempts a WHERE NOT EXISTS (
                SELECT 1 FROM batch_call_tasks t WHERE t.task_id::text = a.idempotency_key)) AS foreign
            FROM simulated_dialer_attempts`
          assert.deepStrictEqual(dials, { attempts: TASKS, keys: TASKS, repeated: 0, foreign: 0 })
          // none lost: every task finished, each with one recorded call, each call counted once on its contact
          const [recorded] = yield* sql<{ calls: number; conversations: number; status: string }>`
            SELECT (SELECT count(*)::int4 FROM calls WHERE batch_call_id = ${batch.batch_call_id}) AS calls,
              (SELECT sum(conversation_count)::int4 FROM contacts WHERE org_id = ${orgId}) AS conversations,
              (SELECT status FROM batch_calls WHERE batch_call_id = ${batch.batch_call_id}) AS status`
          assert.deepStrictEqual(recorded, { calls: TASKS, conversations: TASKS, status: "completed" })
          // the limit held throughout: concurrency_limit - reserved_concurrency
          assert.isAtLeast(samples, 200)
          assert.isAtMost(maxTasksInFlight, LIMIT - RESERVED)
          assert.isAtMost(maxLiveCalls, LIMIT - RESERVED)
          assert.isAtLeast(maxTasksInFlight, LIMIT - RESERVED - 2, "the workers used the slots they had")
        }).pipe(Effect.provideContext(context))
      }).pipe(Effect.scoped),
    180_000
  )
})
