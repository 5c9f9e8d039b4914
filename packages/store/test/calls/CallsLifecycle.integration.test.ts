// The call lifecycle of migration 0012: a call row exists from the claim (`registered`, with the id svc derived from
// the task), recordFinished brings it to its final status, and call_json returns the get-call shape of any row.
import { assert, layer } from "@effect/vitest"
import { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import type { CallEnded } from "@svc/domain/ports/Dialer.ts"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { CallsRepo, type FinishedTask } from "../../src/calls/CallsRepo.ts"
import { finishedFromCall } from "../../test-support/FinishedTasks.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const Layers = CallsRepo.layer.pipe(Layer.provideMerge(TestDatabase.layer))

const NOW = 1_800_000_000_000
const SUMMARY = Number(process.env["TEST_SUMMARY"] ?? 50)

/** `n` characters of text that compresses about as badly as prose (a fixed pseudo-random sequence). */
const prose = (n: number) => {
  let x = 12345
  let text = ""
  while (text.length < n) {
    x = (x * 1103515245 + 12345) % 2147483648
    text += "abcdefghijklmnopqrstuvwxyz ,."[x % 29]
  }
  return text
}
const FROM = "+14155550100"
let serial = 0

/** A new org with a batch of `n` pending tasks (task i dials +1415555{i}); returns the ids. */
const batchOf = (n: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const k = ++serial
    const orgId = OrgId.make(`org_life_${k}`)
    const batchCallId = BatchCallId.make(`batch_life_${k}`)
    yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp) VALUES (${orgId}, 'o', 50, 0)`
    // the claim reads its batch's row (status, max_concurrency: decision 0549), so the tasks get one
    yield* sql`
      INSERT INTO batch_calls (batch_call_id, org_id, api_key_id, from_number, scheduled_timestamp, total_task_count,
        next_dispatch_at, created_timestamp)
      VALUES (${batchCallId}, ${orgId}, 'key', ${FROM}, 0, ${Math.max(n, 1)}, 0, 0)`
    for (let i = 0; i < n; i++) {
      yield* sql`
        INSERT INTO batch_call_tasks (org_id, batch_call_id, task_index, to_number, override_agent_id, metadata,
          dynamic_variables)
        VALUES (${orgId}, ${batchCallId}, ${i}, ${`+1415555${String(i).padStart(4, "0")}`}, 'agent_a',
          ${JSON.stringify({ crm: { id: i }, note: null })}::jsonb, ${JSON.stringify({ name: `n${i}` })}::jsonb)`
    }
    return { orgId, batchCallId }
  })

interface ClaimRow {
  readonly task_id: string | null
  readonly call_id: string | null
  readonly state: string | null
  readonly to_number: string | null
}

const claim = (orgId: string, batchCallId: string, max: number, now = NOW) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<ClaimRow>`
      SELECT task_id, call_id, state, to_number
      FROM scheduler_claim(1, ${orgId}, '1s', ${batchCallId}, 0, ${max}, 'w1', ${now + 60_000}::int8, ${FROM},
        ${now}::int8, NULL::int4[])`
    return rows.filter((r) => r.task_id !== null)
  })

const callsOf = (orgId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ call_id: string; call_seq: string; json: Record<string, unknown> }>`
      SELECT call_id, call_seq::text AS call_seq, call_json(c) AS json FROM calls c
      WHERE org_id = ${orgId} ORDER BY task_id`
  })

const ended = (taskId: string, callId: string, outcome: CallEnded["outcome"]): CallEnded => ({
  _tag: "CallEnded",
  idempotency_key: taskId,
  call_id: callId,
  outcome,
  start_timestamp: NOW + 1_000,
  end_timestamp: NOW + 61_000,
  duration_ms: 60_000,
  disconnection_reason: outcome === "answered" ? "user_hangup" : outcome === "busy" ? "dial_busy" : "dial_failed",
  analysis: outcome === "answered"
    ? { call_successful: true, user_sentiment: "Positive", call_summary: "ok", interest_level: 4 }
    : {}
})

const task = (
  orgId: OrgId,
  batchCallId: BatchCallId,
  row: ClaimRow
): Omit<FinishedTask, "state" | "reason" | "call"> => ({
  taskId: row.task_id!,
  orgId,
  batchCallId,
  fromNumber: FROM,
  toNumber: row.to_number!
})

layer(Layers, { timeout: 60_000 })("call lifecycle (migration 0012)", (it) => {
  it.effect("a claimed task has a registered call with svc's id, in the get-call shape", () =>
    Effect.gen(function*() {
      const { batchCallId, orgId } = yield* batchOf(2)
      const claimed = yield* claim(orgId, batchCallId, 2)
      assert.strictEqual(claimed.length, 2)
      for (const row of claimed) assert.match(row.call_id!, /^call_[0-9a-f]{32}$/)
      assert.notStrictEqual(claimed[0]!.call_id, claimed[1]!.call_id)
      const calls = yield* callsOf(orgId)
      assert.deepStrictEqual(calls.map((c) => c.call_id), claimed.map((r) => r.call_id))
      assert.deepStrictEqual(calls[0]!.json, {
        call_id: claimed[0]!.call_id,
        call_type: "phone_call",
        direction: "outbound",
        call_status: "registered",
        agent_id: "agent_a",
        batch_call_id: batchCallId,
        from_number: FROM,
        to_number: "+14155550000",
        // a JSON null inside metadata is the caller's and stays
        metadata: { crm: { id: 0 }, note: null },
        svc_llm_dynamic_variables: { name: "n0" }
      })
    }))

  it.effect("the call id is a function of the task: a re-claim after a crash dials the same id, one row", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { batchCallId, orgId } = yield* batchOf(1)
      const [first] = yield* claim(orgId, batchCallId, 1)
      // the worker died; the reconciler found no call and returned the task to pending
      yield* sql`UPDATE batch_call_tasks SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL`
      const [again] = yield* claim(orgId, batchCallId, 1, NOW + 120_000)
      assert.strictEqual(again!.call_id, first!.call_id)
      const [derived] = yield* sql<{ id: string }>`SELECT svc_call_id(${first!.task_id}::int8) AS id`
      assert.strictEqual(derived!.id, first!.call_id)
      const calls = yield* callsOf(orgId)
      assert.strictEqual(calls.length, 1)
      assert.strictEqual(calls[0]!.json["call_status"], "registered")
    }))

  it.effect("recordFinished moves each call to the vendor status of its outcome, after every recorded call", () =>
    Effect.gen(function*() {
      const repo = yield* CallsRepo
      const sql = yield* SqlClient.SqlClient
      const { batchCallId, orgId } = yield* batchOf(4)
      const claimed = yield* claim(orgId, batchCallId, 4)
      const before = yield* callsOf(orgId)
      const places = yield* sql<{ call_seq: string; sort_timestamp: string }>`
        SELECT call_seq::text AS call_seq, sort_timestamp::text AS sort_timestamp FROM calls
        WHERE org_id = ${orgId} ORDER BY task_id`
      const outcomes: Array<CallEnded["outcome"]> = ["answered", "busy", "failed"]
      const results: Array<FinishedTask> = outcomes.map((o, i) =>
        finishedFromCall(task(orgId, batchCallId, claimed[i]!), ended(claimed[i]!.task_id!, claimed[i]!.call_id!, o))
      )
      // the fourth dial was refused by the carrier: no call was placed
      results.push({
        ...task(orgId, batchCallId, claimed[3]!),
        state: "failed",
        reason: "rejected: x",
        call: undefined
      })
      const recorded = yield* repo.recordFinished(results, NOW + 70_000)
      assert.strictEqual(recorded.finished, 4)
      const after = yield* callsOf(orgId)
      assert.deepStrictEqual(after.map((c) => c.json["call_status"]), [
        "ended",
        "not_connected",
        "error",
        "not_connected"
      ])
      assert.deepStrictEqual(after.map((c) => c.json["disconnection_reason"]), [
        "user_hangup",
        "dial_busy",
        "dial_failed",
        "dial_failed"
      ])
      // finished calls keep their call_seq (the backfill ranges stop before calls in flight instead) and their
      // place in the list (sort_timestamp: the registration time), so no indexed column changes (migration 0015)
      const placesAfter = yield* sql<{ call_seq: string; sort_timestamp: string }>`
        SELECT call_seq::text AS call_seq, sort_timestamp::text AS sort_timestamp FROM calls
        WHERE org_id = ${orgId} ORDER BY task_id`
      assert.deepStrictEqual(placesAfter, places)
      assert.deepStrictEqual(places.map((p) => Number(p.sort_timestamp)), [NOW, NOW, NOW, NOW])
      assert.deepStrictEqual(after.map((c) => c.call_id), before.map((c) => c.call_id))
      const answered = after[0]!.json
      assert.strictEqual(answered["start_timestamp"], NOW + 1_000)
      assert.strictEqual(answered["end_timestamp"], NOW + 61_000)
      assert.strictEqual(answered["duration_ms"], 60_000)
      assert.deepStrictEqual(answered["call_analysis"], {
        call_summary: "ok",
        user_sentiment: "Positive",
        call_successful: true,
        custom_analysis_data: { interest_level: 4 }
      })
      assert.deepStrictEqual(after[1]!.json["call_analysis"], { custom_analysis_data: {} })
      assert.isUndefined(after[3]!.json["start_timestamp"])
      // only placed calls reach their contacts
      const [feed] = yield* sql<{ n: number }>`
        SELECT count(*)::int4 AS n FROM contact_feed WHERE org_id = ${orgId}`
      assert.strictEqual(feed!.n, 3)
      const tasks = yield* sql<{ call_id: string }>`
        SELECT call_id FROM batch_call_tasks WHERE org_id = ${orgId} ORDER BY task_id`
      assert.deepStrictEqual(tasks.map((t) => t.call_id), before.map((c) => c.call_id))
    }))

  it.effect("the finish is a HOT update: it writes no index entry, page after page (migration 0015)", () =>
    Effect.gen(function*() {
      const repo = yield* CallsRepo
      const sql = yield* SqlClient.SqlClient
      // several pages of registered rows (fillfactor 40: about a dozen rows a page), as the claim writes them
      const { batchCallId, orgId } = yield* batchOf(40)
      const claimed = yield* claim(orgId, batchCallId, 40)
      const [pages] = yield* sql<{ n: number }>`
        SELECT count(DISTINCT (ctid::text::point)[0])::int4 AS n FROM calls WHERE org_id = ${orgId}`
      assert.isAbove(pages!.n, 2)
      const results = claimed.map((c) =>
        finishedFromCall(task(orgId, batchCallId, c), {
          ...ended(c.task_id!, c.call_id!, "answered"),
          // a larger finished row than the bench's: a short summary and a few analysis fields (a row over about
          // one and a half times its registered size may not fit its page: then that update is not HOT, decision
          // 0540; TEST_SUMMARY=N measures another summary length)
          analysis: { call_summary: prose(SUMMARY), call_successful: true, interest_level: 4, city: "Lisbon" }
        })
      )
      // the connection's statistics counters not yet reported (every update of calls, and those that were HOT),
      // before and after, on one connection
      const counts = yield* sql.withTransaction(Effect.gen(function*() {
        // summed over calls' partitions, which hold the rows and their counters (decision 0442)
        const read = sql<{ updated: number; hot: number }>`
          SELECT coalesce(sum(pg_stat_get_xact_tuples_updated(relid)), 0)::int4 AS updated,
            coalesce(sum(pg_stat_get_xact_tuples_hot_updated(relid)), 0)::int4 AS hot
          FROM pg_partition_tree('calls') WHERE isleaf`
        const [before] = yield* read
        yield* repo.recordFinished(results, NOW + 70_000)
        const [after] = yield* read
        return { updated: after!.updated - before!.updated, hot: after!.hot - before!.hot }
      }))
      assert.deepStrictEqual(counts, { updated: 40, hot: 40 })
    }))

  it.effect("a finished task without a registered row (claimed before migration 0012) still gets its call", () =>
    Effect.gen(function*() {
      const repo = yield* CallsRepo
      const sql = yield* SqlClient.SqlClient
      const { batchCallId, orgId } = yield* batchOf(1)
      const [row] = yield* claim(orgId, batchCallId, 1)
      yield* sql`DELETE FROM calls WHERE org_id = ${orgId}`
      yield* repo.recordFinished(
        [finishedFromCall(task(orgId, batchCallId, row!), ended(row!.task_id!, "call_from_carrier", "answered"))],
        NOW
      )
      const calls = yield* callsOf(orgId)
      assert.strictEqual(calls.length, 1)
      // svc's id wins over what the carrier reported
      assert.strictEqual(calls[0]!.call_id, row!.call_id)
      assert.strictEqual(calls[0]!.json["call_status"], "ended")
      assert.deepStrictEqual(calls[0]!.json["metadata"], { crm: { id: 0 }, note: null })
    }))

  it.effect("a result reported again for a finished task changes nothing", () =>
    Effect.gen(function*() {
      const repo = yield* CallsRepo
      const { batchCallId, orgId } = yield* batchOf(1)
      const [row] = yield* claim(orgId, batchCallId, 1)
      const result = finishedFromCall(task(orgId, batchCallId, row!), ended(row!.task_id!, row!.call_id!, "answered"))
      yield* repo.recordFinished([result], NOW)
      const first = yield* callsOf(orgId)
      const again = yield* repo.recordFinished([{ ...result, call: ended(row!.task_id!, row!.call_id!, "busy") }], NOW)
      assert.strictEqual(again.finished, 0)
      assert.deepStrictEqual(yield* callsOf(orgId), first)
    }))
})
