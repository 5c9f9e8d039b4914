import { assert, describe, it } from "@effect/vitest"
import { attemptKey } from "@svc/domain/models/RetryPolicy.ts"
import { CallsRepo } from "@svc/store/calls/CallsRepo.ts"
import { SchedulerSimulatedCarrier } from "@svc/store/carriers/simulated/SchedulerSimulatedCarrier.ts"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as SimulatedDialer from "../../src/carriers/simulated/SimulatedDialer.ts"
import { Dispatcher } from "../../src/dispatch/Dispatcher.ts"
import * as SchedulerConfig from "../../src/runtime/SchedulerConfig.ts"
import { batchRow, createBatch, dialerSettings, isolated, seedOrg } from "../fixtures/Fixtures.ts"

// Batch retry policies (issue 15 item 4, decision 0625): a call whose outcome the batch retries puts its task back
// to pending, due min_spacing_ms after the call ended, in the statement that records the call; each attempt is a
// new call with its own idempotency key (the task id, then "<task id>:2", ...), and at most 1 + max_retries calls
// are made. London numbers: no legal hours or caps in play.

const T0 = Date.parse("2026-12-01T15:00:00Z")
const LONDON = "+442071838750"
const SPACING = 600_000

const NO_ANSWER = { answered: 0, busy: 0, no_answer: 1, failed: 0 }
const ANSWERED = { answered: 1, busy: 0, no_answer: 0, failed: 0 }

const scenario = <A, E, R>(body: Effect.Effect<A, E, R>, outcomes: SchedulerConfig.OutcomeWeights) =>
  Effect.gen(function*() {
    const dispatcher = yield* Dispatcher.make(SchedulerConfig.defaults())
    return yield* body.pipe(Effect.provideService(Dispatcher, dispatcher))
  }).pipe(Effect.provide(SimulatedDialer.layerMemory(dialerSettings({ outcomes }))), isolated)

const dials = Effect.gen(function*() {
  const carrier = yield* SchedulerSimulatedCarrier
  return (yield* Effect.orDie(carrier.attempts)).map((a) => ({
    key: a.request.idempotency_key,
    callId: a.request.call_id,
    at: a.attemptedAt
  }))
})

const passAt = (at: number) =>
  Effect.gen(function*() {
    const dispatcher = yield* Dispatcher
    yield* TestClock.setTime(at)
    const report = yield* dispatcher.tick
    yield* dispatcher.settle
    return report
  })

const taskRow = (batch: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<
      { task_id: string; state: string; state_reason: string | null; retry_attempt: number; not_before: number | null }
    >`
      SELECT task_id::text AS task_id, state, state_reason, retry_attempt, not_before::float8 AS not_before
      FROM batch_call_tasks WHERE batch_call_id = ${batch}`
    return row!
  })

const callsOf = (batch: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<
      { call_id: string; call_status: string; disconnection_reason: string | null; end_timestamp: number | null }
    >`
      SELECT call_id, call_status, disconnection_reason, end_timestamp::float8 AS end_timestamp
      FROM calls WHERE batch_call_id = ${batch} ORDER BY call_seq`
  })

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/u, "Z")

describe("Dispatcher with a batch retry policy", () => {
  it.live("retries a no_answer call after the spacing with a new key, and stops after max_retries", () =>
    scenario(
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const orgId = yield* seedOrg()
        const batch = yield* createBatch(orgId, {
          tasks: [{ to_number: LONDON }],
          retry_policy: { max_retries: 2, retry_on: ["no_answer", "busy"], min_spacing_ms: SPACING }
        })
        yield* passAt(T0)
        const first = yield* taskRow(batch)
        assert.strictEqual(first.state, "pending")
        assert.strictEqual(first.retry_attempt, 2)
        // due the spacing after the call ended (the simulated carrier rings for a while before giving up)
        const due2 = first.not_before!
        const [call1] = yield* callsOf(batch)
        assert.isAbove(call1!.end_timestamp!, T0)
        assert.strictEqual(due2, call1!.end_timestamp! + SPACING)
        assert.strictEqual(first.state_reason, `retry: no_answer, call 2 of 3 from ${iso(due2)}`)
        // the batch rested for a minute after its claim (its call was in flight); when it looks again it finds only
        // the retry waiting, and sleeps until it is due
        assert.isAtMost((yield* batchRow(batch)).next_dispatch_at, due2)
        yield* passAt((yield* batchRow(batch)).next_dispatch_at)
        assert.strictEqual((yield* batchRow(batch)).next_dispatch_at, due2)
        assert.strictEqual((yield* batchRow(batch)).status, "in_progress")

        // not a millisecond early
        yield* passAt(due2 - 1)
        assert.strictEqual((yield* dials).length, 1)
        yield* passAt(due2)
        const second = yield* taskRow(batch)
        assert.strictEqual(second.retry_attempt, 3)
        const due3 = second.not_before!
        assert.strictEqual(due3, (yield* callsOf(batch))[1]!.end_timestamp! + SPACING)
        yield* passAt(due3)

        // the third call was the last: the task ends with its outcome, the batch completes
        const last = yield* taskRow(batch)
        assert.strictEqual(last.state, "completed")
        assert.strictEqual(last.state_reason, "no_answer")
        assert.strictEqual(last.not_before, null)
        assert.strictEqual((yield* batchRow(batch)).status, "completed")
        yield* passAt(due3 + 10 * SPACING)

        // three calls, each with its own key and call id, one calls row each
        const made = yield* dials
        assert.deepStrictEqual(made.map((d) => d.key), [
          attemptKey(last.task_id, 1),
          `${last.task_id}:2`,
          `${last.task_id}:3`
        ])
        assert.deepStrictEqual(made.map((d) => d.at), [T0, due2, due3])
        assert.strictEqual(new Set(made.map((d) => d.callId)).size, 3)
        const calls = yield* callsOf(batch)
        assert.deepStrictEqual(calls.map((c) => c.call_id), made.map((d) => d.callId))
        assert.isTrue(
          calls.every((c) => c.call_status === "not_connected" && c.disconnection_reason === "dial_no_answer")
        )
      }),
      NO_ANSWER
    ))

  it.live("does not retry an answered call", () =>
    scenario(
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const orgId = yield* seedOrg()
        const withPolicy = yield* createBatch(orgId, {
          tasks: [{ to_number: LONDON }],
          retry_policy: { max_retries: 3, retry_on: ["no_answer", "busy", "voicemail"] }
        })
        yield* passAt(T0)
        assert.strictEqual((yield* taskRow(withPolicy)).state, "completed")
        assert.strictEqual((yield* taskRow(withPolicy)).state_reason, "answered")
        assert.strictEqual((yield* batchRow(withPolicy)).status, "completed")
        assert.strictEqual((yield* dials).length, 1)
      }),
      ANSWERED
    ))

  it.live("a batch without a policy, or whose policy does not list the outcome, is not retried", () =>
    scenario(
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const orgId = yield* seedOrg()
        const none = yield* createBatch(orgId, { tasks: [{ to_number: LONDON }] })
        const busyOnly = yield* createBatch(orgId, {
          tasks: [{ to_number: "+442071838751" }],
          retry_policy: { max_retries: 3, retry_on: ["busy"] }
        })
        const zero = yield* createBatch(orgId, {
          tasks: [{ to_number: "+442071838752" }],
          retry_policy: { max_retries: 0, retry_on: ["no_answer"] }
        })
        yield* passAt(T0)
        for (const batch of [none, busyOnly, zero]) {
          assert.strictEqual((yield* taskRow(batch)).state, "completed")
          assert.strictEqual((yield* batchRow(batch)).status, "completed")
        }
        assert.strictEqual((yield* dials).length, 3)
      }),
      NO_ANSWER
    ))

  it.live("the result recorded twice (the worker's and a reconciler's) schedules one retry and one call row", () =>
    scenario(
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const orgId = yield* seedOrg()
        const batch = yield* createBatch(orgId, {
          tasks: [{ to_number: LONDON }],
          retry_policy: { max_retries: 1, retry_on: ["no_answer"], min_spacing_ms: SPACING }
        })
        const sql = yield* SqlClient.SqlClient
        yield* passAt(T0)
        const task = yield* taskRow(batch)
        assert.strictEqual(task.retry_attempt, 2)
        // the same finished call reported again, as a reconciler would after the worker's record: nothing changes
        const [call] = yield* callsOf(batch)
        const calls = yield* CallsRepo
        const again = yield* calls.recordFinished([{
          taskId: task.task_id,
          orgId,
          batchCallId: batch,
          fromNumber: "+14155550100",
          toNumber: LONDON,
          state: "completed",
          reason: "no_answer",
          call: {
            _tag: "CallEnded",
            idempotency_key: task.task_id,
            call_id: call!.call_id,
            outcome: "no_answer",
            start_timestamp: T0,
            end_timestamp: call!.end_timestamp!,
            duration_ms: call!.end_timestamp! - T0,
            disconnection_reason: "dial_no_answer",
            analysis: {}
          }
        }], T0 + 1)
        assert.strictEqual(again.finished, 0)
        const after = yield* taskRow(batch)
        assert.deepStrictEqual(after, task)
        assert.strictEqual((yield* callsOf(batch)).length, 1)
        // the retry claimed by a worker that died before dialling: in doubt, it is looked up by ITS key (the first
        // call, under the task id, exists and has ended: looked up by that key the retry would be taken for done),
        // found never placed, and dialled once with that key
        const due = task.not_before!
        yield* sql`
          UPDATE batch_call_tasks SET state = 'unknown', attempts = 1, lease_owner = 'gone', lease_expires_at = ${due}
          WHERE batch_call_id = ${batch}`
        yield* passAt(due + 2_000)
        const final = yield* taskRow(batch)
        assert.strictEqual(final.state, "completed")
        assert.strictEqual(final.retry_attempt, 2)
        assert.deepStrictEqual((yield* dials).map((d) => d.key), [task.task_id, `${task.task_id}:2`])
        assert.strictEqual((yield* callsOf(batch)).length, 2)
        assert.strictEqual((yield* batchRow(batch)).status, "completed")
      }),
      NO_ANSWER
    ))
})
