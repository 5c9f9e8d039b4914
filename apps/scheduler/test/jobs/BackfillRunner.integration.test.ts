import { assert, describe, it } from "@effect/vitest"
import { BackfillContactAnalysisDataRequest } from "@svc/domain/models/BackfillJob.ts"
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { BackfillRepo } from "@svc/store/backfill/BackfillRepo.ts"
import { BackfillRunnerRepo } from "@svc/store/backfill/BackfillRunnerRepo.ts"
import { Effect, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as BackfillCron from "../../src/jobs/BackfillCron.ts"
import { BackfillRunner } from "../../src/jobs/BackfillRunner.ts"
import * as SchedulerConfig from "../../src/runtime/SchedulerConfig.ts"
import { addContact, customFieldsOf, freshNumber, insertCall, isolated, seedOrg } from "../fixtures/Fixtures.ts"

const T0 = Date.UTC(2026, 5, 1, 12, 0)
const decodeRequest = Schema.decodeUnknownSync(BackfillContactAnalysisDataRequest)

/** Calls for the filter below: which match, which have a contact, and the values the contacts should end with. */
const seedCalls = (orgId: OrgId) =>
  Effect.gen(function*() {
    const [ann, bob, cat, gone] = [freshNumber(), freshNumber(), freshNumber(), freshNumber()]
    yield* addContact(orgId, ann)
    yield* addContact(orgId, bob)
    yield* addContact(orgId, cat)
    // matching: agent_a version 1, or agent_b any version; started at or after T0 - 10 days
    const from = T0 - 10 * 86_400_000
    const matching = [
      { toNumber: ann, agentId: "agent_a", agentVersion: 1, startTimestamp: from, analysis: { sentiment: "Negative" } },
      { toNumber: bob, agentId: "agent_b", agentVersion: 3, startTimestamp: from + 1, analysis: { score: 4 } },
      // no contact has this number: the call fails
      { toNumber: gone, agentId: "agent_b", agentVersion: 1, startTimestamp: from + 2, analysis: { sentiment: "Up" } },
      {
        toNumber: ann,
        agentId: "agent_a",
        agentVersion: 1,
        startTimestamp: from + 3,
        analysis: { sentiment: "Positive", score: 5, notes: { nested: true } }
      },
      // matches, but has none of the attributes: processed, nothing to fill
      { toNumber: cat, agentId: "agent_b", agentVersion: 2, startTimestamp: from + 4, analysis: {} },
      { toNumber: bob, agentId: "agent_a", agentVersion: 1, startTimestamp: from + 5, analysis: { booked: true } },
      { toNumber: cat, agentId: "agent_a", agentVersion: 1, startTimestamp: from + 6, analysis: { score: 2 } }
    ]
    const other = [
      // agent_a version 2 is not asked for
      { toNumber: cat, agentId: "agent_a", agentVersion: 2, startTimestamp: from + 7, analysis: { score: 9 } },
      // too early
      { toNumber: bob, agentId: "agent_b", agentVersion: 1, startTimestamp: from - 1, analysis: { score: 9 } },
      // no agent known
      { toNumber: ann, startTimestamp: from + 8, analysis: { score: 9 } }
    ]
    // interleaved in recording order
    for (let i = 0; i < Math.max(matching.length, other.length); i++) {
      if (matching[i] !== undefined) yield* insertCall(orgId, matching[i]!)
      if (other[i] !== undefined) yield* insertCall(orgId, other[i]!)
    }
    return { ann, bob, cat, gone, matching: matching.length, failed: 1, from }
  })

const request = (from: number) =>
  decodeRequest({
    backfill_attributes: ["sentiment", "score", "booked", "notes"],
    backfill_call_filter: {
      agent: [{ agent_id: "agent_a", version: [1] }, { agent_id: "agent_b" }],
      start_timestamp: { type: "number", op: "ge", value: from }
    }
  })

const layers = <A, E, R>(self: Effect.Effect<A, E, R>) => self.pipe(Effect.provide(BackfillRepo.layer), isolated)

describe("BackfillRunner", () => {
  it.live("runs a queued job to idle, counting every matching call once and filling the attributes", () =>
    layers(Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const orgId = yield* seedOrg()
      const seeded = yield* seedCalls(orgId)
      const backfill = yield* BackfillRepo
      assert.strictEqual((yield* backfill.start(orgId, request(seeded.from), "manual")).status, "queued")
      const runner = yield* BackfillRunner.make(SchedulerConfig.defaults({ backfillChunk: 2 }))
      const report = yield* runner.runNext
      assert.deepStrictEqual(Option.getOrUndefined(report), {
        orgId,
        succeeded: seeded.matching - seeded.failed,
        failed: seeded.failed,
        finished: true
      })
      const status = yield* backfill.status(orgId)
      assert.deepStrictEqual([status.status, status.succeeded, status.failed, status.triggered_by], [
        "idle",
        seeded.matching - seeded.failed,
        seeded.failed,
        "manual"
      ])
      // per attribute, the latest matching call that has a scalar value for it
      assert.deepStrictEqual(yield* customFieldsOf(orgId, seeded.ann), { sentiment: "Positive", score: 5 })
      assert.deepStrictEqual(yield* customFieldsOf(orgId, seeded.bob), { score: 4, booked: true })
      assert.deepStrictEqual(yield* customFieldsOf(orgId, seeded.cat), { score: 2 })
      assert.isTrue(Option.isNone(yield* runner.runNext))
    })))

  it.live("survives a worker dying mid-job: another resumes after the last committed chunk, without double counting", () =>
    layers(Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const orgId = yield* seedOrg()
      const seeded = yield* seedCalls(orgId)
      const backfill = yield* BackfillRepo
      yield* backfill.start(orgId, request(seeded.from), "manual")
      const repo = yield* BackfillRunnerRepo

      // worker A takes the job and commits one chunk of 3 calls, then dies
      const job = Option.getOrThrow(yield* repo.claimNext("worker-a", T0, 30_000))
      const first = yield* repo.processChunk("worker-a", job, { now: T0, leaseMs: 30_000, chunk: 3 })
      assert.isFalse(first.done)
      // the status endpoint shows the progress while the job runs
      const running = yield* backfill.status(orgId)
      assert.deepStrictEqual([running.status, running.succeeded + running.failed], ["running", 3])

      // while A's lease runs, no one else takes the job
      const b = yield* BackfillRunner.make(SchedulerConfig.defaults({ workerId: "worker-b", backfillChunk: 3 }))
      assert.isTrue(Option.isNone(yield* b.runNext))
      yield* TestClock.adjust(30_001)
      const resumed = Option.getOrThrow(yield* b.runNext)
      assert.strictEqual(resumed.succeeded + resumed.failed, seeded.matching - 3)

      // A wakes up and tries its next chunk: it no longer holds the job and changes nothing
      const late = yield* repo.processChunk("worker-a", job, { now: T0 + 31_000, leaseMs: 30_000, chunk: 3 })
      assert.isTrue(late.lost)
      const status = yield* backfill.status(orgId)
      assert.deepStrictEqual([status.status, status.succeeded, status.failed], [
        "idle",
        seeded.matching - seeded.failed,
        seeded.failed
      ])
      assert.deepStrictEqual(yield* customFieldsOf(orgId, seeded.ann), { sentiment: "Positive", score: 5 })
      assert.deepStrictEqual(yield* customFieldsOf(orgId, seeded.cat), { score: 2 })
    })))

  it.live("a call in flight holds a run's range back; the next sync counts it once it has ended, never twice", () =>
    layers(Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg()
      const [ann, bob, cat] = [freshNumber(), freshNumber(), freshNumber()]
      for (const n of [ann, bob, cat]) yield* addContact(orgId, n)
      const attributes = decodeRequest({ backfill_attributes: ["score"] })
      yield* insertCall(orgId, { toNumber: ann, startTimestamp: T0, analysis: { score: 1 } })
      // a call the claim registered and the dialer has not finished: its call_seq (registration order) never
      // changes when it ends (migration 0015), so no range may pass it while it is in flight
      const ringing = `call_ringing_${orgId}`
      yield* sql`
        INSERT INTO calls (org_id, call_id, from_number, to_number, call_status, recorded_timestamp,
          registered_timestamp)
        VALUES (${orgId}, ${ringing}, '+14155550100', ${bob}, 'registered', ${T0}, ${T0})`
      yield* insertCall(orgId, { toNumber: cat, startTimestamp: T0, analysis: { score: 3 } })

      const backfill = yield* BackfillRepo
      yield* backfill.start(orgId, attributes, "manual")
      const runner = yield* BackfillRunner.make(SchedulerConfig.defaults())
      yield* runner.runNext
      // only the call before the one in flight: the one after it waits for the next run with it
      const manual = yield* backfill.status(orgId)
      assert.deepStrictEqual([manual.status, manual.succeeded, manual.failed], ["idle", 1, 0])
      assert.deepStrictEqual(yield* customFieldsOf(orgId, ann), { score: 1 })
      assert.deepStrictEqual(yield* customFieldsOf(orgId, cat), {})

      // a sync while it still rings covers nothing past it
      const tick = T0 + 3_600_000
      yield* TestClock.setTime(tick)
      yield* BackfillCron.runTick(SchedulerConfig.defaults(), tick)
      yield* runner.runNext
      assert.deepStrictEqual((yield* backfill.status(orgId)).succeeded, 0)

      // it ends (as recordFinished ends it: same row, same call_seq); the next sync counts it and the call after it
      yield* sql`
        UPDATE calls SET call_status = 'ended', outcome = 'answered', disconnection_reason = 'user_hangup',
          start_timestamp = ${T0 + 1_000}, end_timestamp = ${T0 + 61_000}, duration_ms = 60000,
          analysis = '{"score": 2}'::jsonb
        WHERE org_id = ${orgId} AND call_id = ${ringing}`
      const tick2 = tick + 3_600_000
      yield* TestClock.setTime(tick2)
      yield* BackfillCron.runTick(SchedulerConfig.defaults(), tick2)
      yield* runner.runNext
      const synced = yield* backfill.status(orgId)
      assert.deepStrictEqual([synced.status, synced.succeeded, synced.failed], ["idle", 2, 0])
      assert.deepStrictEqual(yield* customFieldsOf(orgId, bob), { score: 2 })
      assert.deepStrictEqual(yield* customFieldsOf(orgId, cat), { score: 3 })

      // and no later sync counts any of them again
      const tick3 = tick2 + 3_600_000
      yield* TestClock.setTime(tick3)
      yield* BackfillCron.runTick(SchedulerConfig.defaults(), tick3)
      yield* runner.runNext
      assert.deepStrictEqual((yield* backfill.status(orgId)).succeeded, 0)
    })))

  it.live("a cron tick queues idle jobs once across workers, and the sync covers only calls since the last run", () =>
    layers(Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const orgId = yield* seedOrg()
      const seeded = yield* seedCalls(orgId)
      const backfill = yield* BackfillRepo
      yield* backfill.start(orgId, request(seeded.from), "manual")
      const runner = yield* BackfillRunner.make(SchedulerConfig.defaults())
      yield* runner.runNext
      // two more calls after the manual run: one matching, one not
      yield* insertCall(orgId, {
        toNumber: seeded.bob,
        agentId: "agent_b",
        agentVersion: 1,
        startTimestamp: T0,
        analysis: { score: 1 }
      })
      yield* insertCall(orgId, { toNumber: seeded.bob, agentId: "agent_c", startTimestamp: T0, analysis: { score: 0 } })

      // three workers reach the same tick at once: exactly one runs it
      const tick = T0 + 3_600_000
      yield* TestClock.setTime(tick)
      const results = yield* Effect.all(
        ["w1", "w2", "w3"].map((workerId) => BackfillCron.runTick(SchedulerConfig.defaults({ workerId }), tick)),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(results.map((r) => r.won).filter(Boolean).length, 1)
      assert.strictEqual(results.find((r) => r.won)!.queued, 1)
      // a late worker does not run it again
      assert.isFalse((yield* BackfillCron.runTick(SchedulerConfig.defaults({ workerId: "w4" }), tick)).won)
      const queued = yield* backfill.status(orgId)
      assert.deepStrictEqual([queued.status, queued.triggered_by, queued.succeeded], ["queued", "cron", 0])

      yield* runner.runNext
      const synced = yield* backfill.status(orgId)
      assert.deepStrictEqual([synced.status, synced.succeeded, synced.failed, synced.triggered_by], [
        "idle",
        1,
        0,
        "cron"
      ])
      assert.deepStrictEqual(yield* customFieldsOf(orgId, seeded.bob), { score: 1, booked: true })
      const sql = yield* SqlClient.SqlClient
      const ticks = yield* sql`SELECT worker FROM scheduler_cron_ticks WHERE tick_timestamp = ${tick}`
      assert.strictEqual(ticks.length, 1)
    })))
})
