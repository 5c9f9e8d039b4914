import { assert, layer } from "@effect/vitest"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Data, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { BatchCallsRepo } from "../../src/batches/BatchCallsRepo.ts"
import { type ClaimResult, DispatchRepo } from "../../src/dispatch/DispatchRepo.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

// The claim honours legal groups (issue 15 item 3, decision 0623): only tasks of the groups the caller says are
// legal now (and unconstrained ones) are claimed, group by group through batch_call_tasks_pending_by_group, so the
// pending tasks of blocked groups are never walked.

const Layers = Layer.mergeAll(BatchCallsRepo.layer, DispatchRepo.layer).pipe(
  Layer.provideMerge(TestDatabase.layer)
)

const NOW = 1_000_000
const FROM = "+14155550100"
let orgs = 0

/** What a claim read, carried out of its transaction as a failure so that the transaction rolls back. */
class Measured extends Data.TaggedError("Measured")<{
  readonly claim: ClaimResult
  readonly seq: number
  readonly pending: number
  readonly byGroup: number
  readonly unconstrained: number
}> {}

const seedBatch = (limit: number, numbers: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* BatchCallsRepo
    const orgId = OrgId.make(`org_legal_${process.pid}_${++orgs}`)
    yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
               VALUES (${orgId}, 'legal', ${limit}, 0)`
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, ${FROM}, 0)`
    const batch = yield* repo.create(
      orgId,
      "key",
      Schema.decodeUnknownSync(CreateBatchCallRequest)({
        from_number: FROM,
        tasks: numbers.map((to_number) => ({ to_number }))
      }),
      { maxTasks: 10_000, legalGrouper: () => new LegalGrouper() }
    ).pipe(Effect.orDie)
    return { orgId, batchCallId: batch.batch_call_id }
  })

layer(Layers, { timeout: 120_000 })("DispatchRepo.claim with legal groups", (it) => {
  it.effect("claims only legal groups' and unconstrained tasks; a batch missing from the map only unconstrained", () =>
    Effect.gen(function*() {
      const repo = yield* DispatchRepo
      // groups: 0 New York, 1 Honolulu; London unconstrained
      const { batchCallId, orgId } = yield* seedBatch(20, [
        "+18085550100",
        "+12125550100",
        "+442071838750",
        "+18085550101",
        "+12125550101"
      ])
      const groups = yield* repo.legalGroups([batchCallId])
      assert.deepStrictEqual(groups.map((g) => [g.group, g.zones, g.ruleIds]), [
        [0, ["Pacific/Honolulu"], ["US", "HI"]],
        [1, ["America/New_York"], ["US", "NY"]]
      ])
      const due = (yield* repo.findDue(NOW, 100)).due.filter((b) => b.orgId === orgId)
      const options = { owner: "w", now: NOW, leaseMs: 30_000, maxPerBatch: 1 }
      // not in the map: only the London task
      const unknown = yield* repo.claim(orgId, due, { ...options, maxPerBatch: 10, legal: new Map() })
      assert.deepStrictEqual(unknown.claimed.map((t) => t.request.to_number), ["+442071838750"])
      // New York legal, Honolulu blocked until NOW + 1 h: the New York tasks, in task order
      const legal = new Map([[batchCallId, { legal: [1], blocked: [{ group: 0, opensAt: NOW + 3_600_000 }] }]])
      const first = yield* repo.claim(orgId, due, { ...options, legal })
      assert.deepStrictEqual(first.claimed.map((t) => t.taskIndex), [1])
      const rest = yield* repo.claim(orgId, due, { ...options, maxPerBatch: 10, legal })
      assert.deepStrictEqual(rest.claimed.map((t) => t.taskIndex), [4])
      // ran dry with only the blocked group pending: the batch sleeps until the group opens, not a recheck
      assert.strictEqual(rest.rechecksAt, NOW + 3_600_000)
      const view = yield* repo.findDue(NOW, 100)
      assert.isFalse(view.due.some((b) => b.batchCallId === batchCallId))
      assert.strictEqual(view.next, NOW + 3_600_000)
    }))

  it.effect("every group legal: every pending task in task order, through the batch's pending index alone", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* DispatchRepo
      const { batchCallId, orgId } = yield* seedBatch(20, [
        "+18085550100",
        "+442071838750",
        "+12125550100",
        "+18085550101",
        "+12125550101"
      ])
      const due = (yield* repo.findDue(NOW, 100)).due.filter((b) => b.orgId === orgId)
      const legal = new Map([[batchCallId, { legal: [0, 1], blocked: [] }]])
      const measured = yield* sql.withTransaction(Effect.gen(function*() {
        const reads = sql<{ pending: number; by_group: number }>`
          SELECT pg_stat_get_xact_tuples_returned('batch_call_tasks_pending'::regclass)::int4 AS pending,
            pg_stat_get_xact_tuples_returned('batch_call_tasks_pending_by_group'::regclass)::int4 AS by_group`
        const [before] = yield* reads
        const first = yield* repo.claim(orgId, due, { owner: "w", now: NOW, leaseMs: 30_000, maxPerBatch: 3, legal })
        const [after] = yield* reads
        return { first, pending: after!.pending - before!.pending, byGroup: after!.by_group - before!.by_group }
      }))
      // Honolulu, London and New York alike, the first three by task index
      assert.deepStrictEqual(measured.first.claimed.map((t) => t.taskIndex), [0, 1, 2])
      // no group blocked: the claim needs no per-group walk (the cheaper path, docs/benchmarks.md)
      assert.strictEqual(measured.byGroup, 0)
      assert.isAtLeast(measured.pending, 3)
      const rest = yield* repo.claim(orgId, due, { owner: "w", now: NOW, leaseMs: 30_000, maxPerBatch: 10, legal })
      assert.deepStrictEqual(rest.claimed.map((t) => t.taskIndex), [3, 4])
    }))

  it.effect("claims a legal group behind 100,000 blocked pending tasks without walking them, whatever ANALYZE sampled (generic plan)", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* DispatchRepo
      const { batchCallId, orgId } = yield* seedBatch(50, ["+18085550100", "+12125550100"])
      // 100,000 more Honolulu tasks (group 0, blocked) before 10 New York ones (group 1) in task order
      yield* sql`
        INSERT INTO batch_call_tasks (org_id, batch_call_id, task_index, to_number, legal_group)
        SELECT ${orgId}, ${batchCallId}, i, '+1808' || lpad(i::text, 7, '0'), CASE WHEN i > 100001 THEN 1 ELSE 0 END
        FROM generate_series(2, 100011) AS i`
      yield* sql`UPDATE batch_call_tasks SET state = 'completed' WHERE batch_call_id = ${batchCallId} AND task_index = 1`
      yield* sql`UPDATE batch_calls SET total_task_count = 100012 WHERE batch_call_id = ${batchCallId}`
      const due = (yield* repo.findDue(NOW, 100)).due.filter((b) => b.orgId === orgId)
      const legal = new Map([[batchCallId, { legal: [1], blocked: [{ group: 0, opensAt: NOW + 60_000 }] }]])
      // A small sample (statistics target 1: 300 rows) almost never sees the 10 New York tasks: legal_group then
      // looks like one value, and before migration 0026 the generic plan walked the batch's pending index (200,023
      // entries read, in 44 of 80 samples across targets 1-100). Each sample is measured in a transaction rolled back
      // afterwards, so every target claims the same tasks.
      for (const target of [1, 5, 100]) {
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql.unsafe(`SET LOCAL default_statistics_target = ${target}`)
          yield* sql`ANALYZE batch_call_tasks`
        }))
        const measured = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`SET LOCAL plan_cache_mode = force_generic_plan`
          const reads = sql<{ seq: number; pending: number; by_group: number; unconstrained: number }>`
            SELECT (SELECT seq_scan::int4 FROM pg_stat_xact_user_tables WHERE relname = 'batch_call_tasks') AS seq,
              pg_stat_get_xact_tuples_returned('batch_call_tasks_pending'::regclass)::int4 AS pending,
              pg_stat_get_xact_tuples_returned('batch_call_tasks_pending_by_group'::regclass)::int4 AS by_group,
              pg_stat_get_xact_tuples_returned('batch_call_tasks_pending_unconstrained'::regclass)::int4
                AS unconstrained`
          const [before] = yield* reads
          const claim = yield* repo.claim(orgId, due, {
            owner: "w",
            now: NOW,
            leaseMs: 30_000,
            maxPerBatch: 500,
            legal
          })
          const [after] = yield* reads
          return yield* new Measured({
            claim,
            seq: after!.seq - before!.seq,
            pending: after!.pending - before!.pending,
            byGroup: after!.by_group - before!.by_group,
            unconstrained: after!.unconstrained - before!.unconstrained
          })
        })).pipe(Effect.catchTag("Measured", Effect.succeed))
        const label = `statistics target ${target}`
        assert.deepStrictEqual(
          measured.claim.claimed.map((t) => t.taskIndex),
          Array.from({ length: 10 }, (_, i) => 100002 + i),
          label
        )
        assert.strictEqual(measured.seq, 0, label)
        // the pending index of the whole batch is not read at all; the group index gives the legal group's 10 tasks
        // and the few probes of the ran-dry check, never the 100,000 blocked ones; the batch has no unconstrained task
        assert.strictEqual(measured.pending, 0, label)
        assert.isBelow(measured.byGroup, 100, `${label}: index entries read: ${measured.byGroup}`)
        assert.strictEqual(measured.unconstrained, 0, label)
        assert.strictEqual(measured.claim.rechecksAt, NOW + 60_000, label)
      }
    }))
})
