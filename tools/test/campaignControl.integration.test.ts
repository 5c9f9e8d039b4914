// Campaign control across processes (issue 31, "Done when"; decision 0549): four `svc-scheduler` workers on one
// PostgreSQL dial two batches of one org through the simulated carrier (which records every dial request, shared by
// all processes). At random moments the capped batch is paused (as pause-batch-call does: BatchProgressRepo.pause)
// and resumed, and right after each resume a random worker is SIGKILLed and started again; numbers of the other
// batch are suppressed at random moments. Afterwards, counted in the carrier's own records:
// - no task that was not yet claimed when a pause answered was dialled before the resume (0 dials after pause);
// - every task was dialled exactly once (0 duplicates after resume with kill -9), none lost;
// - the capped batch's calls in flight, sampled every few ms throughout, never exceeded its max_concurrency;
// - no number was dialled after its suppression committed unless its task was already claimed, and those tasks
//   ended `skipped` with `suppressed (test)`.
import { assert, describe, it } from "@effect/vitest"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import { BatchProgressRepo } from "@svc/store/batches/BatchProgressRepo.ts"
import * as Database from "@svc/store/db/Database.ts"
import { Deferred, Effect, Fiber, Layer, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { startWorker, type Worker, workerDatabase } from "./support/SchedulerWorkers.ts"

const LIMIT = 12
const CAP = 4
const TASKS = 240
const WORKERS = 4
const CYCLES = 6
const SUPPRESSIONS = 6
const LATENCY_MS = 250

const randomBetween = (low: number, high: number) => Math.floor(low + Math.random() * (high - low))

describe("campaign control across four workers", () => {
  it.live(
    "pause, resume with kill -9, max_concurrency and suppressions: 0 dials after pause or suppression, exactly once",
    () =>
      Effect.gen(function*() {
        const url = yield* workerDatabase("svc_campaign")
        const context = yield* Layer.build(
          Layer.mergeAll(BatchCallsRepo.layer, BatchProgressRepo.layer).pipe(
            Layer.provideMerge(Database.layerFromUrl(url, { migrate: false, maxConnections: 4 }))
          )
        )
        return yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const orgId = OrgId.make("org_campaign")
          yield* sql`
            INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
            VALUES (${orgId}, 'campaign test', ${LIMIT}, 0)`
          yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp)
                     VALUES (${orgId}, '+14155550100', 0)`
          const batches = yield* BatchCallsRepo
          const create = (prefix: string, extra: Record<string, unknown>) =>
            batches.create(
              orgId,
              "key_campaign",
              Schema.decodeUnknownSync(CreateBatchCallRequest)({
                from_number: "+14155550100",
                tasks: Array.from(
                  { length: TASKS },
                  (_, i) => ({ to_number: `+44${prefix}${String(i).padStart(7, "0")}` })
                ),
                ...extra
              }),
              { maxTasks: TASKS, legalGrouper: () => new LegalGrouper() }
            ).pipe(Effect.orDie, Effect.map((b) => b.batch_call_id))
          const capped = yield* create("20", { max_concurrency: CAP })
          const other = yield* create("21", {})
          const progress = yield* BatchProgressRepo

          const workers: Array<Worker> = []
          const start = (i: number) => startWorker(Redacted.value(url), `campaign-${i}`, { latencyMs: LATENCY_MS })
          for (let i = 0; i < WORKERS; i++) workers.push(yield* start(i))

          // Sampler: the capped batch's calls in flight (tasks dialling or unknown), all along.
          let maxInFlight = 0
          let samples = 0
          const sampler = yield* Effect.forkChild(Effect.forever(Effect.gen(function*() {
            const [row] = yield* sql<{ n: number }>`
              SELECT count(*)::int4 AS n FROM batch_call_tasks
              WHERE batch_call_id = ${capped} AND state IN ('dialling', 'unknown')`
            maxInFlight = Math.max(maxInFlight, row!.n)
            samples++
            yield* Effect.sleep(5)
          })))

          /** The batch's tasks claimed at least once (their first call's key is the task id). */
          const claimedOf = (batchCallId: string) =>
            sql<{ task_id: string }>`
              SELECT task_id::text FROM batch_call_tasks WHERE batch_call_id = ${batchCallId} AND attempts > 0`.pipe(
              Effect.map((rows) => new Set(rows.map((r) => r.task_id)))
            )
          /** The carrier's dial requests for the batch, by idempotency key. */
          const dialledOf = (batchCallId: string) =>
            sql<{ idempotency_key: string }>`
              SELECT DISTINCT idempotency_key FROM simulated_dialer_attempts
              WHERE request->>'batch_call_id' = ${batchCallId}`.pipe(
              Effect.map((rows) => rows.map((r) => r.idempotency_key))
            )
          const remaining = sql<{ n: number }>`
            SELECT count(*)::int4 AS n FROM batch_call_tasks
            WHERE batch_call_id IN (${capped}, ${other}) AND state NOT IN ('completed', 'failed', 'skipped')`.pipe(
            Effect.map((rows) => rows[0]!.n)
          )

          /** Tasks of the batch no longer pending (claimed at least once, or skipped). */
          const taken = (batchCallId: string) =>
            sql<{ n: number }>`
              SELECT count(*)::int4 AS n FROM batch_call_tasks
              WHERE batch_call_id = ${batchCallId} AND state <> 'pending'`.pipe(Effect.map((rows) => rows[0]!.n))
          // Random moments are measured in the batches' own progress, not in time: a wait for `n` more of the batch's
          // tasks to be taken (or for all of them) lands at the same point of the run however loaded the machine is.
          const afterProgress = (batchCallId: string, n: number) =>
            Effect.gen(function*() {
              const target = Math.min((yield* taken(batchCallId)) + n, TASKS)
              yield* waitUntil(
                `${n} more tasks of ${batchCallId} taken`,
                Effect.map(taken(batchCallId), (k) => k >= target),
                { timeoutMs: 60_000 }
              )
            })

          // Suppressions at random moments: a number of the other batch, with whether its task was claimed then.
          const suppressed: Array<{ readonly taskId: string; readonly claimedBefore: boolean }> = []
          const suppressor = yield* Effect.forkChild(Effect.gen(function*() {
            for (let i = 0; i < SUPPRESSIONS; i++) {
              yield* afterProgress(other, randomBetween(5, 40))
              const [task] = yield* sql<{ task_id: string; to_number: string }>`
                SELECT task_id::text, to_number FROM batch_call_tasks
                WHERE batch_call_id = ${other} AND state = 'pending' AND NOT EXISTS (
                  SELECT 1 FROM suppressions s WHERE s.org_id = ${orgId} AND s.phone_number = to_number)
                ORDER BY task_index DESC LIMIT 1 OFFSET ${randomBetween(0, 20)}`
              if (task === undefined) return
              yield* sql`
                INSERT INTO suppressions (org_id, phone_number, source, created_timestamp)
                VALUES (${orgId}, ${task.to_number}, 'test', 0)`
              // committed (auto-commit): was its task claimed before?
              suppressed.push({ taskId: task.task_id, claimedBefore: (yield* claimedOf(other)).has(task.task_id) })
            }
          }))

          // Pause and resume the capped batch at random moments; a random worker killed right after each resume.
          let kills = 0
          let pauses = 0
          const lateDials: Array<string> = []
          for (let cycle = 0; cycle < CYCLES && (yield* remaining) > 0; cycle++) {
            yield* afterProgress(capped, randomBetween(3, 20))
            // a batch that completed meanwhile answers 409 (decision 0549): the cycles end there
            const paused = yield* progress.pause(orgId, capped, Date.now()).pipe(
              Effect.catchTag("BatchCallNotRunning", () => Effect.succeed(undefined)),
              Effect.orDie
            )
            if (paused?.status !== "paused") break
            pauses++
            const claimedAtPause = yield* claimedOf(capped)
            // while it is paused the workers go on with the other batch: they would have claimed the capped one too
            yield* afterProgress(other, randomBetween(10, 40))
            // dialled while paused: only tasks claimed before the pause answered
            for (const key of yield* dialledOf(capped)) if (!claimedAtPause.has(key)) lateDials.push(key)
            yield* progress.resume(orgId, capped, Date.now()).pipe(Effect.orDie)
            const index = randomBetween(0, WORKERS)
            // at once, or once the resumed batch has started again
            yield* afterProgress(capped, randomBetween(0, 3))
            workers[index]!.child.kill("SIGKILL")
            yield* Deferred.await(workers[index]!.exited)
            kills++
            workers[index] = yield* start(index)
          }
          yield* Fiber.join(suppressor)

          // Let the workers finish (reconciling what the kills left behind), then stop them gracefully.
          yield* waitUntil("every task finished", Effect.map(remaining, (n) => n === 0), {
            timeoutMs: 120_000,
            everyMs: 200,
            state: () => workers.map((w, i) => `worker ${i}: ${w.output.slice(-500)}`)
          })
          const left = yield* remaining
          for (const worker of workers) worker.child.kill("SIGTERM")
          const codes = yield* Effect.forEach(workers, (w) => Deferred.await(w.exited))
          yield* Fiber.interrupt(sampler)
          const tails = workers.map((w, i) => `worker ${i}:\n${w.output}`).join("\n")

          assert.strictEqual(left, 0, `tasks not finished:\n${tails}`)
          assert.deepStrictEqual(codes, workers.map(() => 0), `graceful stop after SIGTERM:\n${tails}`)
          assert.isAtLeast(pauses, 3, "the batch was paused while it ran")
          assert.isAtLeast(kills, 3)
          assert.deepStrictEqual(lateDials, [], "tasks dialled after a pause answered and before the resume")

          // the cap held throughout, and was reached (the sampler saw the batch at work)
          assert.isAtLeast(samples, 200)
          assert.isAtMost(maxInFlight, CAP)
          assert.isAtLeast(maxInFlight, CAP - 1, "the capped batch used its lines")

          // suppressions: the number of a task not yet claimed at commit was never dialled, its task skipped
          assert.isAtLeast(suppressed.length, 3)
          const dialledOther = new Set(yield* dialledOf(other))
          for (const s of suppressed) {
            if (s.claimedBefore) continue
            assert.isFalse(dialledOther.has(s.taskId), `task ${s.taskId} dialled after its suppression committed`)
            const [row] = yield* sql<{ state: string; state_reason: string | null }>`
              SELECT state, state_reason FROM batch_call_tasks WHERE task_id = ${s.taskId}::int8`
            assert.deepStrictEqual({ ...row }, { state: "skipped", state_reason: "suppressed (test)" })
          }

          // exactly once: every key reached the carrier once, no key twice, no key of no task
          const [dials] = yield* sql<{ attempts: number; keys: number; repeated: number; foreign: number }>`
            SELECT count(*)::int4 AS attempts, count(DISTINCT idempotency_key)::int4 AS keys,
              (SELECT count(*)::int4 FROM (
                SELECT 1 FROM simulated_dialer_attempts GROUP BY idempotency_key HAVING count(*) > 1) r) AS repeated,
              (SELECT count(*)::int4 FROM simulated_dialer_attempts a WHERE NOT EXISTS (
                SELECT 1 FROM batch_call_tasks t WHERE t.task_id::text = a.idempotency_key)) AS foreign
            FROM simulated_dialer_attempts`
          const [skipped] = yield* sql<{ n: number }>`
            SELECT count(*)::int4 AS n FROM batch_call_tasks
            WHERE batch_call_id IN (${capped}, ${other}) AND state = 'skipped'`
          const dialled = 2 * TASKS - skipped!.n
          assert.deepStrictEqual(dials, { attempts: dialled, keys: dialled, repeated: 0, foreign: 0 })
          const [status] = yield* sql<{ a: string; b: string }>`
            SELECT (SELECT status FROM batch_calls WHERE batch_call_id = ${capped}) AS a,
              (SELECT status FROM batch_calls WHERE batch_call_id = ${other}) AS b`
          assert.deepStrictEqual({ ...status }, { a: "completed", b: "completed" })
        }).pipe(Effect.provideContext(context))
      }).pipe(Effect.scoped),
    240_000
  )
})
