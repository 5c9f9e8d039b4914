import { assert, describe, it } from "@effect/vitest"
import { BatchCallId, CallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Dialer, type DialRequest } from "@svc/domain/ports/Dialer.ts"
import { SchedulerSimulatedCarrier } from "@svc/store/carriers/simulated/SchedulerSimulatedCarrier.ts"
import { Effect, Fiber, Option } from "effect"
import { TestClock } from "effect/testing"
import * as SimulatedDialer from "../../../src/carriers/simulated/SimulatedDialer.ts"
import * as SchedulerConfig from "../../../src/runtime/SchedulerConfig.ts"

const request = (key: string, extra: Partial<DialRequest> = {}): DialRequest => ({
  idempotency_key: key,
  call_id: CallId.make(`call_${key}`),
  org_id: OrgId.make("org_1"),
  batch_call_id: BatchCallId.make("batch_call_1"),
  from_number: "+14155550100",
  to_number: "+14155550101",
  ...extra
})

const settings = (overrides: Partial<SchedulerConfig.SimulatedDialerSettings> = {}) => ({
  seed: 3,
  latencyMs: 60_000,
  outcomes: SchedulerConfig.defaultOutcomes,
  store: "memory" as const,
  ...overrides
})

describe("SimulatedDialer", () => {
  it("simulates the same call for the same seed and key, and other calls for other seeds", () => {
    const a = SimulatedDialer.simulate(settings(), request("1"), 0)
    assert.deepStrictEqual(SimulatedDialer.simulate(settings(), request("1"), 0), a)
    const outcomes = new Set<string>()
    let sameUnderOtherSeed = 0
    for (let i = 0; i < 400; i++) {
      const call = SimulatedDialer.simulate(settings(), request(String(i)), 0)
      outcomes.add(call.outcome)
      if (SimulatedDialer.simulate(settings({ seed: 4 }), request(String(i)), 0).duration_ms === call.duration_ms) {
        sameUnderOtherSeed++
      }
      // answered calls carry analysis data, the others none
      assert.strictEqual(Object.keys(call.analysis).length > 0, call.outcome === "answered")
    }
    assert.deepStrictEqual([...outcomes].sort(), ["answered", "busy", "failed", "no_answer"])
    assert.isBelow(sameUnderOtherSeed, 40)
  })

  it("follows the outcome weights", () => {
    const only = settings({ outcomes: { answered: 0, busy: 1, no_answer: 0, failed: 0 } })
    for (let i = 0; i < 50; i++) {
      assert.strictEqual(SimulatedDialer.simulate(only, request(String(i)), 0).outcome, "busy")
    }
    const counts = { answered: 0, busy: 0, no_answer: 0, failed: 0 }
    for (let i = 0; i < 4_000; i++) counts[SimulatedDialer.simulate(settings(), request(String(i)), 0).outcome]++
    // 60/15/20/5 within a few percent
    assert.isAbove(counts.answered, 2_200)
    assert.isBelow(counts.answered, 2_600)
    assert.isAbove(counts.failed, 120)
    assert.isBelow(counts.failed, 300)
  })

  it("reports the override agent as the handling agent", () => {
    const call = SimulatedDialer.simulate(
      settings(),
      request("9", { override_agent_id: "agent_a", override_agent_version: 3 }),
      0
    )
    assert.deepStrictEqual([call.agent_id, call.agent_version], ["agent_a", 3])
  })

  it.effect("places one call per key: a second dial joins it; lookup sees none, ongoing, then ended", () =>
    Effect.gen(function*() {
      const dialer = yield* Dialer
      const carrier = yield* SchedulerSimulatedCarrier
      yield* TestClock.setTime(1_000)
      assert.isTrue(Option.isNone(yield* dialer.lookup("7")))
      const first = yield* Effect.forkChild(dialer.dial(request("7")))
      yield* TestClock.adjust(10_000)
      const second = yield* Effect.forkChild(dialer.dial(request("7")))
      yield* Effect.yieldNow
      const ongoing = yield* dialer.lookup("7")
      assert.strictEqual(Option.getOrThrow(ongoing)._tag, "CallOngoing")
      yield* TestClock.adjust(50_000)
      const [a, b] = [yield* Fiber.join(first), yield* Fiber.join(second)]
      assert.deepStrictEqual(a, b)
      assert.strictEqual(a.start_timestamp, 1_000)
      assert.deepStrictEqual(Option.getOrThrow(yield* dialer.lookup("7")), a)
      // both requests reached the carrier, one call was placed
      const attempts = yield* Effect.orDie(carrier.attempts)
      assert.deepStrictEqual(attempts.map((x) => x.attemptedAt), [1_000, 11_000])
    }).pipe(Effect.provide(SimulatedDialer.layerMemory(settings()))))
})
