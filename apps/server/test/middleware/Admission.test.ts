// Admission control (issue 17 item 2, decision 0546): at most maxInFlight requests run, maxQueued wait up to the
// queue timeout, the rest are refused at once with 503 in the error shape; health and metrics always pass.
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { TestClock } from "effect/testing"
import * as v8 from "node:v8"
import {
  Admission,
  costOf,
  DEFAULT_QUEUE_TIMEOUT_MS,
  defaultMaxQueued,
  type Entry,
  middleware,
  openFilesLimit,
  refusalMessage
} from "../../src/middleware/Admission.ts"

describe("Admission gate", () => {
  it.effect("admits up to maxInFlight, queues up to maxQueued, refuses beyond at once", () =>
    Effect.gen(function*() {
      const gate = Admission.make({ maxInFlight: 2, maxQueued: 1, queueTimeoutMs: 1_000 })
      assert.isTrue(yield* gate.admit)
      assert.isTrue(yield* gate.admit)
      const waiting = yield* Effect.forkChild(gate.admit)
      yield* Effect.yieldNow
      assert.deepStrictEqual(gate.snapshot(), { inFlight: 2, queued: 1 })
      // the queue is full: refused without waiting
      assert.isFalse(yield* gate.admit)
      yield* gate.release
      assert.isTrue(yield* Fiber.join(waiting), "the slot passes to the first waiter")
      assert.deepStrictEqual(gate.snapshot(), { inFlight: 2, queued: 0 })
      yield* gate.release
      yield* gate.release
      assert.deepStrictEqual(gate.snapshot(), { inFlight: 0, queued: 0 })
    }))

  it.effect("a waiter is refused when the queue timeout passes, and leaves the queue", () =>
    Effect.gen(function*() {
      const gate = Admission.make({ maxInFlight: 1, maxQueued: 5, queueTimeoutMs: 100 })
      assert.isTrue(yield* gate.admit)
      const waiting = yield* Effect.forkChild(gate.admit)
      yield* Effect.yieldNow
      yield* TestClock.adjust("99 millis")
      assert.strictEqual(gate.snapshot().queued, 1)
      yield* TestClock.adjust("1 millis")
      assert.isFalse(yield* Fiber.join(waiting))
      assert.deepStrictEqual(gate.snapshot(), { inFlight: 1, queued: 0 })
      yield* gate.release
      assert.deepStrictEqual(gate.snapshot(), { inFlight: 0, queued: 0 })
    }))

  it.effect("an interrupted waiter (client gone) frees its place; first come, first served", () =>
    Effect.gen(function*() {
      const gate = Admission.make({ maxInFlight: 1, maxQueued: 5, queueTimeoutMs: 10_000 })
      yield* gate.admit
      const first = yield* Effect.forkChild(gate.admit)
      const second = yield* Effect.forkChild(gate.admit)
      const third = yield* Effect.forkChild(gate.admit)
      yield* Effect.yieldNow
      yield* Fiber.interrupt(second)
      assert.strictEqual(gate.snapshot().queued, 2)
      yield* gate.release
      assert.isTrue(yield* Fiber.join(first))
      assert.strictEqual(gate.snapshot().queued, 1)
      yield* gate.release
      assert.isTrue(yield* Fiber.join(third))
      yield* gate.release
      assert.deepStrictEqual(gate.snapshot(), { inFlight: 0, queued: 0 })
    }))

  it.effect("maxInFlight 0 turns the gate off", () =>
    Effect.gen(function*() {
      const gate = Admission.make({ maxInFlight: 0, maxQueued: 0, queueTimeoutMs: 0 })
      for (let i = 0; i < 100; i++) assert.isTrue(yield* gate.admit)
      assert.deepStrictEqual(gate.snapshot(), { inFlight: 0, queued: 0 })
    }))
})

describe("Admission middleware", () => {
  it("answers excess requests 503 in the error shape at once; health always passes; slots come back", async () => {
    const gate = Admission.make({ maxInFlight: 1, maxQueued: 0, queueTimeoutMs: 0 })
    const hold = Effect.runSync(Deferred.make<void>())
    const routes = Layer.mergeAll(
      HttpRouter.add(
        "POST",
        "/list-contacts",
        Effect.as(Deferred.await(hold), HttpServerResponse.jsonUnsafe({ ok: 1 }))
      ),
      HttpRouter.add("GET", "/healthz", HttpServerResponse.text("ok")),
      middleware(gate)
    )
    const { dispose, handler } = HttpRouter.toWebHandler(routes.pipe(Layer.provide(HttpServer.layerServices)), {
      disableLogger: true
    })
    const call = (path: string, method = "POST") =>
      handler(new Request(`http://svc.test${path}`, { method }), Context.empty() as Context.Context<never>)
    try {
      const held = call("/list-contacts")
      await new Promise((resolve) => setImmediate(resolve))
      assert.deepStrictEqual(gate.snapshot(), { inFlight: 1, queued: 0 })
      const refused = await call("/list-contacts")
      assert.strictEqual(refused.status, 503)
      assert.strictEqual(refused.headers.get("retry-after"), "1")
      const body = await refused.json() as { status: string; message: string }
      assert.strictEqual(body.status, "error")
      assert.include(body.message, "SVC_HTTP_MAX_IN_FLIGHT")
      assert.strictEqual((await call("/healthz", "GET")).status, 200)
      Effect.runSync(Deferred.succeed(hold, undefined))
      assert.strictEqual((await held).status, 200)
      assert.deepStrictEqual(gate.snapshot(), { inFlight: 0, queued: 0 })
      assert.strictEqual((await call("/list-contacts")).status, 200)
    } finally {
      await dispose()
    }
  })
})

// Issue 27, item 7 (decision 0547): the queue is bounded by the work ahead, sized by each request's cost and the
// service time measured on finished requests, not by a count of 20; the 503 says the real numbers and why.
describe("Admission sized by cost", () => {
  const KiB = 1024

  it("a request costs one unit per started 64 KiB of declared body, at least one", () => {
    assert.strictEqual(costOf(0), 1)
    assert.strictEqual(costOf(64 * KiB), 1)
    assert.strictEqual(costOf(64 * KiB + 1), 2)
    assert.strictEqual(costOf(1024 * KiB), 16)
  })

  it("parked requests are bounded by memory and file descriptors: a sixteenth of the heap limit, half the files", () => {
    // 4 GiB of heap at 12 KiB each, a sixteenth: 21,845; with 20,000 files: 10,000; with 1,024 (a common soft
    // limit): 512
    assert.strictEqual(defaultMaxQueued(4 * 1024 ** 3, undefined), 21_845)
    assert.strictEqual(defaultMaxQueued(4 * 1024 ** 3, 20_000), 10_000)
    assert.strictEqual(defaultMaxQueued(4 * 1024 ** 3, 1_024), 512)
    const here = defaultMaxQueued(v8.getHeapStatistics().heap_size_limit, openFilesLimit())
    assert.isAtLeast(here, 50, "this machine's default holds a burst of 50")
  })

  it.effect("a burst of 50 small requests under the default limits waits its turn: none is refused", () =>
    Effect.gen(function*() {
      const gate = Admission.make({
        maxInFlight: 20,
        maxQueued: defaultMaxQueued(v8.getHeapStatistics().heap_size_limit, openFilesLimit()),
        queueTimeoutMs: DEFAULT_QUEUE_TIMEOUT_MS
      })
      const entries = yield* Effect.forEach(
        Array.from({ length: 50 }, () => 200),
        (bytes) => Effect.forkChild(gate.enter(bytes))
      )
      yield* Effect.yieldNow
      assert.deepStrictEqual(gate.snapshot(), { inFlight: 20, queued: 30 })
      // each finishes after 10 ms; every slot given back passes to the next waiter
      const served: Array<Entry> = []
      for (const fiber of entries) {
        const entry = yield* Fiber.join(fiber)
        served.push(entry)
        yield* TestClock.adjust("10 millis")
        if (entry.admitted) yield* entry.ticket.done
      }
      assert.deepStrictEqual(served.filter((e) => !e.admitted), [])
      assert.deepStrictEqual(gate.snapshot(), { inFlight: 0, queued: 0 })
    }))

  it.effect("refuses at once when the work ahead would take longer than the queue timeout, saying so", () =>
    Effect.gen(function*() {
      const limits = { maxInFlight: 2, maxQueued: 100, queueTimeoutMs: 1_000 }
      const gate = Admission.make(limits)
      // two requests of 100 ms each teach the gate 100 ms per unit
      const first = yield* gate.enter(0)
      const second = yield* gate.enter(0)
      yield* TestClock.adjust("100 millis")
      if (first.admitted) yield* first.ticket.done
      if (second.admitted) yield* second.ticket.done
      assert.strictEqual(gate.serviceMsPerUnit(), 100)
      yield* gate.enter(0)
      yield* gate.enter(0)
      // a newcomer behind n small waiters expects (n + 1) x 100 ms / 2 slots: 19 ahead is 1,000 ms, within the bound
      const waiting = yield* Effect.forEach(Array.from({ length: 20 }), () => Effect.forkChild(gate.enter(0)))
      yield* Effect.yieldNow
      assert.deepStrictEqual(gate.snapshot(), { inFlight: 2, queued: 20 })
      const refused = yield* gate.enter(0)
      assert.isFalse(refused.admitted)
      if (!refused.admitted) {
        assert.deepStrictEqual(refused.refusal, {
          reason: "too much work ahead",
          running: 2,
          waiting: 20,
          expectedMs: 1_050
        })
        assert.strictEqual(
          refusalMessage(limits, refused.refusal),
          "server busy: 2 requests running (SVC_HTTP_MAX_IN_FLIGHT 2) and 20 waiting, about 1050 ms of work ahead " +
            "of this request (SVC_HTTP_QUEUE_TIMEOUT_MS 1000); retry in 1 s"
        )
      }
      for (const fiber of waiting) yield* Fiber.interrupt(fiber)
    }))

  it.effect("a large request ahead counts for its size", () =>
    Effect.gen(function*() {
      const gate = Admission.make({ maxInFlight: 2, maxQueued: 100, queueTimeoutMs: 1_000 })
      const first = yield* gate.enter(0)
      const second = yield* gate.enter(0)
      yield* TestClock.adjust("100 millis")
      if (first.admitted) yield* first.ticket.done
      if (second.admitted) yield* second.ticket.done
      yield* gate.enter(0)
      yield* gate.enter(0)
      // a 1 MiB upload waiting (16 units): a small newcomer expects (16 + 1) x 50 = 850 ms, and is queued
      const large = yield* Effect.forkChild(gate.enter(1024 * KiB))
      yield* Effect.yieldNow
      const small = yield* Effect.forkChild(gate.enter(0))
      yield* Effect.yieldNow
      assert.strictEqual(gate.snapshot().queued, 2)
      // with another 1 MiB upload ahead: (33 + 1) x 50 = 1,700 ms, refused
      const secondLarge = yield* Effect.forkChild(gate.enter(1024 * KiB))
      yield* Effect.yieldNow
      const refused = yield* gate.enter(0)
      assert.isFalse(refused.admitted)
      for (const fiber of [large, small, secondLarge]) yield* Fiber.interrupt(fiber)
    }))

  it.effect("one slow request moves the estimate by at most four times its value", () =>
    Effect.gen(function*() {
      const gate = Admission.make({ maxInFlight: 2, maxQueued: 10, queueTimeoutMs: 1_000 })
      const first = yield* gate.enter(0)
      yield* TestClock.adjust("100 millis")
      if (first.admitted) yield* first.ticket.done
      const slow = yield* gate.enter(0)
      yield* TestClock.adjust("10 seconds")
      if (slow.admitted) yield* slow.ticket.done
      // 100 + 0.1 x (min(10,000, 4 x 100) - 100)
      assert.strictEqual(gate.serviceMsPerUnit(), 130)
    }))

  it.effect("a request that waited the whole queue timeout is refused with the numbers of that moment", () =>
    Effect.gen(function*() {
      const limits = { maxInFlight: 1, maxQueued: 5, queueTimeoutMs: 100 }
      const gate = Admission.make(limits)
      yield* gate.enter(0)
      const waiter = yield* Effect.forkChild(gate.enter(0))
      yield* Effect.yieldNow
      yield* TestClock.adjust("100 millis")
      const entry = yield* Fiber.join(waiter)
      assert.isFalse(entry.admitted)
      if (!entry.admitted) {
        assert.strictEqual(
          refusalMessage(limits, entry.refusal),
          "server busy: 1 request running (SVC_HTTP_MAX_IN_FLIGHT 1) and 0 waiting; this request waited 100 ms " +
            "(SVC_HTTP_QUEUE_TIMEOUT_MS); retry in 1 s"
        )
      }
    }))
})
