import { assert, layer } from "@effect/vitest"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { type BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { BatchCallsRepo } from "../../src/batches/BatchCallsRepo.ts"
import {
  ATTEMPTS_KEPT_MS,
  type BatchLegality,
  type ClaimResult,
  DispatchRepo,
  type DueBatch
} from "../../src/dispatch/DispatchRepo.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

// Attempt caps in the claim (issue 15 item 4, decision 0624, migration 0023): a task of a capped group whose number
// had its cap of attempts by the org in the last 24 h is left pending until the oldest counted attempt leaves the
// window; counted under the org's lock, so concurrent claims never take an attempt past the cap.

const Layers = Layer.mergeAll(BatchCallsRepo.layer, DispatchRepo.layer).pipe(
  Layer.provideMerge(TestDatabase.layer)
)

const NOW = Date.parse("2026-12-01T15:00:00Z")
const DAY = 86_400_000
const FROM = "+14155550100"
const MIAMI = "+13055550100"
const NEW_YORK = "+12125550100"
let orgs = 0

const seedOrg = (limit: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const orgId = OrgId.make(`org_caps_${process.pid}_${++orgs}`)
    yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
               VALUES (${orgId}, 'caps', ${limit}, 0)`
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, ${FROM}, 0)`
    return orgId
  })

let keys = 0
const seedBatch = (orgId: OrgId, numbers: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const repo = yield* BatchCallsRepo
    const batch = yield* repo.create(
      orgId,
      `key_${++keys}`,
      Schema.decodeUnknownSync(CreateBatchCallRequest)({
        from_number: FROM,
        tasks: numbers.map((to_number) => ({ to_number }))
      }),
      { maxTasks: 10_000, legalGrouper: () => new LegalGrouper() }
    ).pipe(Effect.orDie)
    return batch.batch_call_id
  })

/** Every group of these batches legal now, the FL group (the only one with a cap in these tests) capped at 3. */
const legalityOf = (batchCallIds: ReadonlyArray<BatchCallId>) =>
  Effect.gen(function*() {
    const repo = yield* DispatchRepo
    const groups = yield* repo.legalGroups(batchCallIds)
    const map = new Map<string, BatchLegality>()
    for (const id of batchCallIds) {
      const own = groups.filter((g) => g.batchCallId === id)
      map.set(id, {
        legal: own.map((g) => g.group),
        blocked: [],
        caps: own.filter((g) => g.ruleIds.includes("FL")).map((g) => ({
          group: g.group,
          limit: 3,
          label: "FL 3 per 24h"
        }))
      })
    }
    return map
  })

const dueOf = (orgId: OrgId, now: number, batchCallId?: string) =>
  Effect.gen(function*() {
    return (yield* (yield* DispatchRepo).findDue(now, 500)).due.filter((b) =>
      b.orgId === orgId && (batchCallId === undefined || b.batchCallId === batchCallId)
    )
  })

/** One batch's claim, asked again while the org's lock is busy (the race makes claims wait for each other). */
const claimBatch = (orgId: OrgId, batch: DueBatch, now: number, legal: ReadonlyMap<string, BatchLegality>) =>
  Effect.gen(function*() {
    const repo = yield* DispatchRepo
    let result: ClaimResult
    do {
      result = yield* repo.claim(orgId, [batch], { owner: "w", now, leaseMs: 30_000, maxPerBatch: 10, legal })
    } while (result.busy)
    return result
  })

const tasksOf = (batchCallIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<
      {
        batch_call_id: string
        to_number: string
        state: string
        state_reason: string | null
        not_before: number | null
      }
    >`
      SELECT batch_call_id, to_number, state, state_reason, not_before::float8 AS not_before FROM batch_call_tasks
      WHERE batch_call_id = ANY(${batchCallIds}::text[]) ORDER BY batch_call_id, task_index`
  })

layer(Layers, { timeout: 120_000 })("DispatchRepo.claim with attempt caps", (it) => {
  it.effect("six workers racing for one FL number in six batches: exactly 3 attempts, the rest wait 24 h", () =>
    Effect.gen(function*() {
      const orgId = yield* seedOrg(50)
      const batches: Array<BatchCallId> = []
      for (let i = 0; i < 6; i++) batches.push(yield* seedBatch(orgId, [MIAMI]))
      const legal = yield* legalityOf(batches)
      const due = yield* dueOf(orgId, NOW)
      assert.strictEqual(due.length, 6)
      const results = yield* Effect.all(due.map((b) => claimBatch(orgId, b, NOW, legal)), { concurrency: "unbounded" })
      assert.strictEqual(results.reduce((n, r) => n + r.claimed.length, 0), 3)
      assert.strictEqual(results.reduce((n, r) => n + r.deferred, 0), 3)
      const tasks = yield* tasksOf(batches)
      assert.strictEqual(tasks.filter((t) => t.state === "dialling").length, 3)
      const waiting = tasks.filter((t) => t.state === "pending")
      assert.strictEqual(waiting.length, 3)
      for (const t of waiting) {
        assert.strictEqual(t.not_before, NOW + DAY)
        assert.strictEqual(t.state_reason, "attempt_cap: FL 3 per 24h until 2026-12-02T15:00:00Z")
      }
      // each deferred batch sleeps until its task's cap frees, not a recheck a minute later
      for (const r of results) if (r.deferred > 0) assert.strictEqual(r.rechecksAt, NOW + DAY)
      const view = yield* (yield* DispatchRepo).findDue(NOW, 500)
      assert.isFalse(view.due.some((b) => b.orgId === orgId))
    }))

  it.effect("counts attempts in a rolling 24 h across batches, within one claim too; other numbers pay nothing", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg(50)
      // first attempt at NOW - 1 h
      const first = yield* seedBatch(orgId, [MIAMI])
      const r1 = yield* claimBatch(
        orgId,
        (yield* dueOf(orgId, NOW - 3_600_000))[0]!,
        NOW - 3_600_000,
        yield* legalityOf([first])
      )
      assert.strictEqual(r1.claimed.length, 1)
      // a second batch: four Miami tasks and four New York ones in one claim; 2 Miami left under the cap
      const second = yield* seedBatch(orgId, [MIAMI, NEW_YORK, MIAMI, NEW_YORK, MIAMI, NEW_YORK, MIAMI, NEW_YORK])
      const legal = yield* legalityOf([second])
      const r2 = yield* claimBatch(orgId, (yield* dueOf(orgId, NOW, second))[0]!, NOW, legal)
      assert.deepStrictEqual(r2.claimed.map((t) => t.taskIndex), [0, 1, 2, 3, 5, 7])
      assert.strictEqual(r2.deferred, 2)
      const tasks = yield* tasksOf([second])
      // the 4th attempt waits for the first (NOW - 1 h) to leave the window; the 5th for the two of this claim
      assert.deepStrictEqual(tasks.filter((t) => t.state === "pending").map((t) => t.state_reason), [
        "attempt_cap: FL 3 per 24h until 2026-12-02T14:00:00Z",
        "attempt_cap: FL 3 per 24h until 2026-12-02T15:00:00Z"
      ])
      // only the capped number's attempts are written
      const attempts = yield* sql<{ to_number: string; n: number }>`
        SELECT to_number, count(*)::int4 AS n FROM number_attempts WHERE org_id = ${orgId} GROUP BY to_number`
      assert.deepStrictEqual(attempts.map((a) => [a.to_number, a.n]), [[MIAMI, 3]])
      // a second before the first attempt leaves the window the batch is not even due; at that instant it is
      assert.strictEqual((yield* dueOf(orgId, NOW - 3_600_000 + DAY - 1, second)).length, 0)
      const at = NOW - 3_600_000 + DAY
      const r3 = yield* claimBatch(orgId, (yield* dueOf(orgId, at, second))[0]!, at, legal)
      assert.deepStrictEqual(r3.claimed.map((t) => t.taskIndex), [4])
      // the attempt that left the window is dropped as the number is dialled again
      const left = yield* sql<{ attempted_at: number }>`
        SELECT attempted_at::float8 AS attempted_at FROM number_attempts WHERE org_id = ${orgId} ORDER BY 1`
      assert.deepStrictEqual(left.map((a) => a.attempted_at), [NOW, NOW, at])
      // the claimed task's reason and not_before went with the claim
      const after = yield* tasksOf([second])
      assert.strictEqual(after[4]!.state, "dialling")
      assert.strictEqual(after[4]!.state_reason, null)
      assert.strictEqual(after[4]!.not_before, null)
    }))

  it.effect("a task whose cap has freed while its group is closed sleeps until the group opens, not a poll", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg(50)
      const batch = yield* seedBatch(orgId, [MIAMI])
      // deferred until a second ago; Florida's group closed for another hour
      yield* sql`UPDATE batch_call_tasks SET not_before = ${NOW - 1_000} WHERE batch_call_id = ${batch}`
      const legal = new Map<string, BatchLegality>([[batch, {
        legal: [],
        blocked: [{ group: 0, opensAt: NOW + 3_600_000 }],
        caps: [{ group: 0, limit: 3, label: "FL 3 per 24h" }]
      }]])
      const result = yield* claimBatch(orgId, (yield* dueOf(orgId, NOW, batch))[0]!, NOW, legal)
      assert.strictEqual(result.claimed.length, 0)
      assert.strictEqual(result.rechecksAt, NOW + 3_600_000)
      assert.strictEqual((yield* dueOf(orgId, NOW + 1_000, batch)).length, 0)
    }))

  it.effect("reads the number's attempts by its key under a generic plan, never scanning the attempts of others", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg(50)
      // 100,000 attempts of other numbers of the same org in the window
      yield* sql`
        INSERT INTO number_attempts (org_id, to_number, attempted_at, task_id)
        SELECT ${orgId}, '+1305' || lpad(i::text, 7, '0'), ${
        NOW - 60_000
      }::int8, i FROM generate_series(1, 100000) AS i`
      yield* sql`ANALYZE number_attempts`
      const batch = yield* seedBatch(
        orgId,
        Array.from({ length: 10 }, (_, i) => `+1305555${String(i).padStart(4, "0")}`)
      )
      const legal = yield* legalityOf([batch])
      const due = yield* dueOf(orgId, NOW)
      const measured = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SET LOCAL plan_cache_mode = force_generic_plan`
        const reads = sql<{ seq: number; by_key: number }>`
          SELECT (SELECT seq_scan::int4 FROM pg_stat_xact_user_tables WHERE relname = 'number_attempts') AS seq,
            pg_stat_get_xact_tuples_returned('number_attempts_pkey'::regclass)::int4 AS by_key`
        const [before] = yield* reads
        const claim = yield* (yield* DispatchRepo).claim(orgId, due, {
          owner: "w",
          now: NOW,
          leaseMs: 30_000,
          maxPerBatch: 50,
          legal
        })
        const [after] = yield* reads
        return { claim, seq: (after!.seq ?? 0) - (before!.seq ?? 0), byKey: after!.by_key - before!.by_key }
      }))
      assert.strictEqual(measured.claim.claimed.length, 10)
      assert.strictEqual(measured.seq, 0)
      assert.isBelow(measured.byKey, 50, `index entries read: ${measured.byKey}`)
    }))

  it.effect("the sweep deletes the attempts no cap can count any more, and only those", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* DispatchRepo
      const orgId = yield* seedOrg(5)
      // long before every other test's attempts (which all lie around NOW), so the sweep at `at` touches only these
      const at = NOW - 30 * DAY
      const times = [at - ATTEMPTS_KEPT_MS - 1, at - ATTEMPTS_KEPT_MS, at - DAY, at - 1]
      for (const [i, t] of times.entries()) {
        yield* sql`INSERT INTO number_attempts (org_id, to_number, attempted_at, task_id)
                   VALUES (${orgId}, ${MIAMI}, ${t}, ${i + 1})`
      }
      assert.strictEqual(ATTEMPTS_KEPT_MS, 25 * 3_600_000, "the caps' 24 h and an hour for clocks that disagree")
      assert.strictEqual(yield* repo.sweepAttempts(at), 1)
      const left = yield* sql<{ attempted_at: number }>`
        SELECT attempted_at::float8 AS attempted_at FROM number_attempts WHERE org_id = ${orgId} ORDER BY 1`
      assert.deepStrictEqual(left.map((r) => r.attempted_at), times.slice(1))
      // nothing left to sweep at the same instant
      assert.strictEqual(yield* repo.sweepAttempts(at), 0)
    }))
})
