// The scheduler's other hot statements under a generic plan (docs/patterns/sql-plans-under-changing-statistics.md):
// @effect/sql-pg prepares every statement and PostgreSQL may switch a prepared statement to a plan that ignores its
// parameters after five runs. A plan that scans a whole table then costs time linear in everything ever stored (every
// task of every batch, every contact, every batch), which no short test notices by time. These tests force the
// generic plan and count the scans each statement made (the connection's not yet reported counters,
// pg_stat_xact_user_tables), with big tables around the rows the statement touches and fresh statistics.
// The claim and the completion check have theirs in DispatchClaims.integration.test.ts.
import { assert, layer } from "@effect/vitest"
import { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import type { CallEnded } from "@svc/domain/ports/Dialer.ts"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { CallsRepo } from "../../src/calls/CallsRepo.ts"
import { DispatchRepo } from "../../src/dispatch/DispatchRepo.ts"
import { finishedFromCall } from "../../test-support/FinishedTasks.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const Layers = Layer.mergeAll(CallsRepo.layer, DispatchRepo.layer).pipe(Layer.provideMerge(TestDatabase.layer))

const NOW = 1_800_000_000_000
const TABLES = ["batch_call_tasks", "batch_calls", "contact_feed", "contacts", "calls"] as const
type Scans = Record<(typeof TABLES)[number], number>
let orgs = 0

/**
 * A new org with `batches` batches of `tasks` tasks each (tasks `pending`, numbers distinct within the org), stored
 * directly: this is about the statements' plans, not about creating batches. Returns the org and its batch ids.
 */
const seed = (batches: number, tasks: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const orgId = OrgId.make(`org_plans_${++orgs}`)
    yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
               VALUES (${orgId}, 'plans', 1000, 0)`
    const ids = Array.from({ length: batches }, (_, i) => BatchCallId.make(`${orgId}_batch_${i}`))
    yield* sql`
      INSERT INTO batch_calls (batch_call_id, org_id, api_key_id, from_number, scheduled_timestamp, status,
        total_task_count, next_dispatch_at, created_timestamp)
      SELECT id, ${orgId}, 'key', '+14155550100', 0, 'in_progress', ${tasks}, ${NOW}, 0 FROM unnest(${ids}::text[]) id`
    yield* sql`
      INSERT INTO batch_call_tasks (org_id, batch_call_id, task_index, to_number, state)
      SELECT ${orgId}, b.id, s, '+1212' || lpad((b.n * ${tasks} + s)::text, 7, '0'), 'pending'
      FROM unnest(${ids}::text[]) WITH ORDINALITY b(id, n), generate_series(0, ${tasks - 1}) s`
    return { orgId, ids }
  })

/** Runs `effect` under a forced generic plan; returns its result and the scans it made of each table. */
const generic = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SET LOCAL plan_cache_mode = force_generic_plan`
      const counters = sql<{ relname: string; seq_scan: number; idx_scan: number }>`
        SELECT relname, seq_scan::int4 AS seq_scan, coalesce(idx_scan, 0)::int4 AS idx_scan
        FROM pg_stat_xact_user_tables WHERE relname = ANY(${TABLES as unknown as Array<string>})`
      const before = yield* counters
      const result = yield* effect
      const after = yield* counters
      const counted = (rows: typeof before, table: string, key: "seq_scan" | "idx_scan") =>
        rows.find((r) => r.relname === table)?.[key] ?? 0
      const made = (key: "seq_scan" | "idx_scan") =>
        Object.fromEntries(TABLES.map((t) => [t, counted(after, t, key) - counted(before, t, key)])) as Scans
      return { result, seq: made("seq_scan"), index: made("idx_scan") }
    }))
  })

const analyze = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ANALYZE batch_call_tasks, batch_calls, contact_feed, contacts, calls`
})

const ended = (taskId: string): CallEnded => ({
  _tag: "CallEnded",
  idempotency_key: taskId,
  call_id: `call_${taskId}`,
  outcome: "answered",
  start_timestamp: NOW - 60_000,
  end_timestamp: NOW,
  duration_ms: 60_000,
  disconnection_reason: "user_hangup",
  analysis: { call_successful: true }
})

layer(Layers, { timeout: 120_000 })("scheduler statements under a generic plan", (it) => {
  it.effect("records finished calls by task id, never by scanning every task", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const calls = yield* CallsRepo
      // 24,000 tasks; 500 of one batch are in flight and finish
      const { ids, orgId } = yield* seed(3, 8_000)
      const inFlight = yield* sql<{ task_id: string; to_number: string }>`
        UPDATE batch_call_tasks SET state = 'dialling', lease_owner = 'w', lease_expires_at = ${NOW + 30_000}
        WHERE batch_call_id = ${ids[1]!} AND task_index < 500
        RETURNING task_id::text AS task_id, to_number`
      // a calls table of some size, so that scanning it would cost more than probing it: 30,000 finished calls
      yield* sql`
        INSERT INTO calls (org_id, call_id, from_number, to_number, call_status, outcome, disconnection_reason,
          start_timestamp, end_timestamp, duration_ms, recorded_timestamp)
        SELECT ${orgId}, 'call_old_' || s, '+14155550100', '+1313' || lpad(s::text, 7, '0'), 'ended', 'answered',
          'user_hangup', ${NOW} - s, ${NOW} - s + 1000, 1000, ${NOW}
        FROM generate_series(1, 30000) s`
      yield* analyze
      const finished = inFlight.map((t) =>
        finishedFromCall({
          taskId: t.task_id,
          orgId,
          batchCallId: ids[1]!,
          fromNumber: "+14155550100",
          toNumber: t.to_number
        }, ended(t.task_id))
      )
      const { index, result, seq } = yield* generic(calls.recordFinished(finished, NOW))
      assert.deepStrictEqual(result, { finished: 500, batchCallIds: [ids[1]!] })
      assert.strictEqual(seq.batch_call_tasks, 0)
      assert.isAbove(index.batch_call_tasks, 0)
      // the registered rows (none here: every call takes the fallback insert) are probed by call id
      assert.strictEqual(seq.calls, 0)
      const [recorded] = yield* sql<{ calls: number; completed: number }>`
        SELECT (SELECT count(*)::int4 FROM calls WHERE batch_call_id = ${ids[1]!}) AS calls,
          (SELECT count(*)::int4 FROM batch_call_tasks WHERE batch_call_id = ${ids[1]!} AND state = 'completed')
            AS completed`
      assert.deepStrictEqual(recorded, { calls: 500, completed: 500 })
    }))

  it.effect("feeds contacts from the queue's head and the contacts' phone index, not by scanning either table", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const calls = yield* CallsRepo
      const { orgId } = yield* seed(1, 1)
      // the queue is global (oldest first): only this test's calls in it
      yield* sql`DELETE FROM contact_feed`
      // 20,000 contacts and 20,000 queued calls: the first 500 calls go to known contacts, the rest to new numbers
      yield* sql`
        INSERT INTO contacts (org_id, contact_id, phone_number, created_timestamp, user_modified_timestamp,
          search_text)
        SELECT ${orgId}, 'c' || s, '+1415' || lpad(s::text, 7, '0'), 0, 0, '+1415' || lpad(s::text, 7, '0')
        FROM generate_series(1, 20000) s`
      yield* sql`
        INSERT INTO contact_feed (call_seq, org_id, to_number, start_timestamp)
        SELECT 1000000 + s, ${orgId}, '+1415' || lpad((s + 19500)::text, 7, '0'), ${NOW} + s
        FROM generate_series(1, 20000) s`
      yield* analyze
      const { index, result, seq } = yield* generic(calls.feedContacts(1_000, NOW))
      assert.strictEqual(result, 1_000)
      assert.strictEqual(seq.contact_feed, 0)
      assert.strictEqual(seq.contacts, 0)
      assert.isAbove(index.contact_feed, 0)
      assert.isAbove(index.contacts, 0)
      // the oldest 1,000 calls went: 500 to existing contacts, 500 created
      const [after] = yield* sql<{ queued: number; oldest: string; called: number; contacts: number }>`
        SELECT (SELECT count(*)::int4 FROM contact_feed WHERE org_id = ${orgId}) AS queued,
          (SELECT min(call_seq)::text FROM contact_feed WHERE org_id = ${orgId}) AS oldest,
          (SELECT count(*)::int4 FROM contacts WHERE org_id = ${orgId} AND conversation_count = 1) AS called,
          (SELECT count(*)::int4 FROM contacts WHERE org_id = ${orgId}) AS contacts`
      assert.deepStrictEqual(after, { queued: 19_000, oldest: "1001001", called: 1_000, contacts: 20_500 })
    }))

  it.effect("looks for due batches through the index of batches in progress, never scanning every batch", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* DispatchRepo
      // 2,000 batches, all but four of them finished long ago (the table keeps them); two due, two waiting
      const { ids, orgId } = yield* seed(2_000, 1)
      yield* sql`UPDATE batch_calls SET status = 'completed' WHERE batch_call_id = ANY(${ids.slice(4)}::text[])`
      yield* sql`UPDATE batch_calls SET next_dispatch_at = ${NOW + 60_000} WHERE batch_call_id = ${ids[2]!}`
      yield* sql`UPDATE batch_calls SET next_dispatch_at = ${NOW + 5_000} WHERE batch_call_id = ${ids[3]!}`
      yield* analyze
      const { result, seq } = yield* generic(repo.findDue(NOW, 100))
      const due = result.due.filter((b) => b.orgId === orgId).map((b) => b.batchCallId)
      assert.deepStrictEqual(due.sort(), [ids[0]!, ids[1]!].sort())
      assert.strictEqual(result.next, NOW + 5_000)
      assert.strictEqual(seq.batch_calls, 0)
    }))

  it.effect("expires leases through the index of calls in flight, not by scanning every task", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* DispatchRepo
      const { ids } = yield* seed(3, 8_000)
      // 1,000 in flight, 300 of them past their lease
      yield* sql`
        UPDATE batch_call_tasks SET state = 'dialling', lease_owner = 'w',
          lease_expires_at = CASE WHEN task_index < 300 THEN ${NOW - 1} ELSE ${NOW + 30_000} END
        WHERE batch_call_id = ${ids[0]!} AND task_index < 1000`
      yield* analyze
      const { result, seq } = yield* generic(repo.expireLeases(NOW))
      assert.strictEqual(result, 300)
      assert.strictEqual(seq.batch_call_tasks, 0)
    }))

  it.effect("lists lease owners and releases a dead one's tasks through the index of calls in flight", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* DispatchRepo
      const { ids } = yield* seed(3, 8_000)
      // 1,000 in flight under two owners; the expired leases of the expiry test above are `unknown` by now
      yield* sql`
        UPDATE batch_call_tasks SET state = 'dialling', lease_expires_at = ${NOW + 30_000},
          lease_owner = CASE WHEN task_index < 400 THEN 'gone' ELSE 'alive' END
        WHERE batch_call_id = ${ids[1]!} AND task_index < 1000`
      yield* analyze
      const owners = yield* generic(repo.leaseOwners)
      assert.includeMembers([...owners.result], ["gone", "alive"])
      assert.strictEqual(owners.seq.batch_call_tasks, 0)
      const released = yield* generic(repo.releaseOwners(["gone"], NOW))
      assert.strictEqual(released.result, 400)
      assert.strictEqual(released.seq.batch_call_tasks, 0)
      const [left] = yield* sql<{ alive: number; unknown: number }>`
        SELECT count(*) FILTER (WHERE state = 'dialling' AND lease_owner = 'alive')::int4 AS alive,
          count(*) FILTER (WHERE state = 'unknown' AND lease_owner = 'gone' AND lease_expires_at = ${NOW})::int4 AS unknown
        FROM batch_call_tasks WHERE batch_call_id = ${ids[1]!}`
      assert.deepStrictEqual(left, { alive: 600, unknown: 400 })
    }))

  it.effect("finds unknown tasks in their own index in its order, whatever the planner's costs say", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* DispatchRepo
      // Seen in the bench at 1.8 million tasks, none unknown but the statistics putting 3,600 among them: ordered by
      // task id, the planner walked the primary key expecting an unknown task every few hundred rows and read every
      // task (2-3 s a call, every pass of every worker). Ordered by the partial index's own column, no plan but a
      // scan of that index gives the order. The test makes sorting prohibitive (enable_sort = off) so that any plan
      // with another index for the order is the one taken, and counts the primary key entries read
      yield* sql`UPDATE batch_call_tasks SET state = 'completed' WHERE state = 'unknown'`
      yield* seed(6, 10_000)
      yield* sql`UPDATE batch_call_tasks SET state = 'completed'`
      yield* analyze
      for (const settings of ["plan_cache_mode = auto", "plan_cache_mode = force_generic_plan", "enable_sort = off"]) {
        const walked = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql.unsafe(`SET LOCAL ${settings}`)
          const read = sql<{ n: number }>`
            SELECT pg_stat_get_xact_tuples_returned('batch_call_tasks_pkey'::regclass)::int4 AS n`
          const [before] = yield* read
          const taken = yield* repo.claimUnknown("w2", NOW, 10_000, 100)
          const [after] = yield* read
          return { taken: taken.length, primaryKeyEntries: after!.n - before!.n }
        }))
        assert.deepStrictEqual(walked, { taken: 0, primaryKeyEntries: 0 }, settings)
      }
    }))

  it.effect("takes unknown tasks for reconciling by their index and their batches by key, scanning neither table", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* DispatchRepo
      // many batches (the table keeps every batch ever created), 400 unknown tasks in two of them
      const { ids } = yield* seed(400, 60)
      yield* sql`
        UPDATE batch_call_tasks SET state = 'unknown', lease_owner = 'w', lease_expires_at = ${NOW - 1}
        WHERE batch_call_id = ANY(${[ids[7]!, ids[300]!]}::text[])`
      yield* sql`
        UPDATE batch_call_tasks SET state = 'unknown', lease_owner = 'w', lease_expires_at = ${NOW - 1}
        WHERE batch_call_id = ANY(${ids.slice(100, 105)}::text[]) AND task_index < 56`
      yield* analyze
      const { result, seq } = yield* generic(repo.claimUnknown("w2", NOW, 10_000, 100))
      assert.strictEqual(result.length, 100)
      assert.strictEqual(seq.batch_call_tasks, 0)
      assert.strictEqual(seq.batch_calls, 0)
      // each with its batch's number
      assert.isTrue(result.every((t) => t.fromNumber === "+14155550100"))
    }))
})
