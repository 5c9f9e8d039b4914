// Admission control (issue 17 item 2, decision 0546): at most maxInFlight requests run, maxQueued wait up to the
// queue timeout, the rest are refused at once with 503 in the error shape; health and metrics always pass.
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { TestClock } from "effect/testing"
import { Admission, middleware } from "../src/http/Admission.ts"

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
