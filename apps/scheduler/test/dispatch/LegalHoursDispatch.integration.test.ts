import { assert, describe, it } from "@effect/vitest"
import { defaultPolicy, type PolicyOverride } from "@svc/domain/compliance/CallingPolicy.ts"
import { decideOverride } from "@svc/domain/compliance/EffectivePolicy.ts"
import { constraintOf } from "@svc/domain/compliance/LegalGroups.ts"
import { isLegalAt } from "@svc/domain/compliance/LegalHours.ts"
import { SchedulerSimulatedCarrier } from "@svc/store/carriers/simulated/SchedulerSimulatedCarrier.ts"
import { CallingPolicyRepo } from "@svc/store/policies/CallingPolicyRepo.ts"
import { Effect, Result } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as SimulatedDialer from "../../src/carriers/simulated/SimulatedDialer.ts"
import { Dispatcher } from "../../src/dispatch/Dispatcher.ts"
import * as SchedulerConfig from "../../src/runtime/SchedulerConfig.ts"
import { batchRow, createBatch, dialerSettings, isolated, seedOrg, taskStates } from "../fixtures/Fixtures.ts"

// Legal hours in dispatch (issue 15 item 3, decision 0623): the end-to-end cast, one batch with numbers in
// Hawaii, Arizona, Chicago, New York, Florida and Saskatchewan (and one London number, which has no legal hours in
// this phase), a window 09:00-20:00 in America/New_York, the clock pinned at instants across Tuesday 2026-12-01
// (EST, UTC-5; no DST, not a holiday).

const at = (iso: string) => Date.parse(iso)
/** An override the admin command would store (decideOverride accepts it, or the test is wrong). */
const decided = (override: PolicyOverride) => Result.getOrThrow(decideOverride(override))

const HONOLULU = "+18085550100"
const PHOENIX = "+16025550100"
const CHICAGO = "+13125550100"
const NEW_YORK = "+12125550100"
const MIAMI = "+13055550100"
const REGINA = "+13065550100"
const LONDON = "+442071838750"
const CAST = [HONOLULU, PHOENIX, CHICAGO, NEW_YORK, MIAMI, REGINA, LONDON]

const WINDOW = { windows: [{ start: 540, end: 1200 }], timezone: "America/New_York" }

const scenario = <A, E, R>(
  body: Effect.Effect<A, E, R>,
  options: {
    readonly dialer?: Partial<SchedulerConfig.SimulatedDialerSettings>
    readonly settings?: Partial<SchedulerConfig.SchedulerSettings>
  } = {}
) =>
  Effect.gen(function*() {
    const dispatcher = yield* Dispatcher.make(SchedulerConfig.defaults(options.settings))
    return yield* body.pipe(Effect.provideService(Dispatcher, dispatcher))
  }).pipe(Effect.provide(SimulatedDialer.layerMemory(dialerSettings(options.dialer))), isolated)

const tick = Effect.gen(function*() {
  return yield* (yield* Dispatcher).tick
})
const settle = Effect.gen(function*() {
  yield* (yield* Dispatcher).settle
})

/** The numbers dialled for a batch, with when. */
const dialsOf = (batchCallId: string) =>
  Effect.gen(function*() {
    const carrier = yield* SchedulerSimulatedCarrier
    const attempts = yield* Effect.orDie(carrier.attempts)
    return attempts
      .filter((a) => a.request.batch_call_id === batchCallId)
      .map((a) => ({ to: a.request.to_number, at: a.attemptedAt }))
  })

/** The `state_reason` of each of the batch's tasks still pending, by number. */
const waiting = (batch: string) =>
  Effect.gen(function*() {
    const states = yield* taskStates(batch)
    return Object.fromEntries(states.filter((s) => s.state === "pending").map((s) => [s.to_number, s.state_reason]))
  })

/** One pass at `iso`, its dials settled; returns the pass's report and the numbers it dialled. */
const passAt = (batch: string, iso: string) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(at(iso))
    const before = (yield* dialsOf(batch)).length
    const report = yield* tick
    yield* settle
    const dialled = (yield* dialsOf(batch)).slice(before).map((d) => d.to).sort()
    return { report, dialled }
  })

describe("Dispatcher with legal hours", () => {
  it.live("dials each of six zones only inside its own legal hours and the batch's window, waking at each opening", () =>
    scenario(Effect.gen(function*() {
      yield* TestClock.setTime(at("2026-12-01T12:00:00Z"))
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, {
        tasks: CAST.map((to_number) => ({ to_number })),
        call_time_window: WINDOW
      })

      // 07:00 in New York: the window is closed, the batch waits for it (09:00 EST = 14:00Z)
      const closed = yield* passAt(batch, "2026-12-01T12:00:00Z")
      assert.deepStrictEqual(closed.dialled, [])
      assert.strictEqual(closed.report.postponed, 1)
      assert.strictEqual((yield* batchRow(batch)).next_dispatch_at, at("2026-12-01T14:00:00Z"))

      // 09:00 in New York and Miami, 08:00 in Chicago and Regina: legal there; 07:00 in Phoenix, 04:00 in Honolulu
      const nine = yield* passAt(batch, "2026-12-01T14:00:00Z")
      assert.deepStrictEqual(nine.dialled, [LONDON, MIAMI, NEW_YORK, CHICAGO, REGINA].sort())
      // nothing left that is legal now: the batch sleeps until Phoenix opens (08:00 MST = 15:00Z), not a poll
      assert.strictEqual((yield* batchRow(batch)).next_dispatch_at, at("2026-12-01T15:00:00Z"))
      assert.strictEqual(nine.report.nextAt, at("2026-12-01T15:00:00Z"))
      // the tasks left say which rule holds them back, in which zone, and until when
      assert.deepStrictEqual(yield* waiting(batch), {
        [HONOLULU]: "legal_hours: US 08:00-21:00 Pacific/Honolulu until 2026-12-01T18:00:00Z",
        [PHOENIX]: "legal_hours: US 08:00-21:00 America/Phoenix until 2026-12-01T15:00:00Z"
      })

      // in between the batch is not even due
      const between = yield* passAt(batch, "2026-12-01T14:59:59Z")
      assert.deepStrictEqual(between.dialled, [])

      const phoenix = yield* passAt(batch, "2026-12-01T15:00:00Z")
      assert.deepStrictEqual(phoenix.dialled, [PHOENIX])
      assert.strictEqual((yield* batchRow(batch)).next_dispatch_at, at("2026-12-01T18:00:00Z"))
      assert.deepStrictEqual(yield* waiting(batch), {
        [HONOLULU]: "legal_hours: US 08:00-21:00 Pacific/Honolulu until 2026-12-01T18:00:00Z"
      })

      assert.deepStrictEqual((yield* passAt(batch, "2026-12-01T17:59:00Z")).dialled, [])
      const honolulu = yield* passAt(batch, "2026-12-01T18:00:00Z")
      assert.deepStrictEqual(honolulu.dialled, [HONOLULU])

      // every task dialled once, each at an instant legal in every zone of its number and inside the window
      const dials = yield* dialsOf(batch)
      assert.deepStrictEqual(dials.map((d) => d.to).sort(), [...CAST].sort())
      for (const dial of dials) {
        const constraint = constraintOf(dial.to, defaultPolicy)
        if (constraint !== undefined) {
          assert.isTrue(isLegalAt(dial.at, constraint.zones, constraint.rules), `${dial.to} at ${dial.at}`)
        }
      }
      const states = yield* taskStates(batch)
      assert.isTrue(states.every((s) => s.state === "completed" || s.state === "failed"))
      // a claimed task's legal-hours reason went with the claim
      assert.isFalse(states.some((s) => s.state_reason?.startsWith("legal_hours") === true))
      assert.strictEqual((yield* batchRow(batch)).status, "completed")
    })))

  it.live("a batch whose only tasks are blocked claims nothing and sleeps to their opening; the window still binds", () =>
    scenario(Effect.gen(function*() {
      // 20:30 in New York (01:30Z on 2 Dec): the window has closed; Honolulu is at 15:30, legal, but must wait
      yield* TestClock.setTime(at("2026-12-02T01:30:00Z"))
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, {
        tasks: [{ to_number: HONOLULU }, { to_number: "+18085550101" }],
        call_time_window: WINDOW
      })
      const night = yield* passAt(batch, "2026-12-02T01:30:00Z")
      assert.deepStrictEqual(night.dialled, [])
      assert.strictEqual((yield* batchRow(batch)).next_dispatch_at, at("2026-12-02T14:00:00Z"))
      // the window opens at 14:00Z (04:00 in Honolulu): not legal there; the batch sleeps until 18:00Z
      const opening = yield* passAt(batch, "2026-12-02T14:00:00Z")
      assert.deepStrictEqual(opening.dialled, [])
      assert.strictEqual(opening.report.claimed, 0)
      assert.strictEqual((yield* batchRow(batch)).next_dispatch_at, at("2026-12-02T18:00:00Z"))
      assert.strictEqual(opening.report.nextAt, at("2026-12-02T18:00:00Z"))
      assert.strictEqual((yield* batchRow(batch)).status, "scheduled")
      const legal = yield* passAt(batch, "2026-12-02T18:00:00Z")
      assert.deepStrictEqual(legal.dialled, [HONOLULU, "+18085550101"].sort())
    })))

  it.live("Florida's stricter rule: a Miami number is not dialled after 20:00 local while a New York one may be", () =>
    scenario(Effect.gen(function*() {
      // no window: federal 08:00-21:00 binds New York, FL 08:00-20:00 binds Miami; 20:30 EST = 01:30Z
      yield* TestClock.setTime(at("2026-12-02T01:30:00Z"))
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, { tasks: [{ to_number: MIAMI }, { to_number: NEW_YORK }] })
      const evening = yield* passAt(batch, "2026-12-02T01:30:00Z")
      assert.deepStrictEqual(evening.dialled, [NEW_YORK])
      // the stricter state rule is the one named
      assert.deepStrictEqual(yield* waiting(batch), {
        [MIAMI]: "legal_hours: FL 08:00-20:00 America/New_York until 2026-12-02T13:00:00Z"
      })
      // Miami opens at 08:00 EST = 13:00Z
      assert.strictEqual((yield* batchRow(batch)).next_dispatch_at, at("2026-12-02T13:00:00Z"))
      const morning = yield* passAt(batch, "2026-12-02T13:00:00Z")
      assert.deepStrictEqual(morning.dialled, [MIAMI])
    })))

  it.live("an org's calling policy set mid-batch binds its next claim; clearing it wakes the batch at once", () =>
    scenario(Effect.gen(function*() {
      const NEW_YORK_2 = "+12125550101"
      // 19:30 EST on Tuesday 1 Dec: federal hours (08:00-21:00) allow New York; one line, so one call per pass
      yield* TestClock.setTime(at("2026-12-02T00:30:00Z"))
      const orgId = yield* seedOrg(1)
      const batch = yield* createBatch(orgId, { tasks: [{ to_number: NEW_YORK }, { to_number: NEW_YORK_2 }] })
      const first = yield* passAt(batch, "2026-12-02T00:30:00Z")
      assert.deepStrictEqual(first.dialled, [NEW_YORK])

      // the org adds a NY row, 08:00-20:00 (stricter than federal: accepted without approval); at 20:30 EST the
      // worker, which resolved the batch's groups under the default policy, must apply it
      const policies = yield* Effect.service(CallingPolicyRepo).pipe(Effect.provide(CallingPolicyRepo.layer))
      const ny = {
        ...defaultPolicy.federal,
        jurisdiction: "NY",
        hours: [{ ...defaultPolicy.federal.hours[0]!, end: 1200 }]
      }
      yield* TestClock.setTime(at("2026-12-02T01:30:00Z"))
      yield* policies.set(orgId, decided({ rules: [ny] }), at("2026-12-02T01:30:00Z"))
      const blocked = yield* passAt(batch, "2026-12-02T01:30:00Z")
      assert.deepStrictEqual(blocked.dialled, [])
      assert.deepStrictEqual(yield* waiting(batch), {
        [NEW_YORK_2]: "legal_hours: NY 08:00-20:00 America/New_York until 2026-12-02T13:00:00Z"
      })
      assert.strictEqual((yield* batchRow(batch)).next_dispatch_at, at("2026-12-02T13:00:00Z"))

      // clearing it: the default policy again, and the sleeping batch is due at once, not at 13:00Z
      yield* TestClock.setTime(at("2026-12-02T01:31:00Z"))
      yield* policies.clear(orgId, at("2026-12-02T01:31:00Z"))
      assert.strictEqual((yield* batchRow(batch)).next_dispatch_at, at("2026-12-02T01:31:00Z"))
      const cleared = yield* passAt(batch, "2026-12-02T01:31:00Z")
      assert.deepStrictEqual(cleared.dialled, [NEW_YORK_2])
    })))

  it.live("writes a blocked group's reason once, not every pass, and clears it when the group opens with tasks left", () =>
    scenario(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const HONOLULU_2 = "+18085550101"
        yield* TestClock.setTime(at("2026-12-01T14:00:00Z"))
        // one line: the London call holds it for five hours
        const orgId = yield* seedOrg(1)
        const batch = yield* createBatch(orgId, {
          tasks: [LONDON, HONOLULU, HONOLULU_2].map((to_number) => ({ to_number }))
        })
        assert.strictEqual((yield* tick).claimed, 1)
        const reason = "legal_hours: US 08:00-21:00 Pacific/Honolulu until 2026-12-01T18:00:00Z"
        assert.deepStrictEqual(yield* waiting(batch), { [HONOLULU]: reason, [HONOLULU_2]: reason })
        // a pass that finds the group still blocked writes nothing (a reason changed behind its back stays)
        yield* sql`
          UPDATE batch_call_tasks SET state_reason = 'seen' WHERE batch_call_id = ${batch} AND to_number = ${HONOLULU}`
        yield* TestClock.setTime(at("2026-12-01T14:05:00Z"))
        assert.strictEqual((yield* tick).claimed, 0)
        // the batch was looked at (due: its line is taken, it did not run dry)
        assert.isTrue((yield* batchRow(batch)).next_dispatch_at <= at("2026-12-01T14:05:00Z"))
        assert.deepStrictEqual(yield* waiting(batch), { [HONOLULU]: "seen", [HONOLULU_2]: reason })
        // 08:00 in Honolulu: the group is legal, the line still taken; the legal-hours reason goes, others stay
        yield* TestClock.setTime(at("2026-12-01T18:00:00Z"))
        assert.strictEqual((yield* tick).claimed, 0)
        assert.deepStrictEqual(yield* waiting(batch), { [HONOLULU]: "seen", [HONOLULU_2]: null })
      }),
      { dialer: { latencyMs: 5 * 3_600_000 }, settings: { leaseMs: 6 * 3_600_000 } }
    ))
})
