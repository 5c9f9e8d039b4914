// retry-batch-call's store half (decision 0551): which tasks are re-queued (the outcome of their last call, as decision
// 0625 names outcomes, plus failed dials) and which are not (other outcomes, calls in flight, suppressed numbers,
// do_not_call contacts, tasks at their call cap), each retry a new call with its own id and key, the batch re-opened
// or left paused, and the races with cancel (org lock, both orders) and with a completion whose snapshot predates the
// retry. Tasks are claimed and recorded through the scheduler's own statements (DispatchRepo.claim,
// CallsRepo.recordFinished), so their calls rows are the ones the scheduler leaves.
import { assert, layer } from "@effect/vitest"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { attemptKey } from "@svc/domain/models/RetryPolicy.ts"
import type { CallEnded } from "@svc/domain/ports/Dialer.ts"
import { Deferred, Effect, Fiber, Layer, Result, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { BatchCallsRepo } from "../../src/batches/BatchCallsRepo.ts"
import { BatchProgressRepo } from "../../src/batches/BatchProgressRepo.ts"
import { BatchRetry } from "../../src/batches/BatchRetry.ts"
import { CallsRepo } from "../../src/calls/CallsRepo.ts"
import { type ClaimedTask, DispatchRepo, ORG_LOCK } from "../../src/dispatch/DispatchRepo.ts"
import { finishedFromCall } from "../../test-support/FinishedTasks.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const Layers = Layer.mergeAll(
  BatchCallsRepo.layer,
  BatchProgressRepo.layer,
  BatchRetry.layer,
  CallsRepo.layer,
  DispatchRepo.layer
).pipe(Layer.provideMerge(TestDatabase.layer))

const FROM = "+14155550100"
const ALL = ["no_answer", "busy", "voicemail", "failed"] as const
const T0 = 1_000_000

/** How a task's dial ends: a call's outcome and disconnection reason, or a dial the carrier refused (no call). */
type Ending = "answered" | "voicemail" | "no_answer" | "busy" | "failed" | "rejected"

const endings: Record<Exclude<Ending, "rejected">, Pick<CallEnded, "outcome" | "disconnection_reason">> = {
  answered: { outcome: "answered", disconnection_reason: "user_hangup" },
  voicemail: { outcome: "answered", disconnection_reason: "voicemail_reached" },
  no_answer: { outcome: "no_answer", disconnection_reason: "dial_no_answer" },
  busy: { outcome: "busy", disconnection_reason: "dial_busy" },
  failed: { outcome: "failed", disconnection_reason: "dial_failed" }
}

let orgs = 0

/** A new org (limit 100) with a batch to `numbers` (London: no legal hours); returns both ids. */
const seed = (numbers: ReadonlyArray<string>, extra: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const orgId = OrgId.make(`org_retry_${process.pid}_${++orgs}`)
    yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp) VALUES (${orgId}, ${orgId}, 100, 0)`
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, ${FROM}, 0)`
    const batch = yield* (yield* BatchCallsRepo).create(
      orgId,
      "key",
      Schema.decodeUnknownSync(CreateBatchCallRequest)({
        from_number: FROM,
        tasks: numbers.map((n) => ({ to_number: n })),
        ...extra
      }),
      { maxTasks: 1_000, legalGrouper: () => new LegalGrouper() }
    ).pipe(Effect.orDie)
    return { orgId, batch: batch.batch_call_id }
  })

const london = (i: number) => `+44207183${String(8700 + i)}`

/** Claims every pending task of the batch that may be dialled at `now`. */
const claimAll = (orgId: OrgId, batch: BatchCallId, now: number) =>
  Effect.gen(function*() {
    const dispatch = yield* DispatchRepo
    const due = (yield* dispatch.findDue(now, 100)).due.filter((d) => d.batchCallId === batch)
    if (due.length === 0) return []
    const result = yield* dispatch.claim(orgId, due, { owner: "worker", now, leaseMs: 60_000, maxPerBatch: 100 })
    return result.claimed
  })

/** Records the end of a claimed task's dial as the scheduler would. */
const finish = (task: ClaimedTask, ending: Ending, now: number) =>
  Effect.gen(function*() {
    const calls = yield* CallsRepo
    const base = {
      taskId: task.taskId,
      orgId: task.orgId,
      batchCallId: task.batchCallId,
      fromNumber: task.request.from_number,
      toNumber: task.request.to_number
    }
    const finished = ending === "rejected"
      ? { ...base, state: "failed" as const, reason: "rejected: invalid_destination", call: undefined }
      : finishedFromCall(base, {
        _tag: "CallEnded",
        idempotency_key: task.request.idempotency_key,
        call_id: task.request.call_id,
        start_timestamp: now - 1_000,
        end_timestamp: now,
        duration_ms: 1_000,
        analysis: {},
        ...endings[ending]
      })
    assert.strictEqual((yield* calls.recordFinished([finished], now)).finished, 1)
  })

interface TaskRow {
  readonly task_index: number
  readonly state: string
  readonly state_reason: string | null
  readonly retry_attempt: number
  readonly attempts: number
  readonly not_before: number | null
  readonly call_id: string | null
}

const tasksOf = (batch: BatchCallId) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<TaskRow>`
      SELECT task_index, state, state_reason, retry_attempt, attempts, not_before::float8 AS not_before, call_id
      FROM batch_call_tasks WHERE batch_call_id = ${batch} ORDER BY task_index`.pipe(
      Effect.map((rows) => rows.map((r) => ({ ...r })))
    ))

const batchOf = (batch: BatchCallId) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ status: string; next_dispatch_at: number; finished_timestamp: number | null }>`
      SELECT status, next_dispatch_at::float8 AS next_dispatch_at, finished_timestamp::float8 AS finished_timestamp
      FROM batch_calls WHERE batch_call_id = ${batch}`.pipe(Effect.map((rows) => ({ ...rows[0]! })))
  )

const callCount = (batch: BatchCallId) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ n: number }>`SELECT count(*)::int4 AS n FROM calls WHERE batch_call_id = ${batch}`.pipe(
        Effect.map((rows) => rows[0]!.n)
      )
  )

/** Waits until `n` backends wait on a lock, without sleeping (bounded; says what it saw). */
const untilWaitingOnLocks = (n: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    let seen = 0
    for (let i = 0; i < 20_000; i++) {
      const rows = yield* sql<{ n: number }>`
        SELECT count(*)::int4 AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`
      seen = rows[0]?.n ?? 0
      if (seen >= n) return
      yield* Effect.yieldNow
    }
    assert.fail(`expected ${n} statements waiting on a lock, saw ${seen}`)
  })

/** Dials every task of a fresh batch once, each ending as `ends` says (by task index); returns the claimed tasks. */
const dialled = (ends: ReadonlyArray<Ending | "in_flight">, extra: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const seeded = yield* seed(ends.map((_, i) => london(i)), extra)
    const claimed = yield* claimAll(seeded.orgId, seeded.batch, T0)
    assert.strictEqual(claimed.length, ends.length)
    for (const task of claimed) {
      const ending = ends[task.taskIndex]!
      if (ending !== "in_flight") yield* finish(task, ending, T0 + 60_000)
    }
    return { ...seeded, claimed }
  })

layer(Layers, { timeout: 120_000 })("BatchRetry", (it) => {
  it.effect("re-queues exactly the tasks whose last call was unanswered, busy, voicemail or a failed dial", () =>
    Effect.gen(function*() {
      const { batch, claimed, orgId } = yield* dialled([
        "answered",
        "voicemail",
        "no_answer",
        "busy",
        "failed",
        "rejected",
        "in_flight"
      ])
      const retry = yield* BatchRetry
      const result = yield* retry.retry(orgId, batch, ALL, T0 + 120_000)
      assert.deepStrictEqual(result, { requeued: 5, suppressed: 0, doNotCall: 0, attemptCap: 0, status: "in_progress" })
      const tasks = yield* tasksOf(batch)
      assert.deepStrictEqual(tasks.map((t) => t.state), [
        "completed",
        "pending",
        "pending",
        "pending",
        "pending",
        "pending",
        "dialling"
      ])
      // each re-queued task waits for its second call, due now (no spacing), its first call's id kept until claimed
      assert.deepStrictEqual(tasks.slice(1, 6).map((t) => t.state_reason), [
        "retry requested: voicemail, call 2 of 11",
        "retry requested: no_answer, call 2 of 11",
        "retry requested: busy, call 2 of 11",
        "retry requested: failed, call 2 of 11",
        "retry requested: failed, call 2 of 11"
      ])
      for (const t of tasks.slice(1, 6)) {
        assert.deepInclude(t, { retry_attempt: 2, attempts: 0, not_before: null })
        assert.strictEqual(t.call_id, claimed.find((c) => c.taskIndex === t.task_index)!.request.call_id)
      }
      assert.deepInclude(tasks[0]!, { retry_attempt: 1, attempts: 1 })
      assert.isAtMost((yield* batchOf(batch)).next_dispatch_at, T0 + 120_000)

      // claimed again: each is a new call, with its own id and the second attempt's key, registered as a new row
      const again = yield* claimAll(orgId, batch, T0 + 120_000)
      assert.deepStrictEqual(again.map((c) => c.taskIndex), [1, 2, 3, 4, 5])
      for (const c of again) {
        const first = claimed.find((f) => f.taskId === c.taskId)!
        assert.strictEqual(c.request.idempotency_key, attemptKey(c.taskId, 2))
        assert.notStrictEqual(c.request.idempotency_key, first.request.idempotency_key)
        assert.notStrictEqual(c.request.call_id, first.request.call_id)
      }
      assert.strictEqual(new Set(again.map((c) => c.request.call_id)).size, 5)
      assert.strictEqual(yield* callCount(batch), 7 + 5)
      // nothing left to claim: each retry is dialled once
      assert.deepStrictEqual(yield* claimAll(orgId, batch, T0 + 180_000), [])
    }))

  it.effect("re-queues only the outcomes asked for", () =>
    Effect.gen(function*() {
      const { batch, orgId } = yield* dialled(["no_answer", "busy", "voicemail", "failed"])
      const retry = yield* BatchRetry
      const busy = yield* retry.retry(orgId, batch, ["busy"], T0 + 120_000)
      assert.strictEqual(busy.requeued, 1)
      assert.deepStrictEqual((yield* tasksOf(batch)).map((t) => t.state), [
        "completed",
        "pending",
        "completed",
        "failed"
      ])
      // the same again re-queues nothing: the busy task is pending, not finished
      assert.strictEqual((yield* retry.retry(orgId, batch, ["busy"], T0 + 120_000)).requeued, 0)
      const voicemail = yield* retry.retry(orgId, batch, ["voicemail", "failed"], T0 + 120_000)
      assert.strictEqual(voicemail.requeued, 2)
      assert.deepStrictEqual((yield* tasksOf(batch)).map((t) => t.state), [
        "completed",
        "pending",
        "pending",
        "pending"
      ])
    }))

  it.effect("leaves suppressed numbers, do_not_call contacts and tasks at their call cap, and counts them", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // a policy of 1 retry on busy: task 3's busy call is retried once by the recorder and is then at its cap of 2
      const { batch, orgId } = yield* dialled(["no_answer", "no_answer", "no_answer", "busy", "no_answer"], {
        retry_policy: { max_retries: 1, retry_on: ["busy"], min_spacing_ms: 60_000 }
      })
      const [auto] = yield* claimAll(orgId, batch, T0 + 120_000)
      assert.strictEqual(auto?.taskIndex, 3)
      yield* finish(auto!, "busy", T0 + 150_000)
      yield* sql`INSERT INTO suppressions (org_id, phone_number, reason, source, created_timestamp)
                 VALUES (${orgId}, ${london(0)}, NULL, 'opt_out', 1)`
      yield* sql`INSERT INTO contacts (org_id, contact_id, phone_number, do_not_call, created_timestamp,
                   user_modified_timestamp)
                 VALUES (${orgId}, 'contact_dnc', ${london(1)}, true, 1, 1)`
      // a contact that may be called is no reason to leave its task
      yield* sql`INSERT INTO contacts (org_id, contact_id, phone_number, do_not_call, created_timestamp,
                   user_modified_timestamp)
                 VALUES (${orgId}, 'contact_ok', ${london(2)}, false, 1, 1)`
      const retry = yield* BatchRetry
      const result = yield* retry.retry(orgId, batch, ALL, T0 + 200_000)
      assert.deepStrictEqual(result, { requeued: 2, suppressed: 1, doNotCall: 1, attemptCap: 1, status: "in_progress" })
      const tasks = yield* tasksOf(batch)
      assert.deepStrictEqual(tasks.map((t) => [t.state, t.retry_attempt]), [
        ["completed", 1],
        ["completed", 1],
        ["pending", 2],
        ["completed", 2],
        ["pending", 2]
      ])
      // the policy's cap: call 2 of 2
      assert.strictEqual(tasks[2]!.state_reason, "retry requested: no_answer, call 2 of 2")
    }))

  it.effect("without a retry policy a task has at most 11 calls", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { batch, orgId } = yield* dialled(["no_answer", "no_answer"])
      // task 0 has had its 11th call (as if retried ten times)
      yield* sql`UPDATE batch_call_tasks SET retry_attempt = 11 WHERE batch_call_id = ${batch} AND task_index = 0`
      yield* sql`UPDATE batch_call_tasks SET retry_attempt = 10 WHERE batch_call_id = ${batch} AND task_index = 1`
      const result = yield* (yield* BatchRetry).retry(orgId, batch, ALL, T0 + 120_000)
      assert.deepInclude(result, { requeued: 1, attemptCap: 1 })
      assert.deepStrictEqual((yield* tasksOf(batch)).map((t) => [t.state, t.state_reason]), [
        ["completed", "no_answer"],
        ["pending", "retry requested: no_answer, call 11 of 11"]
      ])
    }))

  it.effect("re-opens a completed batch, due now, and times its next completion afresh", () =>
    Effect.gen(function*() {
      const { batch, orgId } = yield* dialled(["answered", "no_answer"])
      const dispatch = yield* DispatchRepo
      assert.deepStrictEqual(yield* dispatch.completeIfDone([batch]), [batch])
      const completed = yield* batchOf(batch)
      assert.strictEqual(completed.status, "completed")
      assert.isNotNull(completed.finished_timestamp)
      const retry = yield* BatchRetry
      // nothing to retry among the answered: the batch stays as it was
      assert.deepStrictEqual(yield* retry.retry(orgId, batch, ["busy"], T0 + 120_000), {
        requeued: 0,
        suppressed: 0,
        doNotCall: 0,
        attemptCap: 0,
        status: "completed"
      })
      assert.deepStrictEqual(yield* batchOf(batch), completed)
      const result = yield* retry.retry(orgId, batch, ALL, T0 + 120_000)
      assert.deepStrictEqual([result.requeued, result.status], [1, "in_progress"])
      const reopened = yield* batchOf(batch)
      assert.deepStrictEqual(reopened.status, "in_progress")
      assert.isNull(reopened.finished_timestamp)
      assert.isAtMost(reopened.next_dispatch_at, T0 + 120_000)
      const progress = yield* (yield* BatchProgressRepo).get(orgId, batch, T0 + 120_000)
      assert.deepStrictEqual([progress.status, progress.tasks.pending, progress.completed_timestamp], [
        "in_progress",
        1,
        null
      ])
      // dialled, answered, completed again: with the time of the second completion
      const [task] = yield* claimAll(orgId, batch, T0 + 120_000)
      yield* finish(task!, "answered", T0 + 180_000)
      assert.deepStrictEqual(yield* dispatch.completeIfDone([batch]), [batch])
      const again = yield* batchOf(batch)
      assert.strictEqual(again.status, "completed")
      assert.isNotNull(again.finished_timestamp)
    }))

  it.effect("a paused batch stays paused: its tasks are re-queued and not claimed until it is resumed", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { batch, orgId } = yield* dialled(["no_answer", "in_flight"])
      yield* sql`UPDATE batch_calls SET status = 'paused', paused_from = 'in_progress' WHERE batch_call_id = ${batch}`
      const result = yield* (yield* BatchRetry).retry(orgId, batch, ALL, T0 + 120_000)
      assert.deepStrictEqual([result.requeued, result.status], [1, "paused"])
      assert.strictEqual((yield* batchOf(batch)).status, "paused")
      assert.strictEqual((yield* tasksOf(batch))[0]!.state, "pending")
      // not due while paused (the claim would take nothing of it either)
      assert.deepStrictEqual(yield* claimAll(orgId, batch, T0 + 120_000), [])
      yield* sql`UPDATE batch_calls SET status = paused_from, paused_from = NULL WHERE batch_call_id = ${batch}`
      assert.deepStrictEqual((yield* claimAll(orgId, batch, T0 + 180_000)).map((c) => c.taskIndex), [0])
    }))

  it.effect("a cancelled batch, another org's batch and an unknown id are refused, and nothing changes", () =>
    Effect.gen(function*() {
      const { batch, orgId } = yield* dialled(["no_answer", "busy"])
      const other = yield* seed([london(9)])
      const retry = yield* BatchRetry
      const foreign = yield* Effect.flip(retry.retry(other.orgId, batch, ALL, T0))
      assert.deepStrictEqual([foreign._tag, foreign.message], ["BatchCallNotFound", `batch call ${batch} not found`])
      assert.strictEqual(
        (yield* Effect.flip(retry.retry(orgId, BatchCallId.make("batch_call_nope"), ALL, T0)))._tag,
        "BatchCallNotFound"
      )
      assert.deepStrictEqual((yield* tasksOf(batch)).map((t) => t.state), ["completed", "completed"])
      yield* (yield* BatchProgressRepo).cancel(orgId, batch, T0)
      const cancelled = yield* Effect.flip(retry.retry(orgId, batch, ALL, T0))
      assert.strictEqual(cancelled._tag, "BatchCallCancelled")
      assert.match(cancelled.message, /is cancelled/)
      assert.deepStrictEqual((yield* tasksOf(batch)).map((t) => t.state), ["completed", "completed"])
    }))

  for (const first of ["retry", "cancel"] as const) {
    it.effect(`a retry and a cancel of one batch, ${first} granted the org's lock first: no task left pending`, () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { batch, orgId } = yield* dialled(["no_answer", "busy", "answered"])
        const retry = yield* BatchRetry
        const progress = yield* BatchProgressRepo
        // a claim's transaction holds the org's lock while both arrive, in the order under test
        const held = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const holder = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(${ORG_LOCK}, hashtext(${orgId}))`
          yield* Deferred.succeed(held, undefined)
          yield* Deferred.await(release)
        })))
        yield* Deferred.await(held)
        const forkRetry = Effect.forkChild(Effect.result(retry.retry(orgId, batch, ALL, T0 + 120_000)))
        const forkCancel = Effect.forkChild(progress.cancel(orgId, batch, T0 + 120_000))
        const retryFirst = first === "retry"
        const retrying = retryFirst ? yield* forkRetry : undefined
        const cancelling = retryFirst ? undefined : yield* forkCancel
        yield* untilWaitingOnLocks(1)
        const retried = retrying ?? (yield* forkRetry)
        const cancelled = cancelling ?? (yield* forkCancel)
        yield* untilWaitingOnLocks(2)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        const retryResult = yield* Fiber.join(retried)
        assert.strictEqual((yield* Fiber.join(cancelled)).status, "cancelled")
        const states = (yield* tasksOf(batch)).map((t) => t.state)
        if (retryFirst) {
          // the retry re-queued two tasks; the cancel that waited for it cancelled them
          assert.isTrue(Result.isSuccess(retryResult))
          if (Result.isSuccess(retryResult)) assert.strictEqual(retryResult.success.requeued, 2)
          assert.deepStrictEqual(states, ["cancelled", "cancelled", "completed"])
        } else {
          // the retry that waited for the cancel reads it cancelled: refused, nothing re-queued
          assert.isTrue(Result.isFailure(retryResult))
          if (Result.isFailure(retryResult)) assert.strictEqual(retryResult.failure._tag, "BatchCallCancelled")
          assert.deepStrictEqual(states, ["completed", "completed", "completed"])
        }
        assert.strictEqual((yield* batchOf(batch)).status, "cancelled")
      }))
  }

  it.effect("a completion whose snapshot predates the retry does not complete the re-opened work", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // every task finished, the batch still in_progress: the instant after the last record, before its completion
      const { batch, orgId } = yield* dialled(["no_answer", "answered"])
      const dispatch = yield* DispatchRepo
      const retry = yield* BatchRetry
      // another transaction holds the no_answer task's row, so the retry (holding the batch row) waits on it
      const held = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT 1 FROM batch_call_tasks WHERE batch_call_id = ${batch} AND task_index = 0 FOR UPDATE`
        yield* Deferred.succeed(held, undefined)
        yield* Deferred.await(release)
      })))
      yield* Deferred.await(held)
      const retried = yield* Effect.forkChild(retry.retry(orgId, batch, ALL, T0 + 120_000))
      yield* untilWaitingOnLocks(1)
      // the completing statement starts now: its snapshot sees every task finished; it waits for the batch row
      const completing = yield* Effect.forkChild(dispatch.completeIfDone([batch]))
      yield* untilWaitingOnLocks(2)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      assert.strictEqual((yield* Fiber.join(retried)).requeued, 1)
      assert.deepStrictEqual(yield* Fiber.join(completing), [])
      assert.strictEqual((yield* batchOf(batch)).status, "in_progress")
      assert.deepStrictEqual((yield* tasksOf(batch)).map((t) => t.state), ["pending", "completed"])
      assert.deepStrictEqual((yield* claimAll(orgId, batch, T0 + 120_000)).map((c) => c.taskIndex), [0])
    }))
})
