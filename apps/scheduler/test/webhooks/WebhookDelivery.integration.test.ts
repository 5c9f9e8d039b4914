import { assert, describe, it } from "@effect/vitest"
import { waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import { WebhooksRepo } from "@svc/store/webhooks/WebhooksRepo.ts"
import { Clock, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import Retell from "retell-sdk"
import * as HttpSender from "../../src/webhooks/HttpSender.ts"
import * as WebhookConfig from "../../src/webhooks/WebhookConfig.ts"
import * as WebhookWorker from "../../src/webhooks/WebhookWorker.ts"
import { enqueue, eventRow, seedOrg, WebhookStore } from "./Fixtures.ts"
import * as Receiver from "./Receiver.ts"

/** Each test on its own database (pool on the live clock) and a fresh TestClock. */
const isolated = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  self.pipe(Effect.provide(TestClock.layer()), Effect.provide(WebhookStore, { local: true }), Effect.scoped)

/** One delivery round at the TestClock's time with a real sender. */
const deliver = (options: { readonly allowPrivate?: boolean; readonly owner?: string } = {}) =>
  Effect.gen(function*() {
    const send = yield* HttpSender.make({ allowPrivate: options.allowPrivate ?? true })
    return yield* WebhookWorker.once(
      WebhookConfig.defaults({ allowPrivate: options.allowPrivate ?? true }),
      options.owner ?? "worker-a",
      send
    )
  })

describe("webhook delivery", () => {
  it.live("POSTs the exact body, signed so that the vendor SDK verifies it, with a stable event id", () =>
    Effect.gen(function*() {
      // the SDK checks the signature's time against the real clock
      yield* TestClock.setTime(Date.now())
      const receiver = yield* Receiver.make()
      const { orgId, secret } = yield* seedOrg()
      const eventId = yield* enqueue(orgId, "call_1", "call_ended", receiver.url())
      assert.strictEqual(yield* deliver(), 1)
      assert.strictEqual(receiver.received.length, 1)
      const [request] = receiver.received
      assert.strictEqual(request!.headers["x-svc-event-id"], eventId)
      assert.strictEqual(request!.headers["x-svc-event"], "call_ended")
      assert.strictEqual(request!.headers["content-type"], "application/json")
      assert.deepStrictEqual(JSON.parse(request!.body), {
        event: "call_ended",
        call: { call_id: "call_1", call_status: "ended" }
      })
      const signature = String(request!.headers["x-svc-signature"])
      assert.isTrue(yield* Effect.promise(() => Retell.verify(request!.body, secret!, signature)))
      assert.isFalse(yield* Effect.promise(() => Retell.verify(request!.body + " ", secret!, signature)))
      assert.isFalse(yield* Effect.promise(() => Retell.verify(request!.body, "whsec_wrong", signature)))
      const row = yield* eventRow(eventId)
      assert.strictEqual(row.state, "delivered")
      assert.strictEqual(row.attempts, 1)
      assert.strictEqual(row.last_status, 200)
      // delivered: never sent again
      assert.strictEqual(yield* deliver(), 0)
    }).pipe(isolated))

  it.live("retries a failing receiver with growing, jittered delays until it answers 2xx, same event id each time", () =>
    Effect.gen(function*() {
      const receiver = yield* Receiver.make()
      receiver.respond = (_, i) => i < 3 ? { status: i === 1 ? 429 : 503, body: "busy" } : { status: 204 }
      const { orgId } = yield* seedOrg()
      const eventId = yield* enqueue(orgId, "call_1", "call_ended", receiver.url())
      const dueTimes: Array<number> = []
      for (let attempt = 1; attempt <= 3; attempt++) {
        assert.strictEqual(yield* deliver(), 1)
        const row = yield* eventRow(eventId)
        assert.strictEqual(row.state, "pending")
        assert.strictEqual(row.last_error, "busy")
        const now = yield* Clock.currentTimeMillis
        const delay = row.due_at - now
        // base 1 s doubled per attempt, 50-100 % of it
        assert.isAtLeast(delay, 500 * 2 ** (attempt - 1))
        assert.isAtMost(delay, 1000 * 2 ** (attempt - 1))
        dueTimes.push(row.due_at)
        // not due yet: nothing sent
        assert.strictEqual(yield* deliver(), 0)
        yield* TestClock.setTime(row.due_at)
      }
      assert.strictEqual(yield* deliver(), 1)
      const row = yield* eventRow(eventId)
      assert.strictEqual(row.state, "delivered")
      assert.strictEqual(row.attempts, 4)
      assert.deepStrictEqual(row.history.map((h) => h.status), [503, 429, 503, 204])
      assert.deepStrictEqual(new Set(receiver.received.map((r) => r.headers["x-svc-event-id"])), new Set([eventId]))
    }).pipe(isolated))

  it.live("stops on 410 Gone", () =>
    Effect.gen(function*() {
      const receiver = yield* Receiver.make()
      receiver.respond = () => ({ status: 410 })
      const { orgId } = yield* seedOrg()
      const eventId = yield* enqueue(orgId, "call_1", "call_ended", receiver.url())
      yield* deliver()
      yield* TestClock.adjust(48 * 3_600_000)
      assert.strictEqual(yield* deliver(), 0)
      assert.strictEqual((yield* eventRow(eventId)).state, "gone")
      assert.strictEqual(receiver.received.length, 1)
    }).pipe(isolated))

  it.live("gives up once the next attempt would start more than 24 h after the first", () =>
    Effect.gen(function*() {
      const receiver = yield* Receiver.make()
      receiver.respond = () => ({ status: 500 })
      const { orgId } = yield* seedOrg()
      const eventId = yield* enqueue(orgId, "call_1", "call_ended", receiver.url())
      let attempts = 0
      for (; attempts < 100; attempts++) {
        yield* deliver()
        const row = yield* eventRow(eventId)
        if (row.state !== "pending") break
        yield* TestClock.setTime(row.due_at)
      }
      const row = yield* eventRow(eventId)
      assert.strictEqual(row.state, "failed")
      // 1 s doubling, capped at 1 h, 50-100 % each: about 30 attempts fit in 24 h
      assert.isAtLeast(row.attempts, 20)
      assert.isAtMost(row.attempts, 60)
      assert.isAtMost(yield* Clock.currentTimeMillis, 24 * 3_600_000)
      assert.isAtMost(row.history.length, 10)
    }).pipe(isolated))

  it.live("times out a receiver that never answers, at the event's timeout on the Clock, and retries", () =>
    Effect.gen(function*() {
      const receiver = yield* Receiver.make()
      receiver.respond = () => "hang"
      const { orgId } = yield* seedOrg()
      const eventId = yield* enqueue(orgId, "call_1", "call_ended", receiver.url(), { timeoutMs: 300 })
      const round = yield* Effect.forkChild(deliver())
      // the attempt's deadline is running once its request is at the receiver (both start together)
      yield* waitUntil("the receiver to hold the attempt's request", Effect.sync(() => receiver.received.length === 1))
      yield* TestClock.adjust(299)
      yield* TestClock.adjust(1)
      yield* waitUntil(
        "the round to end once the event's timeout passed on the Clock",
        Effect.sync(() => round.pollUnsafe() !== undefined),
        { timeoutMs: 10_000 }
      )
      assert.strictEqual(yield* Fiber.join(round), 1)
      const row = yield* eventRow(eventId)
      assert.strictEqual(row.state, "pending")
      assert.match(row.last_error!, /ETIMEDOUT/)
      // the attempt lasted the event's timeout to the millisecond of the worker's Clock: it did not end before it
      // (it would have at +299 or earlier) nor wait past it (the clock stood at +300 when it ended)
      assert.strictEqual(row.history[0]!.ms, 300)
    }).pipe(isolated))

  it.live("does not follow redirects: a 3xx is a failed attempt and the Location is never visited", () =>
    Effect.gen(function*() {
      const receiver = yield* Receiver.make()
      receiver.respond = (request) =>
        request.path === "/hook" ? { status: 302, headers: { location: receiver.url("/elsewhere") } } : { status: 200 }
      const { orgId } = yield* seedOrg()
      const eventId = yield* enqueue(orgId, "call_1", "call_ended", receiver.url())
      yield* deliver()
      assert.deepStrictEqual(receiver.received.map((r) => r.path), ["/hook"])
      const row = yield* eventRow(eventId)
      assert.strictEqual(row.state, "pending")
      assert.strictEqual(row.last_status, 302)
    }).pipe(isolated))

  it.live("reads at most a few KiB of a huge response", () =>
    Effect.gen(function*() {
      const receiver = yield* Receiver.make()
      const huge = Buffer.alloc(20 * 1024 * 1024, "x")
      receiver.respond = (request) => ({ status: request.body.includes("call_2") ? 500 : 200, body: huge })
      const { orgId } = yield* seedOrg()
      const ok = yield* enqueue(orgId, "call_1", "call_ended", receiver.url())
      const bad = yield* enqueue(orgId, "call_2", "call_ended", receiver.url())
      // the round ends while the Clock stands still, so no deadline ended it: the sender stopped reading
      const round = yield* Effect.forkChild(deliver())
      yield* waitUntil(
        "the round to end with the Clock standing still (no timeout can have ended it)",
        Effect.sync(() => round.pollUnsafe() !== undefined),
        { timeoutMs: 10_000 }
      )
      assert.strictEqual(yield* Fiber.join(round), 2)
      // and closed the connections: neither 20 MiB answer was sent to its end (loopback's socket buffers hold a
      // few MiB at most, so an answer finishes only if the client reads it)
      yield* waitUntil("the receiver to see both answers cut off", Effect.sync(() => receiver.cutOff === 2), {
        state: () => ({ cutOff: receiver.cutOff })
      })
      assert.strictEqual((yield* eventRow(ok)).state, "delivered")
      const row = yield* eventRow(bad)
      assert.strictEqual(row.state, "pending")
      assert.isAtMost(row.last_error!.length, 512)
    }).pipe(isolated))

  it.live("refuses loopback, private and metadata targets unless private addresses are allowed", () =>
    Effect.gen(function*() {
      const receiver = yield* Receiver.make()
      const { orgId } = yield* seedOrg()
      const urls = [
        receiver.url(), // 127.0.0.1
        `http://localhost:${receiver.port}/hook`, // a name that resolves to loopback
        `http://[::ffff:127.0.0.1]:${receiver.port}/hook`,
        `http://[::1]:${receiver.port}/hook`,
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/hook",
        "http://[fd00:ec2::254]/"
      ]
      const ids: Array<string> = []
      for (const [i, url] of urls.entries()) {
        ids.push(yield* enqueue(orgId, `call_${i}`, "call_ended", url, { timeoutMs: 1_000 }))
      }
      yield* deliver({ allowPrivate: false })
      assert.strictEqual(receiver.received.length, 0)
      for (const id of ids) {
        const row = yield* eventRow(id)
        assert.strictEqual(row.state, "pending")
        assert.match(row.last_error!, /^refused: /, id)
      }
      // the same events with SVC_WEBHOOK_ALLOW_PRIVATE=true: the receiver's go through; the unreachable private
      // targets may hang until their 1 s timeout, which runs on the TestClock: it is moved a second at a time until
      // the round is over
      yield* TestClock.adjust(3_600_000)
      const round = yield* Effect.forkChild(deliver({ allowPrivate: true }))
      yield* waitUntil(
        "the round with private addresses allowed to end",
        Effect.andThen(TestClock.adjust(1_000), Effect.sync(() => round.pollUnsafe() !== undefined)),
        { everyMs: 50 }
      )
      yield* Fiber.join(round)
      assert.isAtLeast(receiver.received.length, 2)
    }).pipe(isolated))

  it.live("delivers a call's events in order: a later event waits while an earlier one is pending", () =>
    Effect.gen(function*() {
      const receiver = yield* Receiver.make()
      let failFirst = true
      receiver.respond = (request) => {
        if (request.body.includes("call_started") && failFirst) {
          failFirst = false
          return { status: 500 }
        }
        return { status: 200 }
      }
      const { orgId } = yield* seedOrg()
      const started = yield* enqueue(orgId, "call_1", "call_started", receiver.url())
      const ended = yield* enqueue(orgId, "call_1", "call_ended", receiver.url())
      const other = yield* enqueue(orgId, "call_2", "call_ended", receiver.url())
      yield* deliver()
      // call_1's end waits behind its failed start; call_2 is not held back
      assert.strictEqual((yield* eventRow(ended)).attempts, 0)
      assert.strictEqual((yield* eventRow(other)).state, "delivered")
      yield* TestClock.setTime((yield* eventRow(started)).due_at)
      yield* deliver()
      assert.strictEqual((yield* eventRow(ended)).state, "delivered")
      const order = receiver.received.filter((r) => r.body.includes("call_1")).map((r) => r.headers["x-svc-event"])
      assert.deepStrictEqual(order, ["call_started", "call_started", "call_ended"])
    }).pipe(isolated))

  it.live("sends nothing unsigned: an org without a secret keeps its events pending until it has one", () =>
    Effect.gen(function*() {
      const receiver = yield* Receiver.make()
      const { orgId } = yield* seedOrg({ secret: false })
      const eventId = yield* enqueue(orgId, "call_1", "call_ended", receiver.url())
      yield* deliver()
      assert.strictEqual(receiver.received.length, 0)
      assert.match((yield* eventRow(eventId)).last_error!, /no webhook secret/)
      const repo = yield* WebhooksRepo
      yield* repo.createSecret(orgId, 3_600_000, yield* Clock.currentTimeMillis)
      yield* TestClock.adjust(60_000)
      yield* deliver()
      assert.strictEqual((yield* eventRow(eventId)).state, "delivered")
    }).pipe(isolated))

  it.live("rotates secrets: the old one signs during the grace period, the new one signs -next, then takes over", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const receiver = yield* Receiver.make()
      const { orgId, secret: old } = yield* seedOrg()
      const repo = yield* WebhooksRepo
      const fresh = yield* repo.createSecret(orgId, 3_600_000, yield* Clock.currentTimeMillis)
      yield* enqueue(orgId, "call_1", "call_ended", receiver.url())
      yield* deliver()
      const first = receiver.received[0]!
      const verify = (secret: string, header: unknown) =>
        Effect.promise(() => Retell.verify(first.body, secret, String(header)))
      assert.isTrue(yield* verify(old!, first.headers["x-svc-signature"]))
      assert.isTrue(yield* verify(fresh, first.headers["x-svc-signature-next"]))
      assert.isFalse(yield* verify(fresh, first.headers["x-svc-signature"]))
      // after the grace period (the SDK's clock is real: check with the HMAC's own scheme)
      yield* TestClock.adjust(3_600_001)
      yield* enqueue(orgId, "call_2", "call_ended", receiver.url())
      yield* deliver()
      const second = receiver.received[1]!
      const { sign } = yield* Effect.promise(() => import("../../src/webhooks/Signature.ts"))
      const v = Number(/^v=(\d+)/.exec(String(second.headers["x-svc-signature"]))![1])
      assert.strictEqual(second.headers["x-svc-signature"], sign(second.body, fresh, v))
      assert.isUndefined(second.headers["x-svc-signature-next"])
    }).pipe(isolated))

  it.live("an event held by a worker that died is delivered by another once the lease ends (at least once)", () =>
    Effect.gen(function*() {
      const receiver = yield* Receiver.make()
      const { orgId } = yield* seedOrg()
      const eventId = yield* enqueue(orgId, "call_1", "call_ended", receiver.url(), { timeoutMs: 1_000 })
      const repo = yield* WebhooksRepo
      const now = yield* Clock.currentTimeMillis
      const claim = (owner: string, at: number) =>
        repo.claim({ owner, now: at, limit: 10, perOrg: 10, inFlight: new Map(), after: "", leaseMarginMs: 5_000 })
      // worker A claims and dies before writing a result
      assert.strictEqual((yield* claim("worker-a", now)).length, 1)
      // within the lease no one else gets it
      assert.strictEqual((yield* claim("worker-b", now + 5_999)).length, 0)
      yield* TestClock.setTime(now + 6_000)
      assert.strictEqual(yield* deliver({ owner: "worker-b" }), 1)
      const row = yield* eventRow(eventId)
      assert.strictEqual(row.state, "delivered")
      assert.strictEqual(row.attempts, 2)
      // A's late result is not written over B's
      const late = yield* repo.complete("worker-a", now + 7_000, [{
        eventSeq: "0",
        state: "pending",
        dueAt: now + 8_000,
        status: 500,
        error: "late",
        millis: 1
      }])
      assert.strictEqual(late, 0)
    }).pipe(isolated))
})
