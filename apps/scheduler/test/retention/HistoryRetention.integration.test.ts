// History retention (apps/scheduler/src/retention/HistoryRetention.ts; decision 0442): the worker's own loop, woken
// by the TestClock month after month with SVC_RETENTION_CALLS_DAYS=90, keeps calls' month partitions two months
// ahead and drops a month once it ended 90 days ago, with the history from before the partitions; nothing newer is
// touched. Real PostgreSQL.
import { assert, describe, it } from "@effect/vitest"
import { makeSleepWatch, waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import { CALLS, HistoryPartitions } from "@svc/store/partitions/HistoryPartitions.ts"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as HistoryRetention from "../../src/retention/HistoryRetention.ts"
import * as RetentionConfig from "../../src/retention/RetentionConfig.ts"
import { DatabaseHealth } from "../../src/runtime/DatabaseHealth.ts"
import { isolated, seedOrg } from "../fixtures/Fixtures.ts"

const DAY = 86_400_000
const at = (iso: string) => Date.parse(iso)
// a round every 31 days of the clock: each one falls in a new calendar month, so each creates one partition
const STEP = 31 * DAY

describe("HistoryRetention", () => {
  it.live(
    "creates months ahead and drops what ended the retention ago, on the clock's schedule",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const partitions = yield* HistoryPartitions
        yield* TestClock.setTime(at("2027-03-10T12:00:00Z"))
        const orgId = yield* seedOrg()
        const call = (id: string, recorded: number) =>
          sql`INSERT INTO calls (org_id, call_id, from_number, to_number, call_status, recorded_timestamp)
          VALUES (${orgId}, ${id}, '+14155550100', '+14155550101', 'ended', ${recorded})`
        const calls = Effect.map(
          sql<{ call_id: string }>`SELECT call_id FROM calls WHERE org_id = ${orgId} ORDER BY call_id`,
          (rows) => rows.map((r) => r.call_id)
        )
        let months: ReadonlyArray<string> = []
        const monthsAre = (expected: ReadonlyArray<string>) =>
          waitUntil(
            `the partitions ${expected.join(", ")}`,
            Effect.map(partitions.state(CALLS), (s) => {
              months = s.months.map((m) => m.name)
              return months.join() === expected.join()
            }),
            { state: () => months }
          )
        yield* call("a_history", at("2027-02-01T00:00:00Z"))

        const settings = RetentionConfig.defaults({ callsMs: 90 * DAY, aheadMonths: 2, everyMs: STEP })
        // the clock moves only once the loop sleeps: a round still running when it moved would sleep from the later
        // time and miss its wake-up
        const sleeps = makeSleepWatch()
        const nextRound = Effect.andThen(
          waitUntil("the retention loop asleep between rounds", Effect.sync(() => sleeps.sleeping(STEP) === 1), {
            state: sleeps.snapshot
          }),
          TestClock.adjust(STEP)
        )
        yield* Effect.forkScoped(
          HistoryRetention.loop(settings).pipe(sleeps.watch, Effect.provide(DatabaseHealth.layer))
        )
        // the first round runs at once: the boundary is 1 April, and April and May exist
        yield* monthsAre(["calls_p2027_04", "calls_p2027_05"])
        yield* call("b_april", at("2027-04-15T00:00:00Z"))
        yield* call("c_may", at("2027-05-20T00:00:00Z"))

        // 10 April, 11 May, 11 June: one more month ahead each round, nothing old enough to drop
        const ahead = ["calls_p2027_06", "calls_p2027_07", "calls_p2027_08", "calls_p2027_09"]
        for (let i = 0; i < 3; i++) {
          yield* nextRound
          yield* monthsAre(["calls_p2027_04", "calls_p2027_05", ...ahead.slice(0, i + 1)])
          if (i === 1) yield* call("d_june", at("2027-06-02T00:00:00Z"))
        }
        assert.deepStrictEqual(yield* calls, ["a_history", "b_april", "c_may", "d_june"])

        // 12 July: the cutoff is 13 April. The history before the boundary (1 April) is all older: emptied. April
        // ends 1 May, after the cutoff: kept, with its call
        yield* nextRound
        yield* monthsAre(["calls_p2027_04", "calls_p2027_05", ...ahead])
        yield* waitUntil(
          "the history before the boundary emptied",
          Effect.map(calls, (ids) => !ids.includes("a_history"))
        )
        assert.deepStrictEqual(yield* calls, ["b_april", "c_may", "d_june"])

        // 12 August: the cutoff is 14 May. April ended before it and goes; May ended after it and stays, with its call
        // of 20 May (after the cutoff) and everything newer
        yield* nextRound
        yield* monthsAre([
          "calls_p2027_05",
          "calls_p2027_06",
          "calls_p2027_07",
          "calls_p2027_08",
          "calls_p2027_09",
          "calls_p2027_10"
        ])
        assert.deepStrictEqual(yield* calls, ["c_may", "d_june"])
      }).pipe(Effect.provide(HistoryPartitions.layer), isolated),
    120_000
  )

  it.live(
    "without SVC_RETENTION_CALLS_DAYS nothing is partitioned or dropped, however much time passes",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const partitions = yield* HistoryPartitions
        yield* TestClock.setTime(at("2027-03-10T12:00:00Z"))
        const orgId = yield* seedOrg()
        yield* sql`INSERT INTO calls (org_id, call_id, from_number, to_number, call_status, recorded_timestamp)
        VALUES (${orgId}, 'old', '+14155550100', '+14155550101', 'ended', ${at("2020-01-01T00:00:00Z")})`
        const settings = RetentionConfig.defaults({ everyMs: STEP })
        let rounds = 0
        const counted = HistoryRetention.round(settings).pipe(Effect.tap(() => Effect.sync(() => rounds++)))
        // the loop's round, run at three clock times years apart (the round is what the loop runs)
        for (const time of ["2027-03-10T12:00:00Z", "2031-01-01T00:00:00Z", "2040-06-01T00:00:00Z"]) {
          yield* TestClock.setTime(at(time))
          const done = yield* counted
          assert.deepStrictEqual(done.created, [])
          assert.deepStrictEqual(done.dropped, [])
          assert.isFalse(done.truncatedDefault)
        }
        assert.strictEqual(rounds, 3)
        const state = yield* partitions.state(CALLS)
        assert.deepStrictEqual(state.months, [])
        assert.strictEqual(state.boundary, undefined)
        const [left] = yield* sql<{ n: number }>`SELECT count(*)::int4 AS n FROM calls WHERE org_id = ${orgId}`
        assert.strictEqual(left!.n, 1)
      }).pipe(Effect.provide(HistoryPartitions.layer), isolated),
    60_000
  )
})
