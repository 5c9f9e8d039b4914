import { assert, layer } from "@effect/vitest"
import { progressOf } from "@svc/domain/compliance/BatchProgressLegalHours.ts"
import { defaultPolicy } from "@svc/domain/compliance/CallingPolicy.ts"
import { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { BatchCallsRepo } from "../../src/batches/BatchCallsRepo.ts"
import { ASSUMED_CALL_MS, BatchProgressRepo } from "../../src/batches/BatchProgressRepo.ts"
import { DispatchRepo, ORG_LOCK } from "../../src/dispatch/DispatchRepo.ts"
import * as Fixtures from "../../test-support/BatchFixtures.ts"
import { addOrg } from "../../test-support/BatchFixtures.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const ORG_P = OrgId.make("org_p")
const ORG_A = OrgId.make("org_a")
const ORG_B = OrgId.make("org_b")
const ORG_C = OrgId.make("org_c")
const ORG_D = OrgId.make("org_d")
const ORG_R = OrgId.make("org_r")
const ORG_S = OrgId.make("org_s")

const Layers = Layer.mergeAll(BatchCallsRepo.layer, BatchProgressRepo.layer, DispatchRepo.layer).pipe(
  Layer.provideMerge(TestDatabase.layer)
)

const MINUTE = 60_000

/** The fixtures' batch, named "progress" (the name get-batch-call answers). */
const createBatch = (orgId: OrgId, tasks: number, extra: Record<string, unknown> = {}) =>
  Fixtures.createBatch(orgId, tasks, { name: "progress", ...extra })

const states = (batchCallId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ task_index: number; state: string }>`
      SELECT task_index, state FROM batch_call_tasks WHERE batch_call_id = ${batchCallId} ORDER BY task_index`.pipe(
      Effect.map((rows) => rows.map((r) => r.state))
    ))

const setState = (batchCallId: string, index: number, state: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      UPDATE batch_call_tasks SET state = ${state},
        lease_owner = CASE WHEN ${state} IN ('dialling', 'unknown') THEN 'w' END,
        lease_expires_at = CASE WHEN ${state} IN ('dialling', 'unknown') THEN 1 END
      WHERE batch_call_id = ${batchCallId} AND task_index = ${index}`)

/** Waits until some backend waits on a lock (the other connection's statement is blocked), without sleeping. */
const untilSomeoneWaitsOnALock = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (let i = 0; i < 10_000; i++) {
    const rows = yield* sql<{ n: number }>`
      SELECT count(*)::int4 AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`
    if ((rows[0]?.n ?? 0) > 0) return
    yield* Effect.yieldNow
  }
  assert.fail("no statement ever waited on a lock")
})

layer(Layers, { timeout: 60_000 })("BatchProgressRepo", (it) => {
  it.effect("reports tasks per state, calls placed and in flight, the window's next opening and an estimate", () =>
    Effect.gen(function*() {
      yield* addOrg(ORG_P, 3)
      const id = yield* createBatch(ORG_P, 8, {
        reserved_concurrency: 1,
        call_time_window: { windows: [{ start: 540, end: 1020 }], timezone: "UTC", day: ["Monday"] }
      })
      yield* setState(id, 0, "dialling")
      yield* setState(id, 1, "completed")
      yield* setState(id, 2, "failed")
      yield* setState(id, 3, "skipped")
      const repo = yield* BatchProgressRepo
      // Sunday 2026-05-03 12:00Z: closed; opens Monday 09:00Z
      const now = Date.UTC(2026, 4, 3, 12, 0)
      const monday9 = Date.UTC(2026, 4, 4, 9, 0)
      const progress = yield* repo.get(ORG_P, id, now)
      assert.deepStrictEqual(progress.tasks, {
        pending: 4,
        dialling: 1,
        unknown: 0,
        completed: 1,
        failed: 1,
        skipped: 1,
        cancelled: 0
      })
      assert.strictEqual(progress.calls_placed, 2)
      assert.strictEqual(progress.calls_in_flight, 1)
      assert.strictEqual(progress.status, "scheduled")
      assert.strictEqual(progress.name, "progress")
      assert.strictEqual(progress.total_task_count, 8)
      assert.isFalse(progress.window_open_now)
      assert.strictEqual(progress.next_window_opening_timestamp, monday9)
      // 2 lines (limit 3 - reserve 1), one held by the call in flight: 4 pending calls of 2 min dial at
      // 9:00, 9:02, 9:02, 9:04 and the last ends at 9:06
      assert.strictEqual(progress.estimated_completion_timestamp, monday9 + 4 * MINUTE + ASSUMED_CALL_MS)
      assert.isNull(progress.completed_timestamp)
      assert.isNull(progress.cancelled_timestamp)
      // inside the window the next opening is now
      const open = yield* repo.get(ORG_P, id, monday9 + MINUTE)
      assert.isTrue(open.window_open_now)
      assert.strictEqual(open.next_window_opening_timestamp, monday9 + MINUTE)
    }))

  it.effect("is org-scoped: another org's batch and an unknown id are not found", () =>
    Effect.gen(function*() {
      yield* addOrg(ORG_A, 2)
      yield* addOrg(ORG_B, 2)
      const id = yield* createBatch(ORG_A, 2)
      const repo = yield* BatchProgressRepo
      const get = yield* Effect.flip(repo.get(ORG_B, id, 0))
      assert.strictEqual(get._tag, "BatchCallNotFound")
      const cancel = yield* Effect.flip(repo.cancel(ORG_B, id, 0))
      assert.strictEqual(cancel.message, `batch call ${id} not found`)
      assert.deepStrictEqual(yield* states(id), ["pending", "pending"])
      assert.strictEqual(
        (yield* Effect.flip(repo.get(ORG_A, BatchCallId.make("batch_call_nope"), 0)))._tag,
        "BatchCallNotFound"
      )
    }))

  it.effect("cancels pending tasks only, leaves calls in flight to finish, and is idempotent", () =>
    Effect.gen(function*() {
      yield* addOrg(ORG_C, 5)
      const id = yield* createBatch(ORG_C, 5)
      yield* setState(id, 0, "completed")
      yield* setState(id, 1, "dialling")
      yield* setState(id, 2, "unknown")
      // the call the claim registered for task 2 (migration 0012)
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE batch_call_tasks SET call_id = 'call_t2' WHERE batch_call_id = ${id} AND task_index = 2`
      yield* sql`
        INSERT INTO calls (org_id, call_id, batch_call_id, from_number, to_number, call_status, recorded_timestamp)
        VALUES ('org_c', 'call_t2', ${id}, '+14155550100', '+12125551002', 'registered', 0)`
      const repo = yield* BatchProgressRepo
      // as cancel-batch-call answers it (the stored rows carry the instant they were read for)
      const cancelled = progressOf(yield* repo.cancel(ORG_C, id, 1_000))
      assert.strictEqual(cancelled.status, "cancelled")
      assert.strictEqual(cancelled.cancelled_timestamp, 1_000)
      assert.isNull(cancelled.completed_timestamp)
      assert.isNull(cancelled.next_window_opening_timestamp)
      assert.isNull(cancelled.estimated_completion_timestamp)
      assert.deepStrictEqual(yield* states(id), ["completed", "dialling", "unknown", "cancelled", "cancelled"])
      assert.strictEqual(cancelled.calls_in_flight, 2)
      // again, later: nothing changes, not even the time
      const again = progressOf(yield* repo.cancel(ORG_C, id, 5_000))
      assert.deepStrictEqual(again, cancelled)
      // the call in flight is recorded as usual; the unknown task whose call was never placed goes to cancelled,
      // not back to pending
      yield* setState(id, 1, "completed")
      const dispatch = yield* DispatchRepo
      assert.strictEqual(yield* dispatch.returnToPending("w", yield* taskIdsOf(id, [2]), 6_000), 1)
      assert.deepStrictEqual(yield* states(id), ["completed", "completed", "cancelled", "cancelled", "cancelled"])
      const [call] = yield* sql<{ call_status: string; disconnection_reason: string }>`
        SELECT call_status, disconnection_reason FROM calls WHERE org_id = 'org_c' AND call_id = 'call_t2'`
      assert.deepStrictEqual({ ...call }, { call_status: "not_connected", disconnection_reason: "manual_stopped" })
      // the scheduler never looks at it again
      const view = yield* dispatch.findDue(10_000_000_000_000, 100)
      assert.isFalse(view.due.some((b) => b.batchCallId === id))
    }))

  it.effect("a completed batch is answered as it is, with the time it completed", () =>
    Effect.gen(function*() {
      yield* addOrg(ORG_D, 5)
      const id = yield* createBatch(ORG_D, 2)
      yield* setState(id, 0, "completed")
      yield* setState(id, 1, "failed")
      const dispatch = yield* DispatchRepo
      const before = Date.now()
      assert.deepStrictEqual(yield* dispatch.completeIfDone([id]), [id])
      const after = Date.now()
      const repo = yield* BatchProgressRepo
      const cancelled = yield* repo.cancel(ORG_D, id, 1)
      assert.strictEqual(cancelled.status, "completed")
      assert.isNull(cancelled.cancelled_timestamp)
      // the scheduler's completion statement sets no time: the database's clock at that statement
      assert.isAtLeast(cancelled.completed_timestamp!, before - 1_000)
      assert.isAtMost(cancelled.completed_timestamp!, after + 1_000)
      assert.strictEqual(cancelled.calls_placed, 2)
    }))

  it.effect("a cancel racing a claim (two connections): the claim's tasks are dialled, no other task ever is", () =>
    Effect.gen(function*() {
      yield* addOrg(ORG_R, 3)
      const id = yield* createBatch(ORG_R, 10)
      const sql = yield* SqlClient.SqlClient
      const dispatch = yield* DispatchRepo
      const repo = yield* BatchProgressRepo
      const [due] = (yield* dispatch.findDue(10_000_000_000_000, 100)).due.filter((b) => b.batchCallId === id)
      assert.isDefined(due)

      // 1. the claim holds the org's lock (its transaction still open on connection A) when the cancel arrives on
      //    connection B: the cancel waits, then cancels only what the claim left pending
      const claimed = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const claim = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql`
          SELECT * FROM scheduler_claim(${ORG_LOCK}::int4, 'org_r', '5s', ${id}, 0, 2, 'worker-a', 99999999999::int8, '+14155550100', 0::int8, NULL::int4[])`
        yield* Deferred.succeed(claimed, undefined)
        yield* Deferred.await(release)
        return rows.length - 1
      })))
      yield* Deferred.await(claimed)
      const cancel = yield* Effect.forkChild(repo.cancel(ORG_R, id, 2_000))
      yield* untilSomeoneWaitsOnALock
      yield* Deferred.succeed(release, undefined)
      assert.strictEqual(yield* Fiber.join(claim), 2)
      const progress = yield* Fiber.join(cancel)
      assert.deepStrictEqual(yield* states(id), ["dialling", "dialling", ...Array(8).fill("cancelled")])
      assert.strictEqual(progress.tasks.cancelled, 8)
      assert.strictEqual(progress.calls_in_flight, 2)

      // 2. a dispatcher that saw the batch due before the cancel claims after it: nothing
      const late = yield* dispatch.claim(ORG_R, [due!], {
        owner: "worker-b",
        now: 3_000,
        leaseMs: 30_000,
        maxPerBatch: 10
      })
      assert.strictEqual(late.claimed.length, 0)
      assert.deepStrictEqual(yield* states(id), ["dialling", "dialling", ...Array(8).fill("cancelled")])
    }))

  it.effect("a cancel that holds the org's lock first leaves a waiting claim nothing to take", () =>
    Effect.gen(function*() {
      yield* addOrg(ORG_S, 3)
      const id = yield* createBatch(ORG_S, 4)
      const sql = yield* SqlClient.SqlClient
      const repo = yield* BatchProgressRepo
      // the cancel's transaction, paused after its updates with the org's lock held (connection A)
      const updated = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const cancel = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(${ORG_LOCK}, hashtext('org_s'))`
        yield* sql`UPDATE batch_call_tasks SET state = 'cancelled' WHERE batch_call_id = ${id} AND state = 'pending'`
        yield* sql`UPDATE batch_calls SET status = 'cancelled', finished_timestamp = 1 WHERE batch_call_id = ${id}`
        yield* Deferred.succeed(updated, undefined)
        yield* Deferred.await(release)
      })))
      yield* Deferred.await(updated)
      // the claim (connection B) waits for the lock, then reads the committed cancel
      const claim = yield* Effect.forkChild(sql`
        SELECT * FROM scheduler_claim(${ORG_LOCK}::int4, 'org_s', '5s', ${id}, 0, 3, 'worker-a', 99999999999::int8, '+14155550100', 0::int8, NULL::int4[])`)
      yield* untilSomeoneWaitsOnALock
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(cancel)
      const rows = yield* Fiber.join(claim)
      assert.strictEqual(rows.length, 1) // the summary row only
      assert.deepStrictEqual(yield* states(id), ["cancelled", "cancelled", "cancelled", "cancelled"])
      assert.strictEqual((yield* repo.get(ORG_S, id, 0)).status, "cancelled")
    }))
})

const taskIdsOf = (batchCallId: string, indexes: ReadonlyArray<number>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ task_id: string }>`
      SELECT task_id::text AS task_id FROM batch_call_tasks
      WHERE batch_call_id = ${batchCallId} AND task_index = ANY(${indexes}::int4[]) ORDER BY task_index`.pipe(
      Effect.map((rows) => rows.map((r) => r.task_id))
    ))

layer(Layers, { timeout: 60_000 })("BatchProgressRepo legal hours", (it) => {
  it.effect("reports legal hours of the pending tasks: what each rule holds back and each zone set's next opening", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const progress = yield* BatchProgressRepo
      const orgId = OrgId.make(`org_prog_legal_${process.pid}`)
      yield* addOrg(orgId, 5)
      const batch = yield* createBatch(orgId, 0, {
        tasks: ["+13055550100", "+13055550101", "+12125550100", "+18085550100", "+442071838750"].map((n) => ({
          to_number: n
        }))
      })
      // 20:30 EST (01:30Z, Wed 2 Dec): FL closed since 20:00 (opens 13:00Z), federal New York open until 21:00,
      // Honolulu at 15:30 open; London unconstrained
      const at = Date.parse("2026-12-02T01:30:00Z")
      const legal = progressOf(yield* progress.get(orgId, batch, at)).legal_hours
      assert.strictEqual(legal.policy_version, 0)
      assert.strictEqual(legal.unconstrained_tasks, 1)
      assert.strictEqual(legal.dialable_now_tasks, 2)
      assert.deepStrictEqual(legal.held_back, [{ rule: "FL 08:00-20:00", tasks: 2 }])
      assert.strictEqual(legal.never_within_horizon_tasks, 0)
      const miami = legal.zone_sets.find((z) => z.rules.includes("FL"))!
      assert.deepStrictEqual(miami, {
        zones: ["America/New_York"],
        rules: ["US", "FL"],
        pending_tasks: 2,
        blocked_by: "FL 08:00-20:00",
        state_reason: "legal_hours: FL 08:00-20:00 America/New_York until 2026-12-02T13:00:00Z",
        next_opening_timestamp: Date.parse("2026-12-02T13:00:00Z")
      })
      assert.strictEqual(legal.zone_sets.find((z) => z.zones[0] === "Pacific/Honolulu")!.next_opening_timestamp, at)
      // a task no longer pending leaves the counts
      yield* sql`UPDATE batch_call_tasks SET state = 'completed' WHERE batch_call_id = ${batch} AND task_index = 0`
      const after = progressOf(yield* progress.get(orgId, batch, at)).legal_hours
      assert.deepStrictEqual(after.held_back, [{ rule: "FL 08:00-20:00", tasks: 1 }])
      // the org's policy applies: a NY row 08:00-20:00 holds the New York task back too, under version 1
      const ny = {
        ...defaultPolicy.federal,
        jurisdiction: "NY",
        hours: [{ ...defaultPolicy.federal.hours[0]!, end: 1200 }]
      }
      yield* sql`INSERT INTO org_calling_policies (org_id, override, version, updated_timestamp)
                 VALUES (${orgId}, ${JSON.stringify({ rules: [ny] })}::jsonb, 1, 0)`
      const strict = progressOf(yield* progress.get(orgId, batch, at)).legal_hours
      assert.strictEqual(strict.policy_version, 1)
      assert.deepStrictEqual(strict.held_back, [
        { rule: "FL 08:00-20:00", tasks: 1 },
        { rule: "NY 08:00-20:00", tasks: 1 }
      ])
      assert.strictEqual(strict.dialable_now_tasks, 1)
    }))

  it.effect("reports tasks waiting on an attempt cap or a retry's spacing as held back by it, until their instant", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const progress = yield* BatchProgressRepo
      const orgId = OrgId.make(`org_prog_waiting_${process.pid}`)
      yield* addOrg(orgId, 5)
      const batch = yield* createBatch(orgId, 0, {
        tasks: ["+442071838750", "+13055550100", "+12125550100"].map((n) => ({ to_number: n }))
      })
      // 10:00 EST: every legal group open
      const at = Date.parse("2026-12-02T15:00:00Z")
      // London's retry is due in 10 minutes; the Miami number is at its cap for an hour (as the recorder and the
      // claim leave them)
      yield* sql`UPDATE batch_call_tasks SET not_before = ${at + 600_000},
                   state_reason = 'retry: no_answer, call 2 of 3 from 2026-12-02T15:10:00Z'
                 WHERE batch_call_id = ${batch} AND task_index = 0`
      yield* sql`UPDATE batch_call_tasks SET not_before = ${at + 3_600_000},
                   state_reason = 'attempt_cap: FL 3 per 24h until 2026-12-02T16:00:00Z'
                 WHERE batch_call_id = ${batch} AND task_index = 1`
      const now = progressOf(yield* progress.get(orgId, batch, at)).legal_hours
      assert.strictEqual(now.unconstrained_tasks, 1)
      assert.strictEqual(now.dialable_now_tasks, 1)
      assert.deepStrictEqual(now.held_back, [{ rule: "attempt_cap", tasks: 1 }, { rule: "retry_spacing", tasks: 1 }])
      // the zone sets still count every pending task of their group
      assert.strictEqual(now.zone_sets.reduce((n, z) => n + z.pending_tasks, 0), 2)
      // the retry is due: only the cap holds a task back
      const later = progressOf(yield* progress.get(orgId, batch, at + 600_000)).legal_hours
      assert.deepStrictEqual(later.held_back, [{ rule: "attempt_cap", tasks: 1 }])
      assert.strictEqual(later.dialable_now_tasks, 1)
      // at the cap's end, the Miami task is dialable again
      const free = progressOf(yield* progress.get(orgId, batch, at + 3_600_000)).legal_hours
      assert.deepStrictEqual(free.held_back, [])
      assert.strictEqual(free.dialable_now_tasks, 2)
      // at night in Florida, the legal rule holds the capped task back, not the cap
      const night = progressOf(yield* progress.get(orgId, batch, Date.parse("2026-12-03T01:30:00Z"))).legal_hours
      assert.deepStrictEqual(night.held_back, [{ rule: "FL 08:00-20:00", tasks: 1 }])
    }))
})
