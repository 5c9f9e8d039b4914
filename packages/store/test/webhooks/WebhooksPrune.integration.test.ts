// Webhook housekeeping (decision 0524, migration 0019): finished events older than the retention go, pending ones
// and recent ones stay; secrets older than an org's current one go, the current and the next stay.
import { assert, layer } from "@effect/vitest"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { WebhooksRepo } from "../../src/webhooks/WebhooksRepo.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const Layers = WebhooksRepo.layer.pipe(Layer.provideMerge(TestDatabase.layer))
const DAY = 86_400_000
/** "now" of these tests: later than any enqueued_at the database's own clock writes. */
const NOW = Date.parse("2030-01-10T00:00:00Z")
let serial = 0

const newOrg = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const orgId = OrgId.make(`org_prune_${++serial}`)
  yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, 'o', 0)`
  return orgId
})

/** An outbox row as the trigger writes it, with its state, enqueue and finish times set. */
const event = (
  orgId: string,
  state: "pending" | "delivered" | "gone" | "failed",
  enqueuedAt: number,
  finishedAt: number | null
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ event_seq: string }>`
      INSERT INTO webhook_events (event_id, org_id, call_id, event, url, timeout_ms, body, state, enqueued_at,
        finished_at)
      VALUES (${`evt_${++serial}`}, ${orgId}, ${`call_${serial}`}, 'call_ended', 'https://r.example/h', 1000, '{}',
        ${state}, to_timestamp(${enqueuedAt}::float8 / 1000), ${finishedAt})
      RETURNING event_seq::text`
    return row!.event_seq
  })

const remaining = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ event_seq: string }>`SELECT event_seq::text FROM webhook_events WHERE org_id = ${orgId} ORDER BY event_seq`
        .pipe(Effect.map((rows) => rows.map((r) => r.event_seq)))
  )

layer(Layers)("webhook housekeeping", (it) => {
  it.effect("prunes finished events past the retention; keeps pending, recent, and recently finished ones", () =>
    Effect.gen(function*() {
      const repo = yield* WebhooksRepo
      const orgId = yield* newOrg
      const old = NOW - 8 * DAY
      const delivered = yield* event(orgId, "delivered", old, old + 1_000)
      const gone = yield* event(orgId, "gone", old, old + 1_000)
      const failed = yield* event(orgId, "failed", old, old + DAY / 2)
      // enqueued long ago but still pending (a retry schedule, or a worker that never came back): never pruned
      const pending = yield* event(orgId, "pending", old, null)
      // enqueued before the cutoff, finished after it: kept until its finish is old enough
      const lateFinish = yield* event(orgId, "failed", old, NOW - 6 * DAY)
      const recent = yield* event(orgId, "delivered", NOW - DAY, NOW - DAY + 1_000)
      const deleted = yield* repo.prune(NOW, 7 * DAY, 1_000)
      assert.isAtLeast(deleted.events, 3)
      const left = yield* remaining(orgId)
      for (const seq of [delivered, gone, failed]) assert.notInclude(left, seq)
      assert.deepStrictEqual(left, [pending, lateFinish, recent])
      // a day later the late finisher's turn has come
      yield* repo.prune(NOW + 2 * DAY, 7 * DAY, 1_000)
      assert.deepStrictEqual(yield* remaining(orgId), [pending, recent])
    }))

  it.effect("deletes in chunks of the given size", () =>
    Effect.gen(function*() {
      const repo = yield* WebhooksRepo
      const orgId = yield* newOrg
      for (let i = 0; i < 5; i++) yield* event(orgId, "delivered", NOW - 30 * DAY, NOW - 30 * DAY)
      // other tests' rows may be old too: only this org's count is pinned
      let rounds = 0
      while ((yield* remaining(orgId)).length > 0) {
        const { events } = yield* repo.prune(NOW, 7 * DAY, 2)
        assert.isAtMost(events, 2)
        assert.isAbove(events, 0)
        rounds++
      }
      assert.isAtLeast(rounds, 3)
    }))

  it.effect("keeps each org's current and next secret, deletes the ones they replaced", () =>
    Effect.gen(function*() {
      const repo = yield* WebhooksRepo
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* newOrg
      const t0 = NOW - 10 * DAY
      const first = yield* repo.createSecret(orgId, DAY, t0)
      const second = yield* repo.createSecret(orgId, DAY, t0 + DAY) // active from t0 + 2 days
      const secrets = () =>
        sql<{ secret: string }>`SELECT secret FROM webhook_secrets WHERE org_id = ${orgId} ORDER BY secret_id`.pipe(
          Effect.map((rows) => rows.map((r) => r.secret))
        )
      // during the grace period the first still signs: both stay
      yield* repo.prune(t0 + DAY + 1, 7 * DAY, 1_000)
      assert.deepStrictEqual(yield* secrets(), [first, second])
      // once the second is active the first signs nothing
      yield* repo.prune(t0 + 2 * DAY, 7 * DAY, 1_000)
      assert.deepStrictEqual(yield* secrets(), [second])
      // a third, in its grace period: the second (current) and the third (next) stay
      const third = yield* repo.createSecret(orgId, DAY, t0 + 3 * DAY)
      const pruned = yield* repo.prune(t0 + 3 * DAY + 1, 7 * DAY, 1_000)
      assert.deepStrictEqual(yield* secrets(), [second, third])
      assert.strictEqual(pruned.secrets, 0)
    }))
})
