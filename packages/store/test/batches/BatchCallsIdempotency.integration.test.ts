import { assert, layer } from "@effect/vitest"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { BatchCallTask } from "@svc/domain/models/BatchCallTask.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Deferred, Effect, Fiber, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { BatchCallsRepo, IDEMPOTENCY_KEY_TTL_MS, RETRY_WINDOW_MS } from "../../src/batches/BatchCallsRepo.ts"
import { TASK_FIELDS } from "../../src/batches/TaskPreparer.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const Repo = BatchCallsRepo.layer.pipe(Layer.provideMerge(TestDatabase.layer))

const FROM = "+14155550100"
// near the epoch: TestClock.setTime to a present-day instant does not return with a pool in the test
const NOW = 5_000_000
const decodeRequest = Schema.decodeUnknownSync(CreateBatchCallRequest)
const MAX = { maxTasks: 100_000, legalGrouper: () => new LegalGrouper() }

let orgs = 0
const seedOrg = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const orgId = OrgId.make(`org_${process.pid}_${++orgs}`)
  yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, 'Test org', 0)`
  yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, ${FROM}, 0)`
  yield* sql`INSERT INTO agents VALUES (${orgId}, 'agent_a', 1, 0), (${orgId}, 'agent_a', 2, 0), (${orgId}, 'agent_b', 0, 0)`
  return orgId
})

const phone = (i: number) => `+1212${String(i).padStart(7, "0")}`
const body = (name: string, n = 2, extra: Record<string, unknown> = {}) =>
  decodeRequest({
    from_number: FROM,
    name,
    tasks: Array.from({ length: n }, (_, i) => ({ to_number: phone(i), metadata: { i, source: "crm" } })),
    ...extra
  })

const stored = (orgId: OrgId) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ batches: number; tasks: number }>`
      SELECT (SELECT count(*)::int4 FROM batch_calls WHERE org_id = ${orgId}) AS batches,
        (SELECT count(*)::int4 FROM batch_call_tasks WHERE org_id = ${orgId}) AS tasks`
    return row!
  })

/** Polls until a session of this database waits on a lock while running a statement containing `text`. */
const blockedOn = (text: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (let i = 0; i < 3000; i++) {
      const [row] = yield* sql<{ n: number }>`
        SELECT count(*)::int4 AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND position(${text} in query) > 0`
      if (row!.n > 0) return
      yield* Effect.sleep("5 millis")
    }
    return yield* Effect.die(`no session blocked on ${text}`)
  })

layer(Repo, { timeout: 120_000 })("BatchCallsRepo idempotency", (it) => {
  it.effect("Idempotency-Key with the same body returns the first batch and stores nothing new", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const repo = yield* BatchCallsRepo
      const orgId = yield* seedOrg
      const first = yield* repo.create(orgId, "key_1", body("a"), { ...MAX, idempotencyKey: "idem-1" })
      yield* TestClock.adjust(60_000)
      // another API key of the same org: a key is the org's
      const again = yield* repo.create(orgId, "key_2", body("a"), { ...MAX, idempotencyKey: "idem-1" })
      assert.deepStrictEqual(again, first)
      assert.deepStrictEqual(yield* stored(orgId), { batches: 1, tasks: 2 })
    }))

  it.effect("a body that differs only in the order of object keys is the same body", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const orgId = yield* seedOrg
      const make = (metadata: Record<string, unknown>) =>
        decodeRequest({ from_number: FROM, tasks: [{ to_number: phone(0), metadata }] })
      const first = yield* repo.create(orgId, "key_1", make({ a: 1, b: { c: 2, d: 3 } }), {
        ...MAX,
        idempotencyKey: "order"
      })
      const again = yield* repo.create(orgId, "key_1", make({ b: { d: 3, c: 2 }, a: 1 }), {
        ...MAX,
        idempotencyKey: "order"
      })
      assert.strictEqual(again.batch_call_id, first.batch_call_id)
    }))

  it.effect("every field of a task is part of the body: changing any one is a different body", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const orgId = yield* seedOrg
      // the hash covers the fields the repository knows; a new task field must be added to it
      assert.deepStrictEqual(Object.keys(BatchCallTask.fields).sort(), [...TASK_FIELDS].sort())
      const base = {
        to_number: "+14155550101",
        ignore_e164_validation: false,
        override_agent_id: "agent_a",
        override_agent_version: 1,
        agent_override: { agent: { voice_speed: 1 } },
        svc_llm_dynamic_variables: { a: "1" },
        metadata: { m: 1 },
        custom_sip_headers: { "X-A": "1" }
      }
      const make = (change: Record<string, unknown>) =>
        decodeRequest({ from_number: FROM, tasks: [{ to_number: phone(9) }, { ...base, ...change }] })
      const first = yield* repo.create(orgId, "key_1", make({}), { ...MAX, idempotencyKey: "fields" })
      const changes: Array<Record<string, unknown>> = [
        { to_number: "+14155550102" },
        { ignore_e164_validation: true },
        { override_agent_id: "agent_b" },
        { override_agent_version: 2 },
        { override_agent_version: "1" },
        { agent_override: { agent: { voice_speed: 1.1 } } },
        { svc_llm_dynamic_variables: { a: "2" } },
        { metadata: { m: 2 } },
        { custom_sip_headers: { "X-A": "2" } }
      ]
      for (const change of changes) {
        const error = yield* Effect.flip(
          repo.create(orgId, "key_1", make(change), { ...MAX, idempotencyKey: "fields" })
        )
        assert.strictEqual(error._tag, "IdempotencyKeyReused", JSON.stringify(change))
      }
      const same = yield* repo.create(orgId, "key_1", make({}), { ...MAX, idempotencyKey: "fields" })
      assert.strictEqual(same.batch_call_id, first.batch_call_id)
    }))

  it.effect("a key of any length works, and an empty key is no key", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const orgId = yield* seedOrg
      const long = "k".repeat(10_000)
      const first = yield* repo.create(orgId, "key_1", body("long"), { ...MAX, idempotencyKey: long })
      const again = yield* repo.create(orgId, "key_1", body("long"), { ...MAX, idempotencyKey: long })
      assert.strictEqual(again.batch_call_id, first.batch_call_id)
      const a = yield* repo.create(orgId, "key_1", body("empty"), { ...MAX, idempotencyKey: "" })
      const b = yield* repo.create(orgId, "key_1", body("empty"), { ...MAX, idempotencyKey: "" })
      assert.notStrictEqual(a.batch_call_id, b.batch_call_id)
    }))

  it.effect("Idempotency-Key with a different body fails with IdempotencyKeyReused", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const orgId = yield* seedOrg
      yield* repo.create(orgId, "key_1", body("a"), { ...MAX, idempotencyKey: "idem-2" })
      for (const other of [body("b"), body("a", 3), body("a", 2, { reserved_concurrency: 1 })]) {
        const error = yield* Effect.flip(repo.create(orgId, "key_1", other, { ...MAX, idempotencyKey: "idem-2" }))
        assert.include(error, { _tag: "IdempotencyKeyReused", idempotencyKey: "idem-2" })
      }
      assert.deepStrictEqual(yield* stored(orgId), { batches: 1, tasks: 2 })
    }))

  it.effect("a key names its batch for 24 hours, then may create a new one", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const repo = yield* BatchCallsRepo
      const orgId = yield* seedOrg
      const first = yield* repo.create(orgId, "key_1", body("a"), { ...MAX, idempotencyKey: "idem-3" })
      yield* TestClock.adjust(IDEMPOTENCY_KEY_TTL_MS - 1)
      const within = yield* repo.create(orgId, "key_1", body("a"), { ...MAX, idempotencyKey: "idem-3" })
      assert.strictEqual(within.batch_call_id, first.batch_call_id)
      yield* TestClock.adjust(1)
      // expired: a different body is no longer a misuse, it is a new request
      const after = yield* repo.create(orgId, "key_1", body("b"), { ...MAX, idempotencyKey: "idem-3" })
      assert.notStrictEqual(after.batch_call_id, first.batch_call_id)
      assert.strictEqual(after.scheduled_timestamp, NOW + IDEMPOTENCY_KEY_TTL_MS)
      const again = yield* repo.create(orgId, "key_1", body("b"), { ...MAX, idempotencyKey: "idem-3" })
      assert.strictEqual(again.batch_call_id, after.batch_call_id)
      assert.deepStrictEqual(yield* stored(orgId), { batches: 2, tasks: 4 })
    }))

  it.effect("a failed create does not consume its key", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const orgId = yield* seedOrg
      const notOwned = decodeRequest({ from_number: "+14155550199", tasks: [{ to_number: phone(0) }] })
      const error = yield* Effect.flip(repo.create(orgId, "key_1", notOwned, { ...MAX, idempotencyKey: "idem-4" }))
      assert.strictEqual(error._tag, "FromNumberNotOwned")
      const created = yield* repo.create(orgId, "key_1", body("a"), { ...MAX, idempotencyKey: "idem-4" })
      assert.strictEqual(created.total_task_count, 2)
    }))

  it.effect("a replay returns the stored batch without checking the request again", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg
      const first = yield* repo.create(orgId, "key_1", body("a"), { ...MAX, idempotencyKey: "idem-5" })
      yield* sql`DELETE FROM phone_numbers WHERE org_id = ${orgId}`
      const again = yield* repo.create(orgId, "key_1", body("a"), { ...MAX, idempotencyKey: "idem-5" })
      assert.deepStrictEqual(again, first)
    }))

  it.effect("without a key, an identical body marked as a retry within 10 minutes of the last attempt repeats it", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const repo = yield* BatchCallsRepo
      const orgId = yield* seedOrg
      const first = yield* repo.create(orgId, "key_1", body("a"), { ...MAX, retryCount: 0 })
      yield* TestClock.adjust(RETRY_WINDOW_MS - 1)
      const retry = yield* repo.create(orgId, "key_1", body("a"), { ...MAX, retryCount: 1 })
      assert.deepStrictEqual(retry, first)
      // the window runs from the previous attempt: the vendor client's third attempt can come 10 minutes after
      // its first, after two full 300 s timeouts
      yield* TestClock.adjust(RETRY_WINDOW_MS - 1)
      const retry2 = yield* repo.create(orgId, "key_1", body("a"), { ...MAX, retryCount: 2 })
      assert.deepStrictEqual(retry2, first)
      assert.deepStrictEqual(yield* stored(orgId), { batches: 1, tasks: 2 })
    }))

  it.effect("without a key, a first attempt, another API key, another body or a late retry create new batches", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const repo = yield* BatchCallsRepo
      const orgId = yield* seedOrg
      const first = yield* repo.create(orgId, "key_1", body("a"), MAX)
      // not marked as a retry: the caller means a second, identical batch
      const second = yield* repo.create(orgId, "key_1", body("a"), { ...MAX, retryCount: 0 })
      assert.notStrictEqual(second.batch_call_id, first.batch_call_id)
      // a retry now repeats the latest create of that body
      const retry = yield* repo.create(orgId, "key_1", body("a"), { ...MAX, retryCount: 1 })
      assert.strictEqual(retry.batch_call_id, second.batch_call_id)
      const otherKey = yield* repo.create(orgId, "key_2", body("a"), { ...MAX, retryCount: 1 })
      assert.notStrictEqual(otherKey.batch_call_id, second.batch_call_id)
      const otherBody = yield* repo.create(orgId, "key_1", body("b"), { ...MAX, retryCount: 1 })
      assert.notStrictEqual(otherBody.batch_call_id, second.batch_call_id)
      yield* TestClock.adjust(RETRY_WINDOW_MS)
      const late = yield* repo.create(orgId, "key_1", body("a"), { ...MAX, retryCount: 1 })
      assert.notStrictEqual(late.batch_call_id, second.batch_call_id)
      // and the late retry is now the batch its own retries repeat
      const lateRetry = yield* repo.create(orgId, "key_1", body("a"), { ...MAX, retryCount: 2 })
      assert.strictEqual(lateRetry.batch_call_id, late.batch_call_id)
      assert.deepStrictEqual(yield* stored(orgId), { batches: 5, tasks: 10 })
    }))

  it.effect("purgeExpired deletes only records past their lifetime", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const repo = yield* BatchCallsRepo
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg
      // records of the tests above, made at other times, would be counted too
      yield* sql`DELETE FROM batch_call_idempotency_keys`
      yield* sql`DELETE FROM batch_call_recent_requests`
      yield* repo.create(orgId, "key_1", body("a"), { ...MAX, idempotencyKey: "idem-purge" })
      yield* repo.create(orgId, "key_1", body("b"), MAX)
      assert.strictEqual(yield* repo.purgeExpired, 0)
      yield* TestClock.adjust(RETRY_WINDOW_MS)
      assert.strictEqual(yield* repo.purgeExpired, 1)
      yield* TestClock.adjust(IDEMPOTENCY_KEY_TTL_MS)
      assert.strictEqual(yield* repo.purgeExpired, 1)
      const [left] = yield* sql<{ keys: number; recent: number }>`
        SELECT (SELECT count(*)::int4 FROM batch_call_idempotency_keys) AS keys,
          (SELECT count(*)::int4 FROM batch_call_recent_requests) AS recent`
      assert.deepStrictEqual(left, { keys: 0, recent: 0 })
      assert.strictEqual((yield* stored(orgId)).batches, 2)
    }))
})

layer(Repo, { timeout: 120_000, excludeTestServices: true })("BatchCallsRepo concurrent duplicates", (it) => {
  /**
   * Runs `first` until it waits inside its batch insert, the last step after its claim (a table lock held by a
   * third session), starts `second` and waits until it blocks on the idempotency record `first` claimed, then
   * lets both finish. (The tasks of a create go in as they arrive, before its claim: decision 0303.)
   */
  const overlap = <A, E, R>(
    first: Effect.Effect<A, E, R>,
    second: Effect.Effect<A, E, R>,
    claimTable: string
  ) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
        yield* sql`LOCK TABLE batch_calls IN SHARE MODE`
        yield* Deferred.succeed(locked, undefined)
        yield* Deferred.await(release)
      })))
      yield* Deferred.await(locked)
      const a = yield* Effect.forkChild(first)
      yield* blockedOn("INSERT INTO batch_calls")
      const b = yield* Effect.forkChild(second)
      yield* blockedOn(`INSERT INTO ${claimTable}`)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      return [yield* Fiber.join(a), yield* Fiber.join(b)] as const
    })

  it.effect("two concurrent creates with the same Idempotency-Key store one batch", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const orgId = yield* seedOrg
      const request = body("concurrent", 5_000)
      const create = repo.create(orgId, "key_1", request, { ...MAX, idempotencyKey: "same" })
      const [a, b] = yield* overlap(create, create, "batch_call_idempotency_keys")
      assert.deepStrictEqual(b, a)
      assert.deepStrictEqual(yield* stored(orgId), { batches: 1, tasks: 5_000 })
    }))

  it.effect("a keyless retry that arrives while the first attempt is still storing returns its batch", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const orgId = yield* seedOrg
      const request = body("slow first attempt", 5_000)
      const [a, b] = yield* overlap(
        repo.create(orgId, "key_1", request, { ...MAX, retryCount: 0 }),
        repo.create(orgId, "key_1", request, { ...MAX, retryCount: 1 }),
        "batch_call_recent_requests"
      )
      assert.deepStrictEqual(b, a)
      assert.deepStrictEqual(yield* stored(orgId), { batches: 1, tasks: 5_000 })
    }))

  it.effect("concurrent creates with the same key and different bodies: one batch, one IdempotencyKeyReused", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const orgId = yield* seedOrg
      const [a, b] = yield* overlap(
        Effect.result(repo.create(orgId, "key_1", body("one", 100), { ...MAX, idempotencyKey: "race" })),
        Effect.result(repo.create(orgId, "key_1", body("two", 100), { ...MAX, idempotencyKey: "race" })),
        "batch_call_idempotency_keys"
      )
      assert.strictEqual(a._tag, "Success")
      assert.strictEqual(b._tag, "Failure")
      if (b._tag === "Failure") assert.strictEqual(b.failure._tag, "IdempotencyKeyReused")
      assert.deepStrictEqual(yield* stored(orgId), { batches: 1, tasks: 100 })
    }))
})
