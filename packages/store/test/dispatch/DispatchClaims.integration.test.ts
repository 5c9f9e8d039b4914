import { assert, layer } from "@effect/vitest"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { type BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Deferred, Effect, Fiber, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { BatchCallsRepo } from "../../src/batches/BatchCallsRepo.ts"
import { DispatchRepo, IDLE_RECHECK_MS, ORG_LOCK } from "../../src/dispatch/DispatchRepo.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const Layers = Layer.mergeAll(BatchCallsRepo.layer, DispatchRepo.layer).pipe(
  Layer.provideMerge(TestDatabase.layer)
)

const NOW = 1_000_000
let orgs = 0

const seedBatches = (limit: number, batches: ReadonlyArray<{ tasks: number; reserved: number }>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* BatchCallsRepo
    const orgId = OrgId.make(`org_claims_${++orgs}`)
    yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
               VALUES (${orgId}, 'claims', ${limit}, 0)`
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, '+14155550100', 0)`
    for (const b of batches) {
      yield* repo.create(
        orgId,
        "key",
        Schema.decodeUnknownSync(CreateBatchCallRequest)({
          from_number: "+14155550100",
          reserved_concurrency: b.reserved,
          tasks: Array.from({ length: b.tasks }, (_, i) => ({ to_number: `+1212${String(i).padStart(7, "0")}` }))
        }),
        { maxTasks: 10_000, legalGrouper: () => new LegalGrouper() }
      ).pipe(Effect.orDie)
    }
    return orgId
  })

const inFlight = (orgId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ n: number }>`
      SELECT count(*)::int4 AS n FROM batch_call_tasks WHERE org_id = ${orgId} AND state IN ('dialling', 'unknown')`
    return row!.n
  })

/**
 * Holds the org's claim lock in a transaction of its own (another worker mid-claim) until `release` completes;
 * `locked` completes once the lock is held.
 */
const holdOrgLock = (orgId: string, locked: Deferred.Deferred<void>, release: Deferred.Deferred<void>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(${ORG_LOCK}, hashtext(${orgId}))::text`
      yield* Deferred.succeed(locked, undefined)
      yield* Deferred.await(release)
    }))
  })

/** Polls until `n` sessions wait for an advisory lock (no clock involved: each poll is a round trip). */
const awaitLockWaiters = (n: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (;;) {
      const [row] = yield* sql<{ n: number }>`
        SELECT count(*)::int4 AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`
      if (row!.n >= n) return
    }
  })

/** Completes once some statement waits for a row lock (another transaction holds the row). */
const awaitRowLockWaiter = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (;;) {
    const [row] = yield* sql<{ n: number }>`
      SELECT count(*)::int4 AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')`
    if (row!.n > 0) return
  }
})

/** The statement's result, or None if it waited for a row lock instead (the race's loser is interrupted). */
const withoutWaiting = <A>(statement: Effect.Effect<A>) =>
  Effect.raceFirst(statement.pipe(Effect.map(Option.some)), awaitRowLockWaiter.pipe(Effect.as(Option.none<A>())))

/** Holds a row lock on one task in a transaction of its own (a recorder mid-statement) until `release` completes. */
const holdTaskRow = (taskId: string, locked: Deferred.Deferred<void>, release: Deferred.Deferred<void>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT 1 FROM batch_call_tasks WHERE task_id = ${taskId}::int8 FOR UPDATE`
      yield* Deferred.succeed(locked, undefined)
      yield* Deferred.await(release)
    }))
  })

layer(Layers, { timeout: 60_000 })("DispatchRepo.claim", (it) => {
  it.effect("concurrent claims by many workers never exceed the org's limit less the reservation", () =>
    Effect.gen(function*() {
      const orgId = yield* seedBatches(25, [{ tasks: 500, reserved: 3 }])
      const repo = yield* DispatchRepo
      const due = (yield* repo.findDue(NOW, 100)).due.filter((b) => b.orgId === orgId)
      // twelve workers claim at the same moment, each as if it alone saw free slots
      const results = yield* Effect.all(
        Array.from(
          { length: 12 },
          (_, i) => repo.claim(orgId, due, { owner: `w${i}`, now: NOW, leaseMs: 30_000, maxPerBatch: 1000 })
        ),
        { concurrency: "unbounded" }
      )
      const claimed = results.reduce((n, r) => n + r.claimed.length, 0)
      assert.strictEqual(claimed, 22)
      assert.strictEqual(yield* inFlight(orgId), 22)
      assert.strictEqual(new Set(results.flatMap((r) => r.claimed.map((t) => t.taskId))).size, 22)
    }))

  it.effect("claims in task order, sets the lease and counts the attempt", () =>
    Effect.gen(function*() {
      const orgId = yield* seedBatches(3, [{ tasks: 5, reserved: 0 }])
      const repo = yield* DispatchRepo
      const due = (yield* repo.findDue(NOW, 100)).due.filter((b) => b.orgId === orgId)
      const result = yield* repo.claim(orgId, due, { owner: "w", now: NOW, leaseMs: 5_000, maxPerBatch: 10 })
      assert.deepStrictEqual(result.claimed.map((t) => t.taskIndex), [0, 1, 2])
      assert.isTrue(result.claimed.every((t) => t.leaseExpiresAt === NOW + 5_000))
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ state: string; lease_owner: string | null; attempts: number }>`
        SELECT state, lease_owner, attempts FROM batch_call_tasks WHERE org_id = ${orgId} ORDER BY task_index`
      assert.deepStrictEqual(rows.map((r) => [r.state, r.lease_owner, r.attempts]), [
        ["dialling", "w", 1],
        ["dialling", "w", 1],
        ["dialling", "w", 1],
        ["pending", null, 0],
        ["pending", null, 0]
      ])
      // expired leases turn unknown; the batch is not claimable beyond the limit meanwhile
      assert.strictEqual(yield* repo.expireLeases(NOW + 5_001), 3)
      const again = yield* repo.claim(orgId, due, { owner: "w2", now: NOW + 5_001, leaseMs: 5_000, maxPerBatch: 10 })
      assert.strictEqual(again.claimed.length, 0)
    }))

  it.effect("a claim waits while another worker holds the org's lock, then claims what that one left", () =>
    Effect.gen(function*() {
      const orgId = yield* seedBatches(4, [{ tasks: 10, reserved: 0 }])
      const repo = yield* DispatchRepo
      const due = (yield* repo.findDue(NOW, 100)).due.filter((b) => b.orgId === orgId)
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(holdOrgLock(orgId, locked, release))
      yield* Deferred.await(locked)
      const waiting = yield* Effect.forkChild(
        repo.claim(orgId, due, { owner: "w", now: NOW, leaseMs: 30_000, maxPerBatch: 10 })
      )
      // the claim is blocked on the lock (not polling, not giving up), then proceeds once it is released
      yield* awaitLockWaiters(1)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      const result = yield* Fiber.join(waiting)
      assert.isFalse(result.busy)
      assert.deepStrictEqual(result.claimed.map((t) => t.taskIndex), [0, 1, 2, 3])
      assert.strictEqual(yield* inFlight(orgId), 4)
    }))

  it.effect("a claim that cannot get the org's lock in time reports busy and changes nothing", () =>
    Effect.gen(function*() {
      const orgId = yield* seedBatches(4, [{ tasks: 10, reserved: 0 }])
      const repo = yield* DispatchRepo
      const sql = yield* SqlClient.SqlClient
      const due = (yield* repo.findDue(NOW, 100)).due.filter((b) => b.orgId === orgId)
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(holdOrgLock(orgId, locked, release))
      yield* Deferred.await(locked)
      // held for longer than ORG_LOCK_WAIT_MS: the claim gives up (PostgreSQL's lock_timeout, not our clock)
      const result = yield* repo.claim(orgId, due, { owner: "w", now: NOW, leaseMs: 30_000, maxPerBatch: 10 })
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      assert.deepStrictEqual(result, {
        claimed: [],
        skipped: 0,
        suppressed: 0,
        deferred: 0,
        completed: [],
        busy: true,
        more: false,
        rechecksAt: undefined
      })
      assert.strictEqual(yield* inFlight(orgId), 0)
      const [batch] = yield* sql<{ status: string }>`SELECT status FROM batch_calls WHERE org_id = ${orgId}`
      assert.strictEqual(batch!.status, "scheduled")
      // the wait bound was local to the claim's transaction: a later one waits as long as it needs
      const [setting] = yield* sql<{ v: string }>`SELECT current_setting('lock_timeout') AS v`
      assert.strictEqual(setting!.v, "0")
      const after = yield* repo.claim(orgId, due, { owner: "w", now: NOW, leaseMs: 30_000, maxPerBatch: 10 })
      assert.strictEqual(after.claimed.length, 4)
    }))

  it.effect("reports more to claim only when a batch stopped at the claim limit with slots left", () =>
    Effect.gen(function*() {
      const repo = yield* DispatchRepo
      const claimOf = (limit: number, maxPerBatch: number) =>
        Effect.gen(function*() {
          const orgId = yield* seedBatches(limit, [{ tasks: 30, reserved: 0 }])
          const due = (yield* repo.findDue(NOW, 100)).due.filter((b) => b.orgId === orgId)
          return yield* repo.claim(orgId, due, { owner: "w", now: NOW, leaseMs: 30_000, maxPerBatch })
        })
      // capped by the claim limit, 6 slots left: go round again
      const capped = yield* claimOf(10, 4)
      assert.strictEqual(capped.claimed.length, 4)
      assert.isTrue(capped.more)
      // the claim limit and the slots ran out together: another pass would find no slot
      const full = yield* claimOf(4, 4)
      assert.strictEqual(full.claimed.length, 4)
      assert.isFalse(full.more)
      // the org's slots bound the claim, not the claim limit
      const bySlots = yield* claimOf(3, 10)
      assert.strictEqual(bySlots.claimed.length, 3)
      assert.isFalse(bySlots.more)
    }))

  it.effect("a batch that ran dry rests until its recheck, unless a task it could not take is still pending", () =>
    Effect.gen(function*() {
      const repo = yield* DispatchRepo
      const sql = yield* SqlClient.SqlClient
      const nextOf = (orgId: string) =>
        sql<{ next: number }>`SELECT next_dispatch_at::float8 AS next FROM batch_calls WHERE org_id = ${orgId}`.pipe(
          Effect.map((rows) => rows[0]!.next)
        )
      // all five claimed with slots to spare: dry, its calls in flight, so it rests until the recheck
      const dry = yield* seedBatches(10, [{ tasks: 5, reserved: 0 }])
      const dryDue = (yield* repo.findDue(NOW, 100)).due.filter((b) => b.orgId === dry)
      const rested = yield* repo.claim(dry, dryDue, { owner: "w", now: NOW, leaseMs: 30_000, maxPerBatch: 10 })
      assert.strictEqual(rested.claimed.length, 5)
      assert.deepStrictEqual([rested.rechecksAt, rested.completed, rested.more], [NOW + IDLE_RECHECK_MS, [], false])
      assert.strictEqual(yield* nextOf(dry), NOW + IDLE_RECHECK_MS)
      // one pending task held by another transaction (row-locked): the claim takes the other four and finds the
      // batch short, but it is not dry; it stays due
      const held = yield* seedBatches(10, [{ tasks: 5, reserved: 0 }])
      const heldDue = (yield* repo.findDue(NOW, 100)).due.filter((b) => b.orgId === held)
      const before = yield* nextOf(held)
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT 1 FROM batch_call_tasks WHERE org_id = ${held} AND task_index = 4 FOR UPDATE`
        yield* Deferred.succeed(locked, undefined)
        yield* Deferred.await(release)
      })))
      yield* Deferred.await(locked)
      const short = yield* repo.claim(held, heldDue, { owner: "w", now: NOW, leaseMs: 30_000, maxPerBatch: 10 })
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      assert.deepStrictEqual(short.claimed.map((t) => t.taskIndex), [0, 1, 2, 3])
      assert.strictEqual(short.rechecksAt, undefined)
      assert.strictEqual(yield* nextOf(held), before)
      const rest = yield* repo.claim(held, heldDue, { owner: "w", now: NOW, leaseMs: 30_000, maxPerBatch: 10 })
      assert.deepStrictEqual(rest.claimed.map((t) => t.taskIndex), [4])
    }))

  it.effect("returning tasks to pending leaves an org whose lock stays taken for a later look", () =>
    Effect.gen(function*() {
      const orgId = yield* seedBatches(3, [{ tasks: 5, reserved: 0 }])
      const repo = yield* DispatchRepo
      const sql = yield* SqlClient.SqlClient
      const due = (yield* repo.findDue(NOW, 100)).due.filter((b) => b.orgId === orgId)
      const claim = yield* repo.claim(orgId, due, { owner: "w", now: NOW, leaseMs: 30_000, maxPerBatch: 10 })
      const ids = claim.claimed.map((t) => t.taskId)
      const states = sql<{ state: string }>`
        SELECT state FROM batch_call_tasks WHERE task_id = ANY(${ids}::text[]::int8[]) ORDER BY task_id`
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(holdOrgLock(orgId, locked, release))
      yield* Deferred.await(locked)
      // held past ORG_LOCK_WAIT_MS: nothing returned, nothing changed, no failure
      assert.strictEqual(yield* repo.returnToPending("w", ids, NOW), 0)
      assert.deepStrictEqual((yield* states).map((r) => r.state), ["dialling", "dialling", "dialling"])
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      assert.strictEqual(yield* repo.returnToPending("w", ids, NOW), 3)
      assert.deepStrictEqual((yield* states).map((r) => r.state), ["pending", "pending", "pending"])
    }))

  it.effect("claims its tasks by primary key under a generic plan, never by scanning every task", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* DispatchRepo
      // other batches' tasks around the claimed one's: 24,000 rows, so a scan is the expensive way to find 500
      yield* seedBatches(1, [{ tasks: 8_000, reserved: 0 }, { tasks: 8_000, reserved: 0 }])
      const orgId = yield* seedBatches(1_000, [{ tasks: 8_000, reserved: 0 }])
      yield* sql`ANALYZE batch_call_tasks`
      // the org's one do-not-call contact, past the tasks this claim takes, so every claimed task is checked
      yield* sql`
        INSERT INTO contacts (org_id, contact_id, phone_number, do_not_call, created_timestamp,
          user_modified_timestamp, search_text)
        VALUES (${orgId}, 'dnc', '+12120007999', true, 0, 0, '+12120007999')`
      // an org without do-not-call contacts beside it
      const plainOrg = yield* seedBatches(1_000, [{ tasks: 1_000, reserved: 0 }])
      const due = (yield* repo.findDue(NOW, 100)).due
      // the plan PostgreSQL may switch a prepared statement to after five runs; the connection's counters not yet
      // reported (pg_stat_xact_user_tables, which also hold its earlier transactions' until they are flushed, and
      // are not flushed inside a transaction) show how the claim read the table
      const scansOf = (org: OrgId) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`SET LOCAL plan_cache_mode = force_generic_plan`
          const seqScans = sql<{ seq_scan: number; idx_scan: number; dnc_probes: number }>`
            SELECT seq_scan::int4 AS seq_scan, idx_scan::int4 AS idx_scan,
              pg_stat_get_xact_numscans('contacts_do_not_call'::regclass)::int4 AS dnc_probes
            FROM pg_stat_xact_user_tables WHERE relname = 'batch_call_tasks'`
          const [before] = yield* seqScans
          const claim = yield* repo.claim(org, due.filter((b) => b.orgId === org), {
            owner: "w",
            now: NOW,
            leaseMs: 30_000,
            maxPerBatch: 500
          })
          assert.strictEqual(claim.claimed.length, 500)
          const [after] = yield* seqScans
          return {
            seq: after!.seq_scan - before!.seq_scan,
            index: after!.idx_scan - before!.idx_scan,
            doNotCallProbes: after!.dnc_probes - before!.dnc_probes
          }
        }))
      const scans = yield* scansOf(orgId)
      assert.strictEqual(scans.seq, 0)
      assert.isAbove(scans.index, 0)
      // the do-not-call check: whether the org has any do-not-call contact, then one probe per claimed task
      assert.strictEqual(scans.doNotCallProbes, 1 + 500)
      // an org without any: the first probe says so, and no task is probed
      const plain = yield* scansOf(plainOrg)
      assert.deepStrictEqual([plain.seq, plain.doNotCallProbes], [0, 1])
    }))

  // decision 0550: whether an org has a suppression list is one probe of the list's primary key, whatever other orgs
  // hold; as an EXISTS on org_id alone, a generic plan read the whole table from its start for an org with no list
  // beside another's long one (found by the suppression claim bench)
  it.effect(
    "asks whether an org has a suppression list by its key under a generic plan, beside another's long list",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const repo = yield* DispatchRepo
        const listed = yield* seedBatches(1_000, [{ tasks: 20, reserved: 0 }])
        yield* sql`
        INSERT INTO suppressions (org_id, phone_number, source, created_timestamp)
        SELECT ${listed}, '+1' || (2000000000 + g)::text, 'national_dnc', 0 FROM generate_series(1, 200000) g`
        const plainOrg = yield* seedBatches(1_000, [{ tasks: 20, reserved: 0 }])
        yield* sql`ANALYZE suppressions`
        const due = (yield* repo.findDue(NOW, 100)).due
        const scansOf = (org: OrgId) =>
          sql.withTransaction(Effect.gen(function*() {
            yield* sql`SET LOCAL plan_cache_mode = force_generic_plan`
            const read = sql<{ seq_scan: number; tuples: number }>`
            SELECT seq_scan::int4 AS seq_scan, (seq_tup_read + coalesce(idx_tup_fetch, 0))::int4 AS tuples
            FROM pg_stat_xact_user_tables WHERE relname = 'suppressions'`
            const [before] = yield* read
            const claim = yield* repo.claim(org, due.filter((b) => b.orgId === org), {
              owner: "w",
              now: NOW,
              leaseMs: 30_000,
              maxPerBatch: 10
            })
            assert.strictEqual(claim.claimed.length, 10)
            const [after] = yield* read
            return { seq: after!.seq_scan - before!.seq_scan, tuples: after!.tuples - before!.tuples }
          }))
        // twice each: the second runs the function's cached plans
        for (const org of [plainOrg, plainOrg, listed, listed]) {
          const scans = yield* scansOf(org)
          assert.strictEqual(scans.seq, 0, `${org}: suppressions scanned`)
          // the list's first row at most, then one probe per claimed task (none of them listed)
          assert.isAtMost(scans.tuples, 1, `${org}: ${scans.tuples} rows of suppressions read`)
        }
      }),
    { timeout: 120_000 }
  )

  it.effect("checks batches for completion through its indexes under a generic plan", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* DispatchRepo
      // two big batches still pending around the two checked, so the statistics expect pending tasks everywhere
      const orgId = yield* seedBatches(1_000, [
        { tasks: 8_000, reserved: 0 },
        { tasks: 8_000, reserved: 0 },
        { tasks: 2_000, reserved: 0 },
        { tasks: 2_000, reserved: 0 }
      ])
      const ids = (yield* sql<{ batch_call_id: BatchCallId }>`
        SELECT batch_call_id FROM batch_calls WHERE org_id = ${orgId} ORDER BY total_task_count, batch_call_id`)
        .map((r) => r.batch_call_id)
      const [done, inFlight] = [ids[0]!, ids[1]!]
      yield* sql`UPDATE batch_call_tasks SET state = 'completed' WHERE batch_call_id = ANY(${[done, inFlight]})`
      yield* sql`
        UPDATE batch_call_tasks SET state = 'dialling', lease_owner = 'w', lease_expires_at = ${NOW + 30_000}
        WHERE batch_call_id = ${inFlight} AND task_index >= 1_990`
      yield* sql`ANALYZE batch_call_tasks`
      const result = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SET LOCAL plan_cache_mode = force_generic_plan`
        const scans = sql<{ seq_scan: number }>`
          SELECT seq_scan::int4 AS seq_scan FROM pg_stat_xact_user_tables WHERE relname = 'batch_call_tasks'`
        const [before] = yield* scans
        const completed = yield* repo.completeIfDone([done, inFlight, ids[2]!])
        const [after] = yield* scans
        return { completed, seq: after!.seq_scan - before!.seq_scan }
      }))
      assert.deepStrictEqual(result, { completed: [done], seq: 0 })
    }))

  // CI saw "deadlock detected" on a lease renewal right after an outage: the renewal and another many-row statement
  // on the same tasks (an expiry, a record) each held rows the other wanted. Neither renewal nor expiry waits now.
  it.effect("renewing and expiring leases skip a row another statement holds instead of waiting for it", () =>
    Effect.gen(function*() {
      const orgId = yield* seedBatches(3, [{ tasks: 3, reserved: 0 }])
      const repo = yield* DispatchRepo
      const sql = yield* SqlClient.SqlClient
      const due = (yield* repo.findDue(NOW, 100)).due.filter((b) => b.orgId === orgId)
      const claim = yield* repo.claim(orgId, due, { owner: "w", now: NOW, leaseMs: 5_000, maxPerBatch: 10 })
      const [a, b, c] = claim.claimed.map((t) => t.taskId)
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(holdTaskRow(b!, locked, release))
      yield* Deferred.await(locked)

      const renewed = yield* withoutWaiting(repo.extendLeases("w", [a!, b!, c!], NOW + 60_000))
      assert.deepStrictEqual(Option.map(renewed, (ids) => [...ids].sort()), Option.some([a!, c!].sort()))
      // b's lease (NOW + 5,000) has expired at NOW + 10,000, but its row is held: skipped, not waited for
      assert.isTrue(Option.isSome(yield* withoutWaiting(repo.expireLeases(NOW + 10_000))))
      const states = sql<{ task_id: string; state: string; lease_expires_at: string }>`
        SELECT task_id::text, state, lease_expires_at::text FROM batch_call_tasks
        WHERE org_id = ${orgId} ORDER BY task_id`
      assert.deepStrictEqual((yield* states).map((r) => [r.task_id, r.state, Number(r.lease_expires_at)]), [
        [a, "dialling", NOW + 60_000],
        [b, "dialling", NOW + 5_000],
        [c, "dialling", NOW + 60_000]
      ])

      // once the row is free, the next pass expires it
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      yield* repo.expireLeases(NOW + 10_000)
      assert.deepStrictEqual((yield* states).map((r) => r.state), ["dialling", "unknown", "dialling"])
    }))
})
