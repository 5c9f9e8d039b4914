import { assert, layer } from "@effect/vitest"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { type BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { BatchCallsRepo } from "../../src/batches/BatchCallsRepo.ts"
import { CallsRepo } from "../../src/calls/CallsRepo.ts"
import { type BatchLegality, DispatchRepo } from "../../src/dispatch/DispatchRepo.ts"
import { PredialRepo } from "../../src/predial/PredialRepo.ts"
import { WebhooksRepo } from "../../src/webhooks/WebhooksRepo.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

// Pre-dial settings and the undo of an attempt the check did not allow (decision 0553): after the undo the task reads
// as if the attempt had never been claimed (attempts, call row, call id, attempt-cap record), then refused or waiting.

const Layers = Layer.mergeAll(
  BatchCallsRepo.layer,
  DispatchRepo.layer,
  CallsRepo.layer,
  PredialRepo.layer,
  WebhooksRepo.layer
).pipe(Layer.provideMerge(TestDatabase.layer))

const NOW = Date.parse("2026-12-01T15:00:00Z")
const FROM = "+14155550100"
const LEASE_MS = 30_000
let orgs = 0
let numbers = 0
let keys = 0

/** A Miami number (FL caps attempts per 24 h: decision 0624), unique per test. */
const miami = () => `+1305555${String(1000 + ++numbers).padStart(4, "0")}`

/** An org with a webhook (secret, URL) so that the outbox trigger runs for its calls. */
const seedOrg = (options: { readonly secret?: boolean } = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const orgId = OrgId.make(`org_predial_${process.pid}_${++orgs}`)
    yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
               VALUES (${orgId}, 'predial', 20, 0)`
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, ${FROM}, 0)`
    if (options.secret !== false) {
      const webhooks = yield* WebhooksRepo
      yield* webhooks.createSecret(orgId, 0, 0).pipe(Effect.orDie)
      yield* webhooks.setOrgWebhook(orgId, "https://hooks.example.com/calls", undefined, 0).pipe(Effect.orDie)
    }
    return orgId
  })

const seedBatch = (orgId: OrgId, numbers: ReadonlyArray<string>, body: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const batch = yield* (yield* BatchCallsRepo).create(
      orgId,
      `key_${++keys}`,
      Schema.decodeUnknownSync(CreateBatchCallRequest)({
        from_number: FROM,
        tasks: numbers.map((to_number) => ({ to_number })),
        ...body
      }),
      { maxTasks: 100, legalGrouper: () => new LegalGrouper() }
    ).pipe(Effect.orDie)
    return batch.batch_call_id
  })

/** Every group legal, the FL group capped at 3 (as the dispatcher passes them). */
const legalityOf = (batchCallId: BatchCallId) =>
  Effect.gen(function*() {
    const groups = yield* (yield* DispatchRepo).legalGroups([batchCallId])
    return new Map<string, BatchLegality>([[batchCallId, {
      legal: groups.map((g) => g.group),
      blocked: [],
      caps: groups.filter((g) => g.ruleIds.includes("FL")).map((g) => ({ group: g.group, limit: 3, label: "FL 3" }))
    }]])
  })

const claim = (orgId: OrgId, batchCallId: BatchCallId, now: number, owner = "w1") =>
  Effect.gen(function*() {
    const repo = yield* DispatchRepo
    const due = (yield* repo.findDue(now, 500)).due.filter((b) => b.batchCallId === batchCallId)
    const result = yield* repo.claim(orgId, due, {
      owner,
      now,
      leaseMs: LEASE_MS,
      maxPerBatch: 10,
      legal: yield* legalityOf(batchCallId)
    })
    return result.claimed
  })

interface TaskRow {
  readonly task_id: string
  readonly state: string
  readonly state_reason: string | null
  readonly attempts: number
  readonly retry_attempt: number
  readonly call_id: string | null
  readonly not_before: number | null
  readonly lease_owner: string | null
}

const taskOf = (batchCallId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<TaskRow>`
      SELECT task_id::text AS task_id, state, state_reason, attempts, retry_attempt, call_id,
        not_before::float8 AS not_before, lease_owner
      FROM batch_call_tasks WHERE batch_call_id = ${batchCallId} ORDER BY task_index LIMIT 1`
    return row!
  })

const callsOf = (orgId: OrgId) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ call_id: string; call_status: string }>`
      SELECT call_id, call_status FROM calls WHERE org_id = ${orgId} ORDER BY call_seq`
  })

const counts = (orgId: OrgId, toNumber: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ attempts: number; events: number }>`
      SELECT (SELECT count(*)::int4 FROM number_attempts WHERE org_id = ${orgId} AND to_number = ${toNumber})
          AS attempts,
        (SELECT count(*)::int4 FROM webhook_events WHERE org_id = ${orgId}) AS events`
    return row!
  })

const svcCallId = (taskId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ id: string }>`SELECT svc_call_id(${taskId}::int8) AS id`
    return row!.id
  })

layer(Layers, { timeout: 120_000 })("PredialRepo", (it) => {
  it.effect("sets, reads and clears an org's webhook; refuses bad URLs and timeouts, unknown orgs, orgs with no secret", () =>
    Effect.gen(function*() {
      const repo = yield* PredialRepo
      const orgId = yield* seedOrg()
      const bare = yield* seedOrg({ secret: false })
      const refusal = (url: string, timeout: number, org = orgId) =>
        Effect.flip(repo.set(org, url, timeout, NOW)).pipe(Effect.map((e) => e.message))
      assert.include(yield* refusal("ftp://x.example.com/", 1_000), "must use http or https")
      assert.include(yield* refusal("https://user:pw@x.example.com/", 1_000), "must not contain credentials")
      assert.include(yield* refusal("not a url", 1_000), "not an absolute URL")
      assert.include(yield* refusal("https://x.example.com/", 99), "from 100 to 10000")
      assert.include(yield* refusal("https://x.example.com/", 10_001), "from 100 to 10000")
      assert.include(yield* refusal("https://x.example.com/", 1.5), "whole number")
      assert.include(yield* refusal("https://x.example.com/", 1_000, OrgId.make("org_nope")), "no org org_nope")
      assert.include(yield* refusal("https://x.example.com/", 1_000, bare), "has no webhook secret")
      assert.isUndefined(yield* repo.get(orgId))
      assert.deepStrictEqual(yield* repo.set(orgId, "https://x.example.com/check", 2_000, NOW), {
        predial_webhook_url: "https://x.example.com/check",
        timeout_ms: 2_000
      })
      yield* repo.set(orgId, "https://y.example.com/check", 500, NOW)
      assert.deepStrictEqual(yield* repo.get(orgId), {
        predial_webhook_url: "https://y.example.com/check",
        timeout_ms: 500
      })
      const target = (yield* repo.targets(NOW)).find((t) => t.orgId === orgId)
      assert.strictEqual(target?.url, "https://y.example.com/check")
      assert.strictEqual(target?.secrets.length, 1)
      assert.isTrue(yield* repo.clear(orgId))
      assert.isFalse(yield* repo.clear(orgId))
      assert.isUndefined((yield* repo.targets(NOW)).find((t) => t.orgId === orgId))
    }))

  it.effect("a target carries the secret signing now and a newer one in its grace period, not older ones", () =>
    Effect.gen(function*() {
      const repo = yield* PredialRepo
      const webhooks = yield* WebhooksRepo
      const orgId = yield* seedOrg()
      // the first secret signs from 0; a second replaced it at NOW - 1; a third signs from NOW + 1 h
      const second = yield* webhooks.createSecret(orgId, NOW - 1, 0).pipe(Effect.orDie)
      const third = yield* webhooks.createSecret(orgId, 3_600_000, NOW).pipe(Effect.orDie)
      yield* repo.set(orgId, "https://x.example.com/check", 1_000, NOW)
      const target = (yield* repo.targets(NOW)).find((t) => t.orgId === orgId)!
      assert.deepStrictEqual(target.secrets, [
        { secret: second, activeFrom: NOW - 1 },
        { secret: third, activeFrom: NOW + 3_600_000 }
      ])
    }))

  it.effect("an unavailable check puts a first attempt back as never claimed, waiting with its batch until not_before", () =>
    Effect.gen(function*() {
      const repo = yield* PredialRepo
      const orgId = yield* seedOrg()
      const number = miami()
      const batch = yield* seedBatch(orgId, [number])
      const before = yield* counts(orgId, number)
      const [task] = yield* claim(orgId, batch, NOW)
      const claimed = yield* taskOf(batch)
      assert.strictEqual(claimed.state, "dialling")
      assert.strictEqual(claimed.attempts, 1)
      assert.deepStrictEqual(yield* callsOf(orgId), [{ call_id: claimed.call_id!, call_status: "registered" }])
      // the claim counted the FL attempt and enqueued no webhook event for the registered call
      assert.deepStrictEqual(yield* counts(orgId, number), { attempts: before.attempts + 1, events: 0 })

      const notBefore = NOW + 4_000
      const undone = yield* repo.undo(
        "w1",
        { taskId: task!.taskId, orgId, claimedAt: NOW },
        { _tag: "Unavailable", notBefore },
        NOW + 100
      )
      assert.strictEqual(undone, batch)
      const after = yield* taskOf(batch)
      assert.deepStrictEqual(after, {
        task_id: task!.taskId,
        state: "pending",
        state_reason: "predial_unavailable",
        attempts: 0,
        retry_attempt: 1,
        call_id: null,
        not_before: notBefore,
        lease_owner: null
      })
      assert.deepStrictEqual(yield* callsOf(orgId), [])
      assert.deepStrictEqual(yield* counts(orgId, number), before)
      const sql = yield* SqlClient.SqlClient
      const [b] = yield* sql<{ next_dispatch_at: number }>`
        SELECT next_dispatch_at::float8 AS next_dispatch_at FROM batch_calls WHERE batch_call_id = ${batch}`
      assert.strictEqual(b!.next_dispatch_at, notBefore)

      // nothing of the batch is due before not_before; at it, the task is claimed again as a first claim is
      assert.deepStrictEqual(yield* claim(orgId, batch, notBefore - 1), [])
      const again = yield* claim(orgId, batch, notBefore)
      assert.strictEqual(again[0]?.taskId, task!.taskId)
      const reclaimed = yield* taskOf(batch)
      assert.strictEqual(reclaimed.attempts, 1)
      assert.strictEqual(reclaimed.call_id, yield* svcCallId(task!.taskId))
      assert.deepStrictEqual(yield* callsOf(orgId), [{ call_id: reclaimed.call_id!, call_status: "registered" }])
      assert.strictEqual((yield* counts(orgId, number)).attempts, before.attempts + 1)
    }))

  it.effect("a refusal ends the task skipped with the receiver's reason, with no call and no counted attempt", () =>
    Effect.gen(function*() {
      const repo = yield* PredialRepo
      const orgId = yield* seedOrg()
      const number = miami()
      const batch = yield* seedBatch(orgId, [number])
      const [task] = yield* claim(orgId, batch, NOW)
      const undone = yield* repo.undo(
        "w1",
        { taskId: task!.taskId, orgId, claimedAt: NOW },
        { _tag: "Refused", reason: "customer asked not to be called" },
        NOW + 100
      )
      assert.strictEqual(undone, batch)
      const after = yield* taskOf(batch)
      assert.strictEqual(after.state, "skipped")
      assert.strictEqual(after.state_reason, "predial_refused: customer asked not to be called")
      assert.strictEqual(after.attempts, 0)
      assert.isNull(after.call_id)
      assert.isNull(after.not_before)
      assert.deepStrictEqual(yield* callsOf(orgId), [])
      assert.deepStrictEqual(yield* counts(orgId, number), { attempts: 0, events: 0 })
      // the batch's only task is final: it completes
      assert.deepStrictEqual(yield* (yield* DispatchRepo).completeIfDone([batch]), [batch])
    }))

  it.effect("undoing a retry's attempt keeps the earlier call and points the task back at it", () =>
    Effect.gen(function*() {
      const repo = yield* PredialRepo
      const orgId = yield* seedOrg()
      const number = miami()
      const batch = yield* seedBatch(orgId, [number], {
        retry_policy: { max_retries: 1, retry_on: ["no_answer"], min_spacing_ms: 60_000 }
      })
      const [first] = yield* claim(orgId, batch, NOW)
      const firstCall = first!.request.call_id
      yield* (yield* CallsRepo).recordFinished([{
        taskId: first!.taskId,
        orgId,
        batchCallId: batch,
        fromNumber: FROM,
        toNumber: number,
        state: "completed",
        reason: "no_answer",
        call: {
          _tag: "CallEnded",
          idempotency_key: first!.taskId,
          call_id: firstCall,
          outcome: "no_answer",
          start_timestamp: NOW,
          end_timestamp: NOW + 30_000,
          duration_ms: 30_000,
          disconnection_reason: "dial_no_answer",
          analysis: {}
        }
      }], NOW + 30_000)
      const retryAt = NOW + 90_000
      const [retry] = yield* claim(orgId, batch, retryAt)
      assert.strictEqual(retry?.request.idempotency_key, `${first!.taskId}:2`)
      assert.notStrictEqual(retry!.request.call_id, firstCall)
      const attemptsBefore = (yield* counts(orgId, number)).attempts
      yield* repo.undo(
        "w1",
        { taskId: retry!.taskId, orgId, claimedAt: retryAt },
        { _tag: "Unavailable", notBefore: retryAt + 1_000 },
        retryAt
      )
      const after = yield* taskOf(batch)
      assert.strictEqual(after.state, "pending")
      assert.strictEqual(after.retry_attempt, 2)
      assert.strictEqual(after.attempts, 0)
      assert.strictEqual(after.call_id, firstCall)
      assert.deepStrictEqual(yield* callsOf(orgId), [{ call_id: firstCall, call_status: "not_connected" }])
      // only the retry's claim record went: the first call still counts against the cap
      assert.strictEqual((yield* counts(orgId, number)).attempts, attemptsBefore - 1)
      assert.strictEqual(attemptsBefore - 1, 1)
    }))

  it.effect("does nothing to a task no longer dialling under the worker's lease", () =>
    Effect.gen(function*() {
      const repo = yield* PredialRepo
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg()
      const batch = yield* seedBatch(orgId, [miami()])
      const [task] = yield* claim(orgId, batch, NOW)
      const attempt = { taskId: task!.taskId, orgId, claimedAt: NOW }
      // another worker's lease: not this worker's to undo
      assert.isUndefined(yield* repo.undo("w2", attempt, { _tag: "Refused", reason: "x" }, NOW))
      // the lease expired into unknown: the reconciler's
      yield* sql`UPDATE batch_call_tasks SET state = 'unknown' WHERE task_id = ${task!.taskId}::int8`
      assert.isUndefined(yield* repo.undo("w1", attempt, { _tag: "Refused", reason: "x" }, NOW))
      const after = yield* taskOf(batch)
      assert.strictEqual(after.state, "unknown")
      assert.strictEqual(after.attempts, 1)
      assert.strictEqual((yield* callsOf(orgId)).length, 1)
    }))
})
