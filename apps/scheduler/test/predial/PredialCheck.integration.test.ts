// The pre-dial check end to end (decision 0553): the real dispatcher, the real database, a real HTTP receiver on
// 127.0.0.1 standing in for the customer's, and a scripted carrier that counts dials. A task is dialled only on a
// 2xx `{"allow": true}`; a refusal skips it with the receiver's reason; a dead, slow, failing or garbled receiver
// makes it wait (`predial_unavailable`) and it is dialled exactly once after the receiver is back.
import { assert, describe, it } from "@effect/vitest"
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import { PredialRepo } from "@svc/store/predial/PredialRepo.ts"
import { WebhooksRepo } from "@svc/store/webhooks/WebhooksRepo.ts"
import { Clock, Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as crypto from "node:crypto"
import { Dispatcher } from "../../src/dispatch/Dispatcher.ts"
import { BACKOFF_BASE_MS, PredialCheck, SETTINGS_TTL_MS } from "../../src/predial/PredialCheck.ts"
import * as SchedulerConfig from "../../src/runtime/SchedulerConfig.ts"
import * as HttpSender from "../../src/webhooks/HttpSender.ts"
import { batchRow, createBatch, isolated, seedOrg } from "../fixtures/Fixtures.ts"
import * as ScriptedDialer from "../fixtures/ScriptedDialer.ts"
import * as PredialReceiver from "./PredialReceiver.ts"

const T0 = Date.UTC(2026, 4, 4, 15, 0)
const TIMEOUT_MS = 2_000

interface Context {
  readonly receiver: PredialReceiver.PredialReceiver
  readonly dialer: ScriptedDialer.ScriptedDialer
  readonly dispatcher: Dispatcher["Service"]
  /** How many times a worker read the orgs' targets. */
  readonly targetReads: () => number
  /** A fresh org with a webhook secret (returned) and, unless `predial: false`, the receiver as its check. */
  readonly org: (
    options?: { readonly predial?: boolean }
  ) => Effect.Effect<{ orgId: OrgId; secret: string }, never, SqlClient.SqlClient | PredialRepo | WebhooksRepo>
  readonly settings: SchedulerConfig.SchedulerSettings
  readonly check: PredialCheck["Service"]
}

const scenario = <A, E, R>(
  body: (ctx: Context) => Effect.Effect<A, E, R>,
  options: { readonly allowPrivate?: boolean } = {}
) => {
  const dialer = ScriptedDialer.make()
  dialer.onDial(ScriptedDialer.answers.ended)
  let reads = 0
  const countingRepo = Layer.effect(
    PredialRepo,
    Effect.gen(function*() {
      const real = yield* PredialRepo
      return PredialRepo.of({
        ...real,
        targets: (now) => Effect.suspend(() => (reads++, real.targets(now)))
      })
    })
  ).pipe(Layer.provide(PredialRepo.layer))
  return Effect.gen(function*() {
    yield* TestClock.setTime(T0)
    const receiver = yield* PredialReceiver.make
    const send = yield* HttpSender.make({ allowPrivate: options.allowPrivate ?? true })
    const check = yield* PredialCheck.make(send)
    const settings = SchedulerConfig.defaults()
    const dispatcher = yield* Dispatcher.make(settings).pipe(Effect.provideService(PredialCheck, check))
    const org = (o: { readonly predial?: boolean } = {}) =>
      Effect.gen(function*() {
        const orgId = yield* seedOrg(20)
        const secret = yield* (yield* WebhooksRepo).createSecret(orgId, 0, T0).pipe(Effect.orDie)
        if (o.predial !== false) yield* (yield* PredialRepo).set(orgId, receiver.url, TIMEOUT_MS, T0).pipe(Effect.orDie)
        return { orgId, secret }
      }).pipe(Effect.orDie)
    return yield* body({ receiver, dialer, dispatcher, targetReads: () => reads, org, settings, check })
  }).pipe(
    Effect.provide(Layer.mergeAll(dialer.layer, countingRepo, WebhooksRepo.layer)),
    isolated
  )
}

interface TaskRow {
  readonly task_id: string
  readonly state: string
  readonly state_reason: string | null
  readonly not_before: number | null
}

const taskOf = (batchCallId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<TaskRow>`
      SELECT task_id::text AS task_id, state, state_reason, not_before::float8 AS not_before
      FROM batch_call_tasks WHERE batch_call_id = ${batchCallId} ORDER BY task_index LIMIT 1`
    return row!
  })

/** The vendor's scheme (decision 0521): HMAC-SHA256 over the raw body followed by the timestamp's digits. */
const verifies = (header: string | undefined, body: string, secret: string) => {
  const match = /^v=(\d+),d=([0-9a-f]{64})$/.exec(header ?? "")
  if (match === null) return false
  const expected = crypto.createHmac("sha256", secret).update(body + match[1]!, "utf8").digest("hex")
  return expected === match[2]
}

describe("the pre-dial check", () => {
  it.live("a 2xx {\"allow\": true} dials the task once; the check carries the dial, signed as the call webhooks", () =>
    scenario(({ dialer, dispatcher, org, receiver }) =>
      Effect.gen(function*() {
        const { orgId, secret } = yield* org()
        const batch = yield* createBatch(orgId, {
          count: 1,
          tasks: [{ to_number: "+442071838750", metadata: { crm: 7 } }]
        })
        assert.strictEqual((yield* dispatcher.tick).claimed, 1)
        yield* dispatcher.settle
        const task = yield* taskOf(batch)
        assert.strictEqual(task.state, "completed")
        assert.strictEqual(dialer.dialsOf(task.task_id), 1)
        assert.strictEqual(receiver.checks.length, 1)
        const check = receiver.checks[0]!
        assert.isTrue(verifies(check.headers["x-svc-signature"] as string, check.body, secret))
        assert.strictEqual(
          check.headers["x-svc-signature"],
          `v=${T0},${(check.headers["x-svc-signature"] as string).split(",")[1]}`
        )
        assert.strictEqual(check.headers["x-svc-event"], "call_predial")
        assert.strictEqual(check.headers["content-type"], "application/json")
        const body = JSON.parse(check.body)
        assert.deepStrictEqual(body, {
          event: "call_predial",
          timestamp: T0,
          predial: {
            batch_call_id: batch,
            task_id: task.task_id,
            call_id: dialer.dials[0]!.call_id,
            attempt: 1,
            idempotency_key: task.task_id,
            from_number: "+14155550100",
            to_number: "+442071838750",
            metadata: { crm: 7 }
          }
        })
      })
    ))

  it.live("{\"allow\": false} skips the task with the receiver's reason and never dials it", () =>
    scenario(({ dialer, dispatcher, org, receiver }) =>
      Effect.gen(function*() {
        const { orgId } = yield* org()
        receiver.respond = () => ({
          status: 200,
          body: JSON.stringify({ allow: false, reason: "on the customer's own do-not-call list" })
        })
        const batch = yield* createBatch(orgId, { count: 1 })
        assert.strictEqual((yield* dispatcher.tick).claimed, 1)
        yield* dispatcher.settle
        const task = yield* taskOf(batch)
        assert.strictEqual(task.state, "skipped")
        assert.strictEqual(task.state_reason, "predial_refused: on the customer's own do-not-call list")
        assert.strictEqual(dialer.dials.length, 0)
        // the refused task was the batch's last: it completed
        assert.strictEqual((yield* batchRow(batch)).status, "completed")
        // and nothing brings it back
        yield* TestClock.adjust(3_600_000)
        yield* dispatcher.tick
        yield* dispatcher.settle
        assert.strictEqual(dialer.dials.length, 0)
        assert.strictEqual(receiver.checks.length, 1)
      })
    ))

  type Failure = "dead" | "slow" | "5xx" | "not JSON" | "no allow"
  const failures: ReadonlyArray<Failure> = ["dead", "slow", "5xx", "not JSON", "no allow"]

  for (const failure of failures) {
    it.live(`a ${failure} receiver: the task waits predial_unavailable, undialled, and is dialled once when it is back`, () =>
      scenario(({ dialer, dispatcher, org, receiver }) =>
        Effect.gen(function*() {
          const { orgId } = yield* org()
          const batch = yield* createBatch(orgId, { count: 1 })
          if (failure === "dead") yield* receiver.stop
          receiver.respond = () =>
            failure === "slow"
              ? "hang"
              : failure === "5xx"
              ? { status: 503, body: "{\"allow\": true}" }
              : failure === "not JSON"
              ? { status: 200, body: "allow" }
              : { status: 200, body: JSON.stringify({ allowed: true }) }
          assert.strictEqual((yield* dispatcher.tick).claimed, 1)
          if (failure === "slow") {
            // the receiver has the request and will never answer: the check's deadline (TestClock) ends it
            yield* waitUntil("the slow receiver to get the check", Effect.sync(() => receiver.checks.length === 1))
            yield* TestClock.adjust(TIMEOUT_MS)
          }
          yield* dispatcher.settle
          const waiting = yield* taskOf(batch)
          assert.strictEqual(waiting.state, "pending")
          assert.strictEqual(waiting.state_reason, "predial_unavailable")
          assert.strictEqual(dialer.dials.length, 0)
          assert.strictEqual(receiver.checks.length, failure === "dead" ? 0 : 1)
          const failedAt = yield* Clock.currentTimeMillis
          assert.strictEqual(waiting.not_before, failedAt + BACKOFF_BASE_MS)

          // not before the backoff: no claim, no request
          assert.strictEqual((yield* dispatcher.tick).claimed, 0)
          yield* dispatcher.settle
          assert.strictEqual(receiver.checks.length, failure === "dead" ? 0 : 1)

          // the receiver is back
          if (failure === "dead") yield* receiver.restart
          receiver.respond = () => PredialReceiver.allow
          yield* TestClock.setTime(waiting.not_before!)
          assert.strictEqual((yield* dispatcher.tick).claimed, 1)
          yield* dispatcher.settle
          const done = yield* taskOf(batch)
          assert.strictEqual(done.state, "completed")
          assert.strictEqual(dialer.dialsOf(done.task_id), 1)
          assert.strictEqual(dialer.dials.length, 1)
        })
      ))
  }

  it.live("a receiver on a private address is refused unless SVC_WEBHOOK_ALLOW_PRIVATE: no request, no dial", () =>
    scenario(({ dialer, dispatcher, org, receiver }) =>
      Effect.gen(function*() {
        const { orgId } = yield* org()
        const batch = yield* createBatch(orgId, { count: 1 })
        assert.strictEqual((yield* dispatcher.tick).claimed, 1)
        yield* dispatcher.settle
        const task = yield* taskOf(batch)
        assert.strictEqual(task.state, "pending")
        assert.strictEqual(task.state_reason, "predial_unavailable")
        assert.strictEqual(receiver.checks.length, 0)
        assert.strictEqual(dialer.dials.length, 0)
      }), { allowPrivate: false }))

  it.live("an org without a pre-dial webhook sends no request, and its dials read the targets once per TTL", () =>
    scenario(({ dialer, dispatcher, org, receiver, targetReads }) =>
      Effect.gen(function*() {
        const { orgId } = yield* org({ predial: false })
        const first = yield* createBatch(orgId, { count: 5 })
        assert.strictEqual((yield* dispatcher.tick).claimed, 5)
        yield* dispatcher.settle
        const second = yield* createBatch(orgId, { count: 5 })
        yield* TestClock.adjust(SETTINGS_TTL_MS - 1)
        assert.strictEqual((yield* dispatcher.tick).claimed, 5)
        yield* dispatcher.settle
        assert.strictEqual(dialer.dials.length, 10)
        assert.strictEqual(receiver.checks.length, 0)
        assert.strictEqual(targetReads(), 1)
        assert.strictEqual((yield* batchRow(first)).status, "completed")
        assert.strictEqual((yield* batchRow(second)).status, "completed")
        // past the TTL the next dial reads them again (a webhook set meanwhile applies from then on)
        yield* (yield* PredialRepo).set(orgId, receiver.url, TIMEOUT_MS, T0).pipe(Effect.orDie)
        yield* createBatch(orgId, { count: 1 })
        yield* TestClock.adjust(1)
        assert.strictEqual((yield* dispatcher.tick).claimed, 1)
        yield* dispatcher.settle
        assert.strictEqual(targetReads(), 2)
        assert.strictEqual(receiver.checks.length, 1)
        assert.strictEqual(dialer.dials.length, 11)
      })
    ))

  it.live("a worker killed between the check and the dial: the task is reconciled, checked again and dialled once", () =>
    scenario(({ check, dialer, org, receiver, settings }) =>
      Effect.gen(function*() {
        const { orgId } = yield* org()
        const batch = yield* createBatch(orgId, { count: 1 })
        dialer.onLookup(() => ScriptedDialer.answers.notPlaced)
        receiver.respond = () => "hold"
        // worker A claims and sends the check; it dies (its fibers stop) before the answer comes
        const scopeA = yield* Scope.make()
        const a = yield* Dispatcher.make(SchedulerConfig.defaults()).pipe(
          Effect.provideService(PredialCheck, check),
          Scope.provide(scopeA)
        )
        assert.strictEqual((yield* a.tick).claimed, 1)
        yield* waitUntil("worker A's check to reach the receiver", Effect.sync(() => receiver.held() === 1))
        yield* Scope.close(scopeA, Exit.void)
        // the receiver allows, too late: nobody is there to dial
        receiver.release(PredialReceiver.allow)
        receiver.respond = () => PredialReceiver.allow
        assert.strictEqual((yield* taskOf(batch)).state, "dialling")
        // worker B: after A's lease the task is unknown, the carrier has no call with its key, it is claimed again
        const b = yield* Dispatcher.make(settings).pipe(Effect.provideService(PredialCheck, check))
        yield* TestClock.adjust(30_000 + 1)
        const report = yield* b.tick
        assert.strictEqual(report.reclaimed, 1)
        assert.strictEqual(report.claimed, 1)
        yield* b.settle
        const task = yield* taskOf(batch)
        assert.strictEqual(task.state, "completed")
        assert.strictEqual(dialer.dialsOf(task.task_id), 1)
        // two checks of the same attempt (the receiver may answer the second from its first decision)
        assert.strictEqual(receiver.checks.length, 2)
        const keys = receiver.checks.map((c) => JSON.parse(c.body).predial.idempotency_key)
        assert.deepStrictEqual(keys, [task.task_id, task.task_id])
      })
    ))
})
