import { assert, layer } from "@effect/vitest"
import { BackfillContactAnalysisDataRequest } from "@svc/domain/models/BackfillJob.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { BackfillRepo } from "../../src/backfill/BackfillRepo.ts"
import { BackfillRunnerRepo, type RunningBackfill } from "../../src/backfill/BackfillRunnerRepo.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

// The backfill job counts finished calls only (issue 13: a call row now exists from the claim, as `registered`,
// then `ongoing`; migration 0012). A call in flight has no analysis yet: counting it would report an item whose
// attributes can never be filled, and fill a contact from a call that has not happened. A run's range ends before
// the org's first call in flight (migration 0015: call_seq never changes), so the next cron run counts it, once,
// when it has finished.

const Layers = Layer.mergeAll(BackfillRepo.layer, BackfillRunnerRepo.layer).pipe(
  Layer.provideMerge(TestDatabase.layer)
)
const NOW = 1_800_000_000_000
const decodeRequest = Schema.decodeUnknownSync(BackfillContactAnalysisDataRequest)
let serial = 0

const seedOrg = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const orgId = OrgId.make(`org_backfill_${++serial}`)
  yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, 'backfill', 0)`
  for (const n of ["+14155550001", "+14155550002", "+14155550003"]) {
    yield* sql`
      INSERT INTO contacts (org_id, contact_id, phone_number, created_timestamp, user_modified_timestamp)
      VALUES (${orgId}, ${`contact_${orgId}_${n}`}, ${n}, 0, 0)`
  }
  return orgId
})

/** A call row as the dispatcher writes it: `registered` at the claim (no start), then `ongoing`, then finished. */
const insertCall = (orgId: OrgId, toNumber: string, status: string, analysis: Record<string, unknown>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const finished = status === "ended"
    const callId = `call_${orgId}_${++serial}`
    yield* sql`
      INSERT INTO calls (org_id, call_id, from_number, to_number, call_status, outcome, disconnection_reason,
        start_timestamp, end_timestamp, duration_ms, analysis, recorded_timestamp)
      VALUES (${orgId}, ${callId}, '+16505550000', ${toNumber}, ${status}, ${finished ? "answered" : null},
        ${finished ? "user_hangup" : null}, ${status === "registered" ? null : NOW - 60_000},
        ${finished ? NOW : null}, ${finished ? 60_000 : null}, ${JSON.stringify(analysis)}::jsonb, ${NOW})`
    return callId
  })

/** Claims the org's job and processes it chunk by chunk to the end; returns the counters. */
const runToIdle = (orgId: OrgId) =>
  Effect.gen(function*() {
    const runner = yield* BackfillRunnerRepo
    const job: RunningBackfill = Option.getOrThrow(yield* runner.claimNext("worker", NOW, 60_000))
    assert.strictEqual(job.orgId, orgId)
    let succeeded = 0
    let failed = 0
    for (let i = 0; i < 20; i++) {
      const chunk = yield* runner.processChunk("worker", job, { now: NOW, leaseMs: 60_000, chunk: 1 })
      assert.isFalse(chunk.lost)
      succeeded += chunk.succeeded
      failed += chunk.failed
      if (chunk.done) return { succeeded, failed }
    }
    return assert.fail("the run did not end")
  })

const customFields = (orgId: OrgId, phoneNumber: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ custom_fields: Record<string, unknown> }>`
      SELECT custom_fields FROM contacts WHERE org_id = ${orgId} AND phone_number = ${phoneNumber}`
    return row!.custom_fields
  })

layer(Layers)("BackfillRunnerRepo and calls in flight", (it) => {
  it.effect("a run stops before the first call in flight: counts no registered or ongoing call, fills nothing from them", () =>
    Effect.gen(function*() {
      const orgId = yield* seedOrg
      yield* insertCall(orgId, "+14155550001", "ended", { score: 1 })
      // in flight, between two finished calls in call_seq order: the run's range covers them
      yield* insertCall(orgId, "+14155550002", "registered", { score: 7 })
      yield* insertCall(orgId, "+14155550003", "ongoing", { score: 8 })
      yield* insertCall(orgId, "+14155550003", "ended", { score: 3 })
      const backfill = yield* BackfillRepo
      yield* backfill.start(orgId, decodeRequest({ backfill_attributes: ["score"] }), "manual")
      // the finished call after the two in flight belongs to a later run (its range stops before them)
      assert.deepStrictEqual(yield* runToIdle(orgId), { succeeded: 1, failed: 0 })
      const status = yield* backfill.status(orgId)
      assert.strictEqual(status.status, "idle")
      assert.strictEqual(status.succeeded, 1)
      assert.strictEqual(status.failed, 0)
      assert.deepStrictEqual(yield* customFields(orgId, "+14155550001"), { score: 1 })
      assert.deepStrictEqual(yield* customFields(orgId, "+14155550002"), {})
      assert.deepStrictEqual(yield* customFields(orgId, "+14155550003"), {})
    }))

  it.effect("a call that finishes after a run is counted once, by the next cron run", () =>
    Effect.gen(function*() {
      const orgId = yield* seedOrg
      yield* insertCall(orgId, "+14155550001", "ended", { score: 1 })
      const ringing = yield* insertCall(orgId, "+14155550002", "ongoing", {})
      const backfill = yield* BackfillRepo
      const request = decodeRequest({ backfill_attributes: ["score"] })
      yield* backfill.start(orgId, request, "manual")
      assert.deepStrictEqual(yield* runToIdle(orgId), { succeeded: 1, failed: 0 })
      // it finishes as CallsRepo.recordFinished writes it: its result, call_seq unchanged (migration 0015)
      const sql = yield* SqlClient.SqlClient
      yield* sql`
        UPDATE calls SET call_status = 'ended', outcome = 'answered', disconnection_reason = 'user_hangup',
          end_timestamp = ${NOW}, duration_ms = 60000, analysis = '{"score": 5}'::jsonb
        WHERE org_id = ${orgId} AND call_id = ${ringing}`
      yield* backfill.start(orgId, request, "cron")
      assert.deepStrictEqual(yield* runToIdle(orgId), { succeeded: 1, failed: 0 })
      assert.deepStrictEqual(yield* customFields(orgId, "+14155550002"), { score: 5 })
      // and a later cron run has nothing left to count
      yield* backfill.start(orgId, request, "cron")
      assert.deepStrictEqual(yield* runToIdle(orgId), { succeeded: 0, failed: 0 })
    }))
})
