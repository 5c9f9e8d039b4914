// The dispatcher's reconciliation and shutdown paths with the Twilio adapter against the double (issue 14, "Done
// when"; docs/dialer.md "A test for a new adapter"): real PostgreSQL, real time, faults injected at the double;
// every key has at most one call at the double and every task ends. Status callbacks reach svc-server's real
// `POST /carrier/twilio/status` (tools/test/support/TwilioSide.ts); moved here from apps/scheduler for that (issue
// 28, item 5: apps never import each other, tools/ composes both). Every wait is for a condition, bounded.
import { assert, describe, it } from "@effect/vitest"
import { Dialer } from "@svc/domain/ports/Dialer.ts"
import { waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import { Dispatcher } from "@svc/scheduler/dispatch/Dispatcher.ts"
import * as SchedulerConfig from "@svc/scheduler/runtime/SchedulerConfig.ts"
import { BatchProgressRepo } from "@svc/store/batches/BatchProgressRepo.ts"
import { TwilioCallsRepo } from "@svc/store/carriers/twilio/TwilioCallsRepo.ts"
import { Effect, Exit, Fiber, Layer, Logger, References, Scope } from "effect"
import { SqlClient } from "effect/sql"
import {
  createBatch,
  FROM,
  inFlightOf,
  seedOrg,
  stateCounts,
  StoreLayer,
  taskStates
} from "../../apps/scheduler/test/fixtures/Fixtures.ts"
import { scripts, type TwilioDouble } from "../../apps/scheduler/test/fixtures/TwilioDouble.ts"
import { twilioSide } from "./support/TwilioSide.ts"

const Layers = Layer.mergeAll(TwilioCallsRepo.layer, BatchProgressRepo.layer).pipe(Layer.provideMerge(StoreLayer))
/**
 * A test on its own database, on the live clock (the double's calls move in real time). Its scope closes before the
 * database (see `isolated` in Fixtures.ts): worker loops are forked into it.
 */
const own = <A, E, R>(self: Effect.Effect<A, E, R>) => self.pipe(Effect.scoped, Effect.provide(Layers, { local: true }))

const settings = (overrides: Partial<SchedulerConfig.SchedulerSettings> = {}) =>
  SchedulerConfig.defaults({ reconcileRecheckMs: 100, pollMs: 100, ...overrides })

/** The double's calls, for a failure message. */
const statuses = (double: TwilioDouble) => [...double.calls.values()].map((c) => `${c.to} ${c.status}`)

/** Calls the double created per task number of the batch. */
const callsPerNumber = (batch: string, createsFor: (to: string, from: string) => number) =>
  Effect.map(taskStates(batch), (rows) => rows.map((r) => createsFor(r.to_number, FROM)))

/**
 * Runs the worker's passes (a tick and its dials settled), 100 ms of live time apart, until the batch's task states
 * satisfy `done`; fails after 20 s naming what it waited for and the states it last saw.
 */
const tickUntil = (
  worker: Dispatcher["Service"],
  batch: string,
  what: string,
  done: (counts: Record<string, number>) => boolean
) => {
  let counts: Record<string, number> = {}
  return waitUntil(
    what,
    Effect.gen(function*() {
      yield* worker.tick
      yield* worker.settle
      counts = yield* stateCounts(batch).pipe(Effect.orDie)
      return done(counts)
    }),
    { everyMs: 100, state: () => counts }
  )
}

/** The status of the adapter's record of a call, by its SID. */
const recordStatus = (sid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ status: string }>`SELECT status FROM twilio_calls WHERE call_sid = ${sid}`
    return rows[0]?.status
  }).pipe(Effect.orDie)

describe("Dispatcher with the Twilio adapter", () => {
  it.live("dials every task once through Twilio and records the ends", () =>
    own(Effect.gen(function*() {
      const { double, dialer } = yield* twilioSide()
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, { count: 5 })
      const worker = yield* Dispatcher.make(settings()).pipe(Effect.provideService(Dialer, dialer))
      yield* tickUntil(worker, batch, "5 tasks completed", (c) => c["completed"] === 5)
      assert.deepStrictEqual(yield* callsPerNumber(batch, (t, f) => double.createsFor(t, f)), [1, 1, 1, 1, 1])
      for (const row of yield* taskStates(batch)) assert.strictEqual(row.state_reason, "answered")
    })))

  it.live("on shutdown releases calls in flight to reconciliation, which records them without redialling", () =>
    own(Effect.gen(function*() {
      const { double, dialer } = yield* twilioSide({ script: () => scripts.ringing() })
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, { count: 4 })
      const scope = yield* Scope.make()
      const worker = yield* Dispatcher.make(settings({ shutdownGraceMs: 0 })).pipe(
        Scope.provide(scope),
        Effect.provideService(Dialer, dialer)
      )
      const running = yield* Effect.forkScoped(worker.run)
      // Every call ringing at the double before the shutdown (its script moves each from initiated to ringing on
      // its own clock; under load CI once shut down with one still initiated), so what is asserted below is what the
      // shutdown did, not how far the double had got.
      const allRinging = () =>
        double.calls.size === 4 && [...double.calls.values()].every((call) => call.status === "ringing")
      yield* waitUntil(
        "4 calls in flight and ringing",
        Effect.map(worker.inFlightCount, (n) => n === 4 && allRinging()),
        {
          state: () => statuses(double)
        }
      )
      yield* Fiber.interrupt(running)
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual((yield* stateCounts(batch))["unknown"], 4)
      // shutdown hung up nothing
      for (const call of double.calls.values()) assert.strictEqual(call.status, "ringing")

      const successor = yield* Dispatcher.make(settings()).pipe(Effect.provideService(Dialer, dialer))
      // the released tasks are due for a look once their lease has expired (releaseToUnknown sets it to the shutdown's
      // time; claimUnknown takes tasks whose lease_expires_at <= now)
      const sql = yield* SqlClient.SqlClient
      yield* waitUntil(
        "the 4 unknown tasks' leases expired",
        Effect.map(
          sql<{ n: number }>`
            SELECT count(*)::int4 AS n FROM batch_call_tasks
            WHERE batch_call_id = ${batch} AND state = 'unknown' AND lease_expires_at <= ${Date.now()}`,
          (rows) => rows[0]!.n === 4
        ).pipe(Effect.orDie)
      )
      const ongoing = yield* successor.tick
      assert.strictEqual(ongoing.reconciled.ongoing, 4)
      assert.strictEqual(ongoing.claimed, 0)
      for (const call of double.calls.values()) double.finish(call.sid, { status: "completed" })
      yield* tickUntil(successor, batch, "4 tasks completed", (c) => c["completed"] === 4)
      assert.deepStrictEqual(yield* callsPerNumber(batch, (t, f) => double.createsFor(t, f)), [1, 1, 1, 1])
    })))

  it.live("a cancelled batch's ringing calls are ended through the API; an answered one goes on", () =>
    own(Effect.gen(function*() {
      const progress = yield* BatchProgressRepo
      const { double, dialer } = yield* twilioSide({ script: () => scripts.ringing() })
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, { count: 3 })
      const scope = yield* Scope.make()
      const worker = yield* Dispatcher.make(settings()).pipe(
        Scope.provide(scope),
        Effect.provideService(Dialer, dialer)
      )
      const running = yield* Effect.forkScoped(worker.run)
      const live = () => [...double.calls.values()]
      const ringing = () => live().filter((c) => c.status === "ringing").length
      yield* waitUntil(
        "3 calls in flight and ringing",
        Effect.map(worker.inFlightCount, (n) => n === 3 && ringing() === 3),
        {
          state: () => statuses(double)
        }
      )
      // one call is answered before the cancel: it goes on
      const answered = live()[0]!
      double.finish(answered.sid, { status: "in-progress", answeredBy: "human" })
      assert.strictEqual(answered.status, "in-progress")
      // its answered callback applied before the cancel: the adapter knows it is in progress
      yield* waitUntil(
        "the answered call's record in-progress",
        Effect.map(recordStatus(answered.sid), (s) => s === "in-progress")
      )
      yield* progress.cancel(orgId, batch, Date.now()).pipe(Effect.orDie)
      // within a poll (pollMs) each ringing call is cancelled at the double, which calls back `canceled`
      yield* waitUntil(
        "2 calls canceled",
        Effect.sync(() => live().filter((c) => c.status === "canceled").length >= 2),
        {
          state: () => statuses(double)
        }
      )
      assert.deepStrictEqual(live().map((c) => c.status).sort(), ["canceled", "canceled", "in-progress"])
      double.finish(answered.sid, { status: "completed", answeredBy: "human" })
      let counts: Record<string, number> = {}
      yield* waitUntil(
        "3 tasks ended",
        Effect.map(stateCounts(batch), (c) => {
          counts = c
          return (c["completed"] ?? 0) + (c["failed"] ?? 0) === 3
        }).pipe(Effect.orDie),
        { state: () => counts }
      )
      yield* Fiber.interrupt(running)
      yield* Scope.close(scope, Exit.void)
      const reasons = (yield* taskStates(batch)).map((r) => r.state_reason).sort()
      assert.deepStrictEqual(reasons, ["answered", "failed: manual_stopped", "failed: manual_stopped"])
      assert.deepStrictEqual(yield* callsPerNumber(batch, (t, f) => double.createsFor(t, f)), [1, 1, 1])
    })))

  for (const inProgressCancel of ["refused", "unaffected"] as const) {
    it.live(`decision 0605, a cancel Twilio does not carry out (${inProgressCancel}): a call answered before the adapter knew goes on, and the task ends answered`, () =>
      own(Effect.gen(function*() {
        // Status=canceled does "not affect calls already in progress" (TwilioDouble.ts [MODIFY]): answered by the
        // time the cancel arrives, with the answer's callback lost (and no fetch to learn it), the call is still
        // ringing in the adapter's record, so the adapter asks Twilio to cancel it, and Twilio does not. The double
        // answers that as 400/21220 (`refused`) or as 200 with the call unchanged (`unaffected`): the docs do not say
        // which. Either way the adapter logs it, changes nothing, and waits for the call's end.
        const progress = yield* BatchProgressRepo
        const lines: Array<{ message: string; annotations: Record<string, unknown> }> = []
        const capture = Logger.layer([
          Logger.make(({ fiber, message }) =>
            lines.push({
              message: String(message),
              annotations: { ...fiber.getRef(References.CurrentLogAnnotations) }
            })
          )
        ])
        const { double, dialer } = yield* twilioSide({
          script: () => scripts.ringing(),
          options: { fetchAfterMs: 600_000 }
        })
        double.inProgressCancel = inProgressCancel
        const orgId = yield* seedOrg()
        const batch = yield* createBatch(orgId, { count: 2 })
        const scope = yield* Scope.make()
        const worker = yield* Dispatcher.make(settings()).pipe(
          Scope.provide(scope),
          Effect.provideService(Dialer, dialer)
        )
        const running = yield* Effect.forkScoped(worker.run.pipe(Effect.provide(capture)))
        const live = () => [...double.calls.values()]
        yield* waitUntil(
          "2 calls in flight and ringing, their records ringing",
          Effect.gen(function*() {
            if ((yield* worker.inFlightCount) !== 2 || live().filter((c) => c.status === "ringing").length !== 2) {
              return false
            }
            for (const call of live()) if ((yield* recordStatus(call.sid)) !== "ringing") return false
            return true
          }),
          { state: () => statuses(double) }
        )
        const [answered, ringing] = live()
        double.loseCallback = (call, event) => call.sid === answered!.sid && event === "answered"
        double.finish(answered!.sid, { status: "in-progress" })
        yield* progress.cancel(orgId, batch, Date.now()).pipe(Effect.orDie)
        // within a poll both calls are asked to cancel: the ringing one is, the answered one is not
        yield* waitUntil("a cancel request for each call", Effect.sync(() => double.updates.length === 2), {
          state: () => double.updates
        })
        const update = (sid: string) => double.updates.find((u) => u.sid === sid)!
        assert.deepStrictEqual(update(answered!.sid), {
          sid: answered!.sid,
          requested: "canceled",
          callStatus: "in-progress",
          httpStatus: inProgressCancel === "refused" ? 400 : 200
        })
        assert.deepStrictEqual(update(ringing!.sid), {
          sid: ringing!.sid,
          requested: "canceled",
          callStatus: "ringing",
          httpStatus: 200
        })
        assert.strictEqual(answered!.status, "in-progress")
        assert.strictEqual(yield* recordStatus(answered!.sid), "ringing", "the adapter still thinks it rings")
        // the answered call's conversation ends; its end's callback arrives
        double.finish(answered!.sid, { status: "completed" })
        let counts: Record<string, number> = {}
        yield* waitUntil(
          "2 tasks ended",
          Effect.map(stateCounts(batch), (c) => {
            counts = c
            return (c["completed"] ?? 0) + (c["failed"] ?? 0) === 2
          }).pipe(Effect.orDie),
          { state: () => counts }
        )
        yield* Fiber.interrupt(running)
        yield* Scope.close(scope, Exit.void)
        const reasons = (yield* taskStates(batch)).map((r) => r.state_reason).sort()
        assert.deepStrictEqual(reasons, ["answered", "failed: manual_stopped"])
        assert.deepStrictEqual(yield* callsPerNumber(batch, (t, f) => double.createsFor(t, f)), [1, 1])
        // one cancel request per dial (decision 0605: "once per dial"), and the logs say what happened to each
        assert.strictEqual(double.updates.length, 2)
        const said = (sid: string) =>
          lines.filter((l) => l.annotations["sid"] === sid && l.message.startsWith("batch cancelled")).map((l) =>
            l.message
          )
        assert.deepStrictEqual(said(answered!.sid), ["batch cancelled: ringing call could not be ended"])
        assert.deepStrictEqual(said(ringing!.sid), ["batch cancelled: ringing call ended"])
      })))
  }

  it.live("with a lost create response, a 500 and a 429: every task ends, no key has two calls", () =>
    own(Effect.gen(function*() {
      const { double, dialer } = yield* twilioSide({ callbacks: "duplicated" })
      double.createAnswers.push(
        { _tag: "CreateAndHang" },
        { _tag: "Fail", status: 500, code: 20500 },
        { _tag: "Fail", status: 429, code: 20429 }
      )
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, { count: 6 })
      const worker = yield* Dispatcher.make(settings()).pipe(Effect.provideService(Dialer, dialer))
      // the 500's key waits for createSettledMs before lookup may answer None and it is dialled again
      yield* tickUntil(worker, batch, "6 tasks completed", (c) => c["completed"] === 6)
      const perNumber = yield* callsPerNumber(batch, (t, f) => double.createsFor(t, f))
      assert.deepStrictEqual(perNumber, [1, 1, 1, 1, 1, 1])
      // six calls (one of them the hung create's, one the 500's key's redial) plus the 500 and the 429: 8 requests
      assert.strictEqual(double.createRequests, 8)
      assert.strictEqual(yield* inFlightOf(batch), 0)
    })))
})
