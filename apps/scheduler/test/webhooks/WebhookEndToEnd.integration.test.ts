// Issue 13's "done when" for webhooks: a batch run end to end (create -> tasks dialled -> events delivered to a local
// receiver, each verified with the vendor SDK, exactly one call_ended per call after de-duplication) while the
// receiver fails the first attempts; and a worker SIGKILLed mid-delivery, whose events another worker delivers.
import { assert, describe, it } from "@effect/vitest"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import { DatabaseAdmin } from "@svc/store"
import * as Database from "@svc/store/db/Database.ts"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { WebhooksRepo } from "@svc/store/webhooks/WebhooksRepo.ts"
import { Effect, Layer, Metric, Option, Redacted } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { SqlClient } from "effect/sql"
import { spawn } from "node:child_process"
import * as path from "node:path"
import Retell from "retell-sdk"
import * as SimulatedDialer from "../../src/carriers/simulated/SimulatedDialer.ts"
import { DatabaseHealth } from "../../src/runtime/DatabaseHealth.ts"
import * as Scheduler from "../../src/runtime/Scheduler.ts"
import * as SchedulerConfig from "../../src/runtime/SchedulerConfig.ts"
import * as WebhookConfig from "../../src/webhooks/WebhookConfig.ts"
import * as WebhookMetrics from "../../src/webhooks/WebhookMetrics.ts"
import * as WebhookWorker from "../../src/webhooks/WebhookWorker.ts"
import { createBatch, dialerSettings, seedOrg, StoreLayer } from "../fixtures/Fixtures.ts"
import { enqueueMany, stateCounts } from "./Fixtures.ts"
import * as Receiver from "./Receiver.ts"

// the shared bounded wait, at this file's pace: 30 s unless told, a check every 50 ms
const waitFor = <R>(check: Effect.Effect<boolean, unknown, R>, what: string, timeoutMs = 30_000) =>
  waitUntil(what, check, { timeoutMs, everyMs: 50 })

describe("webhooks end to end", () => {
  it.live(
    "a batch's calls reach a failing receiver, signed, with exactly one call_ended per call",
    () =>
      Effect.gen(function*() {
        const receiver = yield* Receiver.make()
        // every event fails twice (503, then a connection the receiver drops), then succeeds
        const seen = new Map<string, number>()
        receiver.respond = (request) => {
          const id = String(request.headers["x-svc-event-id"])
          const n = (seen.get(id) ?? 0) + 1
          seen.set(id, n)
          return n <= 2 ? { status: 503 } : { status: 200 }
        }
        const orgId = yield* seedOrg(10)
        const repo = yield* WebhooksRepo
        const secret = yield* repo.createSecret(orgId, 0, Date.now())
        yield* repo.setOrgWebhook(orgId, receiver.url(), undefined, Date.now())
        const batch = yield* createBatch(orgId, { count: 25 })
        const settings = SchedulerConfig.defaults({ pollMs: 50, backfillCron: Option.none() })
        const sql = yield* SqlClient.SqlClient
        const attemptsBefore = (yield* Metric.value(WebhookMetrics.attempts)).count
        const retriesBefore = (yield* Metric.value(WebhookMetrics.retries)).count
        yield* Effect.scoped(Effect.gen(function*() {
          yield* Layer.build(
            Scheduler.layerWith(settings, WebhookConfig.defaults({ allowPrivate: true, baseDelayMs: 20 })).pipe(
              Layer.provide(SimulatedDialer.layerMemory(dialerSettings({ latencyMs: 5 })))
            )
          )
          yield* waitFor(
            Effect.map(
              sql<{ n: number }>`
              SELECT count(*)::int AS n FROM calls c WHERE c.batch_call_id = ${batch}
                AND c.call_status IN ('ended', 'error', 'not_connected')
                AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.call_id = c.call_id AND e.state = 'pending')`,
              (rows) => rows[0]!.n === 25
            ),
            "every call finished and its events delivered"
          )
        }))
        const total = yield* eventCount(orgId)
        assert.deepStrictEqual(yield* stateCounts(orgId), { delivered: total })
        // the metrics counted every attempt, two retries per event
        assert.strictEqual((yield* Metric.value(WebhookMetrics.attempts)).count - attemptsBefore, 3 * total)
        assert.strictEqual((yield* Metric.value(WebhookMetrics.retries)).count - retriesBefore, 2 * total)
        const text = yield* PrometheusMetrics.format()
        assert.include(text, "svc_webhook_deliveries_total{result=\"delivered\"}")
        assert.include(text, "svc_webhook_queue_age_seconds")
        // each request is signed in the vendor's scheme
        for (const request of receiver.received) {
          assert.isTrue(
            yield* Effect.promise(() => Retell.verify(request.body, secret, String(request.headers["x-svc-signature"])))
          )
        }
        // de-duplicated by event id: one call_ended per call, and every call has one
        const unique = new Map(receiver.received.map((r) => [String(r.headers["x-svc-event-id"]), JSON.parse(r.body)]))
        const ended = [...unique.values()].filter((b) => b.event === "call_ended").map((b) => b.call.call_id)
        const calls = yield* sql<{ call_id: string }>`SELECT call_id FROM calls WHERE batch_call_id = ${batch}`
        assert.strictEqual(ended.length, 25)
        assert.deepStrictEqual(new Set(ended), new Set(calls.map((c) => c.call_id)))
        // every event was attempted three times: twice refused by the receiver, then delivered
        assert.isTrue([...seen.values()].every((n) => n === 3))
        // per call: started (answered calls only) before ended before analyzed
        for (const callId of ended) {
          const order = receiver.received.filter((r) =>
            JSON.parse(r.body).call.call_id === callId && r.headers["x-svc-event"]
          )
            .map((r) => String(r.headers["x-svc-event"]))
          const firsts = order.filter((e, i) => order.indexOf(e) === i)
          assert.deepStrictEqual(firsts.filter((e) => e !== "call_started"), ["call_ended", "call_analyzed"])
          if (firsts.includes("call_started")) assert.strictEqual(firsts[0], "call_started")
        }
      }).pipe(
        Effect.provide(WebhooksRepo.layer.pipe(Layer.provideMerge(StoreLayer)), { local: true }),
        Effect.scoped
      ),
    90_000
  )

  it.live(
    "a worker SIGKILLed mid-delivery: another delivers its events, at least once, one per call after de-dup",
    () =>
      Effect.gen(function*() {
        const admin = yield* TestDatabase.adminUrl
        const name = `svc_hooks_kill_${process.pid}`
        yield* DatabaseAdmin.dropDatabase(admin, name)
        yield* DatabaseAdmin.ensureDatabase(admin, name, process.env["SVC_TEST_TEMPLATE"])
        yield* Effect.addFinalizer(() => DatabaseAdmin.dropDatabase(admin, name).pipe(Effect.ignore))
        const url = TestDatabase.urlFor(admin, name)
        const store = WebhooksRepo.layer.pipe(
          Layer.provideMerge(Database.layerFromUrl(url, { migrate: false, maxConnections: 4 }))
        )
        yield* Effect.gen(function*() {
          const receiver = yield* Receiver.make()
          // the first 20 requests hang: the child worker is mid-delivery when it dies
          receiver.respond = (_, i) => i < 20 ? "hang" : { status: 200 }
          const sql = yield* SqlClient.SqlClient
          const orgId = OrgId.make("org_kill")
          yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, 'kill', 0)`
          yield* Effect.flatMap(WebhooksRepo, (repo) => repo.createSecret(orgId, 0, 0))
          yield* enqueueMany(orgId, receiver.url(), 200, { timeoutMs: 1_000 })

          const child = spawn(process.execPath, [path.join(import.meta.dirname, "fixtures", "worker.ts")], {
            env: { ...process.env, DATABASE_URL: Redacted.value(url), LOG_LEVEL: "Warn" },
            stdio: "inherit"
          })
          yield* waitFor(Effect.sync(() => receiver.received.length >= 20), "the child worker's first requests")
          child.kill("SIGKILL")
          yield* Effect.callback<void>((resume) => {
            if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
            child.once("exit", () => resume(Effect.void))
          })
          assert.strictEqual(child.signalCode, "SIGKILL")
          // what it held stays pending (its results were never written)
          const held = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM webhook_events WHERE lease_owner = 'child-worker' AND state = 'pending'`
          const heldByChild = held[0]!.n
          assert.isAtLeast(heldByChild, 1)

          yield* Effect.forkScoped(
            WebhookWorker.loop(
              WebhookConfig.defaults({ allowPrivate: true, leaseMarginMs: 300, baseDelayMs: 50 }),
              "survivor"
            ).pipe(Effect.provide(DatabaseHealth.layer))
          )
          yield* waitFor(
            Effect.map(stateCounts(orgId), (counts) => counts["delivered"] === 200),
            "every event delivered by the survivor"
          )
          const byEvent = new Map<string, number>()
          for (const r of receiver.received) {
            const id = String(r.headers["x-svc-event-id"])
            byEvent.set(id, (byEvent.get(id) ?? 0) + 1)
          }
          // at least once: the hung ones were sent twice; de-duplicated: one call_ended per call
          assert.strictEqual(byEvent.size, 200)
          // the 20 the receiver never answered were sent again (others the child held were answered, or never sent,
          // before it died: sent once or twice)
          assert.isAtLeast([...byEvent.values()].filter((n) => n > 1).length, 20)
          const calls = new Set(
            [...new Map(receiver.received.map((r) => [String(r.headers["x-svc-event-id"]), JSON.parse(r.body)]))
              .values()]
              .map((b) => b.call.call_id)
          )
          assert.strictEqual(calls.size, 200)
        }).pipe(Effect.provide(store, { local: true }), Effect.scoped)
      }).pipe(Effect.scoped),
    90_000
  )

  it.live(
    "one org's hanging endpoint with a backlog never holds back another org's deliveries",
    () =>
      Effect.gen(function*() {
        const dead = yield* Receiver.make()
        dead.respond = () => "hang"
        const healthy = yield* Receiver.make()
        const sql = yield* SqlClient.SqlClient
        const repo = yield* WebhooksRepo
        for (const org of [OrgId.make("org_iso_dead"), OrgId.make("org_iso_ok")]) {
          yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${org}, 'iso', 0)`
          yield* repo.createSecret(org, 0, 0)
        }
        // The dead endpoint's attempts never end while this test runs (10 minute timeouts): had any healthy event
        // waited on one of them (a shared slot, a claim or a write held behind it), the healthy org could not
        // finish at all, so the wait below can be as long as a loaded machine needs. How much the backlog slows the
        // healthy org down is a benchmark's question, measured in docs/benchmarks.md ("Webhook delivery",
        // Isolation: tools/bench/webhooks.bench.ts), not a wall-clock bound here.
        yield* enqueueMany("org_iso_dead", dead.url(), 5_000, { timeoutMs: 600_000 })
        yield* enqueueMany("org_iso_ok", healthy.url(), 300)
        yield* Effect.forkScoped(
          WebhookWorker.loop(WebhookConfig.defaults({ allowPrivate: true, concurrency: 32, perOrg: 8 }), "iso").pipe(
            Effect.provide(DatabaseHealth.layer)
          )
        )
        yield* waitFor(
          Effect.map(stateCounts("org_iso_ok"), (counts) => counts["delivered"] === 300),
          "the healthy org's events, while the dead org's attempts hang"
        )
        // every dead attempt is still hanging: no result of the dead org was written, so none of the healthy
        // deliveries came after one of its timeouts
        const deadResults = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM webhook_events WHERE org_id = 'org_iso_dead' AND jsonb_array_length(history) > 0`
        assert.strictEqual(deadResults[0]!.n, 0)
        assert.deepStrictEqual(yield* stateCounts("org_iso_dead"), { pending: 5_000 })
        // the dead org held at most its share of slots
        assert.isAtMost(dead.received.length, 8)
        assert.strictEqual(healthy.received.length, 300)
      }).pipe(Effect.provide(WebhooksRepo.layer.pipe(Layer.provideMerge(StoreLayer)), { local: true }), Effect.scoped),
    60_000
  )
})

const eventCount = (orgId: OrgId) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_events WHERE org_id = ${orgId}`,
      (rows) => rows[0]!.n
    ))
