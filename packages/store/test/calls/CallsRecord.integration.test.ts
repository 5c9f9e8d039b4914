// CallsRepo.recordFinished: one call row per task, however often and by however many recorders its result arrives
// (the rule migration 0009 leaves to the recording statement alone, without a unique constraint on calls.task_id).
import { assert, layer } from "@effect/vitest"
import { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import type { CallEnded } from "@svc/domain/ports/Dialer.ts"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { CallsRepo } from "../../src/calls/CallsRepo.ts"
import { finishedFromCall } from "../../test-support/FinishedTasks.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const Layers = CallsRepo.layer.pipe(Layer.provideMerge(TestDatabase.layer))

const ORG = OrgId.make("org_record")
const NOW = 1_800_000_000_000
let serial = 0

/** A new task of a new batch, `dialling` under a lease, to its own number; returns its id. */
const dialling = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const n = ++serial
  const [row] = yield* sql<{ task_id: string }>`
    INSERT INTO batch_call_tasks (org_id, batch_call_id, task_index, to_number, state, lease_owner, lease_expires_at)
    VALUES (${ORG}, ${`batch_record_${n}`}, 0, ${`+1415${String(n).padStart(7, "0")}`}, 'dialling', 'w1', ${NOW})
    RETURNING task_id::text AS task_id`
  return {
    taskId: row!.task_id,
    toNumber: `+1415${String(n).padStart(7, "0")}`,
    batchCallId: BatchCallId.make(`batch_record_${n}`)
  }
})

const ended = (taskId: string, outcome: CallEnded["outcome"]): CallEnded => ({
  _tag: "CallEnded",
  idempotency_key: taskId,
  call_id: `call_${taskId}_${outcome}`,
  outcome,
  start_timestamp: NOW - 60_000,
  end_timestamp: NOW,
  duration_ms: 60_000,
  disconnection_reason: outcome === "answered" ? "user_hangup" : "dial_busy",
  analysis: outcome === "answered" ? { call_successful: true } : {}
})

const result = (task: { taskId: string; toNumber: string; batchCallId: BatchCallId }, outcome: CallEnded["outcome"]) =>
  finishedFromCall({
    taskId: task.taskId,
    orgId: ORG,
    batchCallId: task.batchCallId,
    fromNumber: "+14155550100",
    toNumber: task.toNumber
  }, ended(task.taskId, outcome))

/** The calls and feed entries of a task, and its state. */
const recordedOf = (taskId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const calls = yield* sql<{ call_id: string; call_seq: string }>`
      SELECT call_id, call_seq::text AS call_seq FROM calls WHERE task_id = ${taskId}`
    const feed = yield* sql<{ n: number }>`
      SELECT count(*)::int4 AS n FROM contact_feed WHERE call_seq = ANY(${
      calls.map((c) => c.call_seq)
    }::text[]::int8[])`
    const [task] = yield* sql<{ state: string; state_reason: string }>`
      SELECT state, state_reason FROM batch_call_tasks WHERE task_id = ${taskId}`
    return { calls: calls.map((c) => c.call_id), feed: feed[0]!.n, state: task!.state, reason: task!.state_reason }
  })

layer(Layers, { timeout: 60_000 })("CallsRepo.recordFinished", (it) => {
  it.effect("a task listed twice in one statement gets one call, its first result", () =>
    Effect.gen(function*() {
      const calls = yield* CallsRepo
      const task = yield* dialling
      const other = yield* dialling
      const recorded = yield* calls.recordFinished(
        [result(task, "answered"), result(other, "busy"), result(task, "busy")],
        NOW
      )
      assert.strictEqual(recorded.finished, 2)
      assert.deepStrictEqual(yield* recordedOf(task.taskId), {
        calls: [`call_${task.taskId}_answered`],
        feed: 1,
        state: "completed",
        reason: "answered"
      })
      assert.deepStrictEqual((yield* recordedOf(other.taskId)).calls, [`call_${other.taskId}_busy`])
    }))

  it.effect("each call keeps its own analysis data and outcome, beside results without a call", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const calls = yield* CallsRepo
      const [talked, refused, silent] = [yield* dialling, yield* dialling, yield* dialling]
      const analysis = {
        summary: `said "call me" at 5\\6, then {left}`,
        interest: 4,
        booked: false
      }
      const recorded = yield* calls.recordFinished([
        finishedFromCall({ ...talked, orgId: ORG, fromNumber: "+14155550100" }, {
          ...ended(talked.taskId, "answered"),
          analysis
        }),
        {
          ...refused,
          orgId: ORG,
          fromNumber: "+14155550100",
          state: "failed",
          reason: "rejected: number blocked",
          call: undefined
        },
        finishedFromCall({ ...silent, orgId: ORG, fromNumber: "+14155550100" }, ended(silent.taskId, "no_answer"))
      ], NOW)
      assert.strictEqual(recorded.finished, 3)
      const rows = yield* sql<{ task_id: string; outcome: string; analysis: unknown }>`
        SELECT task_id::text AS task_id, outcome, analysis FROM calls
        WHERE task_id = ANY(${[talked.taskId, refused.taskId, silent.taskId]}::text[]::int8[]) ORDER BY task_id`
      assert.deepStrictEqual(rows, [
        { task_id: talked.taskId, outcome: "answered", analysis },
        { task_id: silent.taskId, outcome: "no_answer", analysis: {} }
      ])
      assert.deepStrictEqual(yield* recordedOf(refused.taskId), {
        calls: [],
        feed: 0,
        state: "failed",
        reason: "rejected: number blocked"
      })
    }))

  it.effect("a task already finished is not recorded again", () =>
    Effect.gen(function*() {
      const calls = yield* CallsRepo
      const task = yield* dialling
      assert.strictEqual((yield* calls.recordFinished([result(task, "answered")], NOW)).finished, 1)
      const again = yield* calls.recordFinished([result(task, "answered")], NOW + 1)
      assert.deepStrictEqual(again, { finished: 0, batchCallIds: [] })
      // a different outcome reported later (a reconciler's stale lookup) does not replace the first either
      assert.strictEqual((yield* calls.recordFinished([result(task, "failed")], NOW + 2)).finished, 0)
      assert.deepStrictEqual(yield* recordedOf(task.taskId), {
        calls: [`call_${task.taskId}_answered`],
        feed: 1,
        state: "completed",
        reason: "answered"
      })
    }))

  it.effect("two recorders racing on one task: the second waits for the first and records nothing", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const calls = yield* CallsRepo
      const task = yield* dialling
      const recordedFirst = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      // the first recorder (the worker that dialled) has written the result and not committed yet
      const first = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
        const recorded = yield* calls.recordFinished([result(task, "answered")], NOW)
        yield* Deferred.succeed(recordedFirst, undefined)
        yield* Deferred.await(release)
        return recorded.finished
      })))
      yield* Deferred.await(recordedFirst)
      // the second (a reconciler that looked the call up) starts on another connection and blocks on the task's row
      const second = yield* Effect.forkChild(calls.recordFinished([result(task, "answered")], NOW + 1))
      for (;;) {
        const [row] = yield* sql<{ n: number }>`
          SELECT count(*)::int4 AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')`
        if (row!.n >= 1) break
      }
      yield* Deferred.succeed(release, undefined)
      assert.strictEqual(yield* Fiber.join(first), 1)
      assert.strictEqual((yield* Fiber.join(second)).finished, 0)
      assert.deepStrictEqual(yield* recordedOf(task.taskId), {
        calls: [`call_${task.taskId}_answered`],
        feed: 1,
        state: "completed",
        reason: "answered"
      })
    }))
})
