// Time partitions of calls and their retention (issue 30 item 4; decision 0442): months created ahead, old months
// dropped whole, the history before the boundary emptied once it is all past the retention, and nothing newer
// touched. Each test has a database of its own (the partitions are schema).
import { assert, describe, it } from "@effect/vitest"
import { ListCallsBody } from "@svc/domain/models/Call.ts"
import { BatchCallId, CallId, OrgId } from "@svc/domain/models/Ids.ts"
import type { CallEnded } from "@svc/domain/ports/Dialer.ts"
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { CallsApiRepo } from "../../src/calls/CallsApiRepo.ts"
import { CallsRepo } from "../../src/calls/CallsRepo.ts"
import { CursorKeys } from "../../src/db/CursorKeys.ts"
import * as SqlErrorMessage from "../../src/db/SqlErrorMessage.ts"
import { CALLS, HistoryPartitions, monthStart } from "../../src/partitions/HistoryPartitions.ts"
import { finishedFromCall } from "../../test-support/FinishedTasks.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const CALL_HIST_APRIL = CallId.make("call_hist_april")

const ORG_D = OrgId.make("org_d")

const DAY = 86_400_000
const RETENTION = 90 * DAY
const options = { retentionMs: RETENTION, aheadMonths: 2, lockTimeoutMs: 5_000 }
const at = (iso: string) => Date.parse(iso)
const listBody = Schema.decodeUnknownSync(ListCallsBody)

const fresh = () =>
  Layer.mergeAll(HistoryPartitions.layer, CallsRepo.layer, CallsApiRepo.layer).pipe(
    Layer.provideMerge(CursorKeys.layer),
    Layer.provideMerge(Layer.fresh(TestDatabase.layer))
  )

const addOrg = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp) VALUES (${orgId}, ${orgId}, 50, 0)`
  )

/** A finished call recorded at `recorded` (the way an import writes one); its id. */
const addCall = (orgId: string, id: string, recorded: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO calls (org_id, call_id, from_number, to_number, call_status, outcome, disconnection_reason,
        start_timestamp, end_timestamp, duration_ms, recorded_timestamp)
      VALUES (${orgId}, ${id}, '+14155550100', '+14155550101', 'ended', 'answered', 'user_hangup', ${recorded},
        ${recorded + 60_000}, 60000, ${recorded})`
    return id
  })

/** Where each call of the org lives: call id -> partition. */
const placement = (orgId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ call_id: string; part: string }>`
      SELECT call_id, tableoid::regclass::text AS part FROM calls WHERE org_id = ${orgId}`
    return new Map(rows.map((r) => [r.call_id, r.part]))
  })

const months = Effect.gen(function*() {
  const partitions = yield* HistoryPartitions
  return (yield* partitions.state(CALLS)).months.map((m) => m.name)
})

describe("calls partitioned by month", () => {
  it.effect(
    "without a retention nothing is partitioned by time: every call stays in the default partition",
    () =>
      Effect.gen(function*() {
        const partitions = yield* HistoryPartitions
        yield* addOrg("org_keep")
        yield* addCall("org_keep", "call_old", at("2020-01-15T00:00:00Z"))
        yield* addCall("org_keep", "call_new", at("2027-03-10T00:00:00Z"))
        for (const now of [at("2027-03-10T00:00:00Z"), at("2040-01-01T00:00:00Z")]) {
          const result = yield* partitions.maintain(CALLS, now, { ...options, retentionMs: undefined })
          assert.deepStrictEqual(result, {
            boundary: undefined,
            created: [],
            dropped: [],
            truncatedDefault: false,
            deferred: []
          })
        }
        const state = yield* partitions.state(CALLS)
        assert.deepStrictEqual(state.months, [])
        assert.strictEqual(state.boundary, undefined)
        assert.deepStrictEqual(
          yield* placement("org_keep"),
          new Map([["call_old", "calls_legacy"], ["call_new", "calls_legacy"]])
        )
      }).pipe(Effect.provide(fresh())),
    { timeout: 60_000 }
  )

  it.effect(
    "with a retention: months are created ahead, old months and the old history go, nothing newer",
    () =>
      Effect.gen(function*() {
        const partitions = yield* HistoryPartitions
        yield* addOrg("org_r")
        // before any maintenance: history in the default partition (the pre-upgrade table)
        yield* addCall("org_r", "call_2026_12", at("2026-12-20T00:00:00Z"))
        yield* addCall("org_r", "call_2027_03_a", at("2027-03-01T00:00:00Z"))

        // first round, 10 March 2027: the boundary is 1 April, then April and May (two months ahead of March)
        const first = yield* partitions.maintain(CALLS, at("2027-03-10T12:00:00Z"), options)
        assert.deepStrictEqual(first, {
          boundary: at("2027-04-01T00:00:00Z"),
          created: ["calls_p2027_04", "calls_p2027_05"],
          dropped: [],
          truncatedDefault: false,
          deferred: []
        })
        const state = yield* partitions.state(CALLS)
        assert.deepStrictEqual(state.boundary, { at: at("2027-04-01T00:00:00Z"), validated: true })
        assert.deepStrictEqual(state.months, [
          { name: "calls_p2027_04", from: at("2027-04-01T00:00:00Z"), to: at("2027-05-01T00:00:00Z") },
          { name: "calls_p2027_05", from: at("2027-05-01T00:00:00Z"), to: at("2027-06-01T00:00:00Z") }
        ])
        // a second round at the same time has nothing to do
        const again = yield* partitions.maintain(CALLS, at("2027-03-10T12:00:00Z"), options)
        assert.deepStrictEqual(again.created, [])
        assert.deepStrictEqual(again.dropped, [])

        // calls recorded from then on land in their month
        yield* addCall("org_r", "call_2027_03_b", at("2027-03-31T23:59:59Z"))
        yield* addCall("org_r", "call_2027_04", at("2027-04-01T00:00:00Z"))
        yield* addCall("org_r", "call_2027_05", at("2027-05-20T00:00:00Z"))
        assert.deepStrictEqual(
          yield* placement("org_r"),
          new Map([
            ["call_2026_12", "calls_legacy"],
            ["call_2027_03_a", "calls_legacy"],
            ["call_2027_03_b", "calls_legacy"],
            ["call_2027_04", "calls_p2027_04"],
            ["call_2027_05", "calls_p2027_05"]
          ])
        )
        // past the partitions created ahead, a call has no partition (the default takes only the time before the
        // boundary): why the scheduler keeps months ahead
        const beyond = yield* Effect.flip(addCall("org_r", "call_far", at("2027-06-01T00:00:00Z")))
        assert.match(SqlErrorMessage.describe(beyond), /violates check constraint "calls_legacy_before_months"/)

        // 1 June: May's end is not yet 90 days old; July and August are created
        const june = yield* partitions.maintain(CALLS, at("2027-06-01T00:00:00Z"), options)
        assert.deepStrictEqual(june.created, ["calls_p2027_06", "calls_p2027_07", "calls_p2027_08"])
        assert.deepStrictEqual(june.dropped, [])
        assert.isFalse(june.truncatedDefault)
        yield* addCall("org_r", "call_2027_06", at("2027-06-15T00:00:00Z"))

        // 31 July: the cutoff is 2 May. April ended before it (dropped), May did not (kept: call_2027_05 was recorded
        // after the cutoff), and the boundary (1 April) is older: the history before it is emptied
        const july = yield* partitions.maintain(CALLS, at("2027-07-31T00:00:00Z"), options)
        assert.deepStrictEqual(july.dropped, ["calls_p2027_04"])
        assert.isTrue(july.truncatedDefault)
        assert.deepStrictEqual(july.created, ["calls_p2027_09"])
        assert.deepStrictEqual(july.deferred, [])
        assert.deepStrictEqual(
          yield* placement("org_r"),
          new Map([["call_2027_05", "calls_p2027_05"], ["call_2027_06", "calls_p2027_06"]])
        )
        assert.deepStrictEqual(yield* months, [
          "calls_p2027_05",
          "calls_p2027_06",
          "calls_p2027_07",
          "calls_p2027_08",
          "calls_p2027_09"
        ])
        // every call recorded after the cutoff is still there, and every call gone was recorded before it
        const cutoff = at("2027-07-31T00:00:00Z") - RETENTION
        assert.isBelow(at("2027-04-01T00:00:00Z"), cutoff)
        assert.isAbove(at("2027-05-20T00:00:00Z"), cutoff)
      }).pipe(Effect.provide(fresh())),
    { timeout: 60_000 }
  )

  it.effect(
    "a month goes in two steps, detached then dropped: a round stopped between them is finished by the next, and a " +
      "month an operator detached by hand is never touched",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const partitions = yield* HistoryPartitions
        yield* addOrg("org_x")
        yield* partitions.maintain(CALLS, at("2027-03-10T12:00:00Z"), options)
        yield* partitions.maintain(CALLS, at("2027-06-01T00:00:00Z"), options)
        yield* addCall("org_x", "call_april", at("2027-04-10T00:00:00Z"))
        yield* addCall("org_x", "call_may", at("2027-05-10T00:00:00Z"))
        // a round that stopped after retention's first step (a worker killed between the two transactions): April
        // detached and renamed, its rows still on disk but no longer part of calls
        yield* sql.unsafe(`ALTER TABLE calls DETACH PARTITION calls_p2027_04`)
        yield* sql.unsafe(`ALTER TABLE calls_p2027_04 RENAME TO calls_p2027_04_expired`)
        // and May detached by an operator (to archive it), under its own name
        yield* sql.unsafe(`ALTER TABLE calls DETACH PARTITION calls_p2027_05`)
        assert.deepStrictEqual((yield* partitions.state(CALLS)).expired, ["calls_p2027_04_expired"])
        assert.deepStrictEqual(yield* placement("org_x"), new Map())

        // 1 June again (nothing is old enough to go): the next round drops the leftover alone
        const next = yield* partitions.maintain(CALLS, at("2027-06-01T00:00:00Z"), options)
        assert.deepStrictEqual(next.dropped, [])
        assert.deepStrictEqual(next.deferred, [])
        const tables = yield* sql<{ name: string }>`
          SELECT relname AS name FROM pg_class WHERE relkind = 'r' AND relname LIKE 'calls_p2027_0%' ORDER BY 1`
        assert.deepStrictEqual(tables.map((t) => t.name), [
          "calls_p2027_05",
          "calls_p2027_06",
          "calls_p2027_07",
          "calls_p2027_08"
        ])
        const [archived] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM calls_p2027_05`
        assert.strictEqual(archived!.n, 1)
        assert.deepStrictEqual((yield* partitions.state(CALLS)).expired, [])
      }).pipe(Effect.provide(fresh())),
    { timeout: 60_000 }
  )

  it.effect(
    "a month partition has the parent's indexes, built before the attach, and fillfactor 40 (decision 0540)",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const partitions = yield* HistoryPartitions
        yield* partitions.maintain(CALLS, at("2027-03-10T12:00:00Z"), options)
        // each index of the month is attached to one of the parent's six: the attach made none of its own
        const indexes = yield* sql<{ name: string; parent: string | null }>`
        SELECT c.relname AS name, p.relname AS parent
        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        LEFT JOIN pg_inherits h ON h.inhrelid = i.indexrelid LEFT JOIN pg_class p ON p.oid = h.inhparent
        WHERE i.indrelid = 'calls_p2027_04'::regclass ORDER BY 1`
        assert.deepStrictEqual(indexes, [
          { name: "calls_p2027_04_agent", parent: "calls_agent_parted" },
          { name: "calls_p2027_04_batch", parent: "calls_batch_parted" },
          { name: "calls_p2027_04_call_id", parent: "calls_call_id_parted" },
          { name: "calls_p2027_04_list", parent: "calls_list_parted" },
          { name: "calls_p2027_04_seq", parent: "calls_seq_parted" },
          { name: "calls_p2027_04_to_number", parent: "calls_to_number_parted" }
        ])
        const [options_] = yield* sql<{ reloptions: Array<string> | null }>`
        SELECT reloptions FROM pg_class WHERE oid = 'calls_p2027_04'::regclass`
        assert.deepStrictEqual(options_!.reloptions, ["fillfactor=40"])
      }).pipe(Effect.provide(fresh())),
    { timeout: 60_000 }
  )

  it.effect(
    "claim, finish, get, update, list and delete work across the months (exactly once, one row a call)",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const partitions = yield* HistoryPartitions
        const calls = yield* CallsRepo
        const api = yield* CallsApiRepo
        yield* partitions.maintain(CALLS, at("2027-03-10T12:00:00Z"), options)
        yield* addOrg("org_d")
        const april = at("2027-04-10T00:00:00Z")
        const may = at("2027-05-10T00:00:00Z")
        // history in two months and in the default partition
        yield* addCall("org_d", "call_hist_march", at("2027-03-20T00:00:00Z"))
        yield* addCall("org_d", "call_hist_april", april - DAY)
        yield* sql`
        INSERT INTO batch_calls (batch_call_id, org_id, api_key_id, from_number, scheduled_timestamp,
          total_task_count, next_dispatch_at, created_timestamp)
        VALUES ('batch_d', 'org_d', 'key', '+14155550100', 0, 4, 0, 0)`
        for (let i = 0; i < 4; i++) {
          yield* sql`INSERT INTO batch_call_tasks (org_id, batch_call_id, task_index, to_number)
          VALUES ('org_d', 'batch_d', ${i}, ${`+1415555020${i}`})`
        }
        const claimAt = (now: number, max: number) =>
          sql<{ task_id: string | null; call_id: string | null; to_number: string | null }>`
          SELECT task_id, call_id, to_number FROM scheduler_claim(1, 'org_d', '1s', 'batch_d', 0, ${max}, 'w1',
            ${now + 60_000}::int8, '+14155550100', ${now}::int8, NULL::int4[])`.pipe(
            Effect.map((rows) => rows.filter((r) => r.task_id !== null))
          )
        // two tasks claimed in April, two in May: their calls are registered in their month
        const inApril = yield* claimAt(april, 2)
        const inMay = yield* claimAt(may, 2)
        assert.strictEqual(inApril.length + inMay.length, 4)
        const where = yield* placement("org_d")
        for (const c of inApril) assert.strictEqual(where.get(c.call_id!), "calls_p2027_04")
        for (const c of inMay) assert.strictEqual(where.get(c.call_id!), "calls_p2027_05")
        // the April calls finish in May: the update finds each row in its month, once
        const ended = (c: { task_id: string | null; call_id: string | null; to_number: string | null }) =>
          finishedFromCall(
            {
              taskId: c.task_id!,
              orgId: ORG_D,
              batchCallId: BatchCallId.make("batch_d"),
              fromNumber: "+14155550100",
              toNumber: c.to_number!
            },
            {
              _tag: "CallEnded",
              idempotency_key: c.task_id!,
              call_id: c.call_id!,
              outcome: "answered",
              start_timestamp: may,
              end_timestamp: may + 60_000,
              duration_ms: 60_000,
              disconnection_reason: "user_hangup",
              analysis: {}
            } satisfies CallEnded
          )
        const all = [...inApril, ...inMay]
        assert.strictEqual((yield* calls.recordFinished(all.map(ended), may + 120_000)).finished, 4)
        // reported again (a reconciler after the worker): nothing more is finished or written
        assert.strictEqual((yield* calls.recordFinished(all.map(ended), may + 180_000)).finished, 0)
        const rows = yield* sql<{ call_id: string; call_status: string; n: number }>`
        SELECT call_id, call_status, count(*) OVER (PARTITION BY call_id)::int4 AS n FROM calls
        WHERE org_id = 'org_d' AND task_id IS NOT NULL`
        assert.strictEqual(rows.length, 4)
        for (const row of rows) {
          assert.strictEqual(row.call_status, "ended")
          assert.strictEqual(row.n, 1)
        }
        assert.deepStrictEqual(yield* placement("org_d"), where)

        // get-call, update-call and delete-call by id, whatever the month
        const april0 = CallId.make(inApril[0]!.call_id!)
        assert.strictEqual((yield* api.get(ORG_D, april0))["call_status"], "ended")
        const updated = yield* api.update(ORG_D, CallId.make("call_hist_march"), { metadata: { k: 1 } }, may)
        assert.deepStrictEqual(updated["metadata"], { k: 1 })
        yield* api.remove(ORG_D, CALL_HIST_APRIL)
        assert.strictEqual((yield* Effect.flip(api.get(ORG_D, CALL_HIST_APRIL)))._tag, "CallNotFound")

        // list-calls pages through all of them in order, across the partitions, with its cursor
        const seen: Array<string> = []
        let key: string | undefined
        for (let page = 0; page < 10; page++) {
          const result = yield* api.list(
            ORG_D,
            listBody({
              limit: 2,
              sort_order: "ascending",
              include_total: true,
              ...(key === undefined ? {} : { pagination_key: key })
            })
          )
          seen.push(...result.items.map((c) => String(c["call_id"])))
          assert.strictEqual(result.total, 5)
          if (result.pagination_key === undefined) break
          key = result.pagination_key
        }
        const expected = yield* sql<{ call_id: string }>`
        SELECT call_id FROM calls WHERE org_id = 'org_d' ORDER BY sort_timestamp, call_id`
        assert.deepStrictEqual(seen, expected.map((r) => r.call_id))
        assert.strictEqual(seen.length, 5)
      }).pipe(Effect.provide(fresh())),
    { timeout: 60_000 }
  )
})

// the months are calendar months in UTC
it("monthStart", () => {
  assert.strictEqual(monthStart(at("2027-03-10T12:00:00Z")), at("2027-03-01T00:00:00Z"))
  assert.strictEqual(monthStart(at("2027-12-31T23:59:59Z"), 1), at("2028-01-01T00:00:00Z"))
  assert.strictEqual(monthStart(at("2028-02-29T00:00:00Z"), -2), at("2027-12-01T00:00:00Z"))
})
