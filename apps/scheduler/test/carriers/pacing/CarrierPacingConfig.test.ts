import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Option } from "effect"
import * as CarrierPacingConfig from "../../../src/carriers/pacing/CarrierPacingConfig.ts"

const load = (env: Record<string, string>) =>
  CarrierPacingConfig.load.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env))))

describe("CarrierPacingConfig", () => {
  it.effect("defaults: 1 call/s per account (Twilio's default), backoff from 1 s up to 30 s", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* load({}), {
        cps: 1,
        backoffBaseMs: 1_000,
        backoffMaxMs: 30_000,
        startToleranceMs: Option.none()
      })
    }))

  it.effect("SVC_CARRIER_CPS takes whole and fractional rates", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* load({ SVC_CARRIER_CPS: "50" })).cps, 50)
      assert.strictEqual((yield* load({ SVC_CARRIER_CPS: "0.5" })).cps, 0.5)
      assert.strictEqual((yield* load({ SVC_CARRIER_CPS: " 2.5 " })).cps, 2.5)
    }))

  it.effect("SVC_CARRIER_CPS that is not a positive finite number fails, naming the variable and the rule", () =>
    Effect.gen(function*() {
      for (const bad of ["0", "-1", "abc", " ", "Infinity", "NaN", "1/s", "0x"]) {
        const error = yield* Effect.flip(load({ SVC_CARRIER_CPS: bad }))
        assert.strictEqual(error._tag, "InvalidCarrierPacingConfig", bad)
        assert.include(error.message, "SVC_CARRIER_CPS", bad)
        assert.include(error.message, "positive number of calls per second", bad)
        assert.include(error.message, `"${bad}"`, bad)
      }
    }))

  it.effect("backoff settings: whole positive milliseconds, the maximum not below the base", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(
        yield* load({ SVC_CARRIER_BACKOFF_MS: "250", SVC_CARRIER_BACKOFF_MAX_MS: "4000" }),
        { cps: 1, backoffBaseMs: 250, backoffMaxMs: 4_000, startToleranceMs: Option.none() }
      )
      for (const bad of ["0", "1.5", "soon"]) {
        const error = yield* Effect.flip(load({ SVC_CARRIER_BACKOFF_MS: bad }))
        assert.include(error.message, "SVC_CARRIER_BACKOFF_MS must be a whole number of milliseconds", bad)
      }
      const error = yield* Effect.flip(load({ SVC_CARRIER_BACKOFF_MS: "5000", SVC_CARRIER_BACKOFF_MAX_MS: "1000" }))
      assert.include(error.message, "SVC_CARRIER_BACKOFF_MAX_MS must be at least SVC_CARRIER_BACKOFF_MS")
    }))

  it.effect("SVC_CARRIER_START_TOLERANCE_MS: off by default, else whole milliseconds from 1 to 1000", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual((yield* load({ SVC_CARRIER_START_TOLERANCE_MS: "20" })).startToleranceMs, Option.some(20))
      assert.deepStrictEqual((yield* load({ SVC_CARRIER_START_TOLERANCE_MS: "1" })).startToleranceMs, Option.some(1))
      for (const bad of ["0", "-1", "2.5", "1001", "soon"]) {
        const error = yield* Effect.flip(load({ SVC_CARRIER_START_TOLERANCE_MS: bad }))
        assert.include(error.message, "SVC_CARRIER_START_TOLERANCE_MS must be a whole number of milliseconds", bad)
      }
    }))

  it("a start tolerance widens the interval so ceil(cps) slots span 1 s plus the tolerance", () => {
    assert.strictEqual(CarrierPacingConfig.intervalMicros(50, 20), 20_400)
    assert.strictEqual(CarrierPacingConfig.intervalMicros(5, 10), 202_000)
    for (const [cps, tolerance] of [[50, 20], [3, 7], [0.5, 100], [7, 0]] as const) {
      const interval = CarrierPacingConfig.intervalMicros(cps, tolerance)
      // starts lie in [slot, slot + tolerance]: the slots of one second's starts lie in 1 s + tolerance
      assert.isAtMost(Math.ceil((1_000_000 + tolerance * 1_000) / interval), Math.ceil(cps), `${cps} ${tolerance}`)
    }
  })

  it("intervals are rounded up to whole microseconds, so ceil(cps) slots at most fit in one second", () => {
    assert.strictEqual(CarrierPacingConfig.intervalMicros(1), 1_000_000)
    assert.strictEqual(CarrierPacingConfig.intervalMicros(50), 20_000)
    assert.strictEqual(CarrierPacingConfig.intervalMicros(3), 333_334)
    assert.strictEqual(CarrierPacingConfig.intervalMicros(0.5), 2_000_000)
    assert.strictEqual(CarrierPacingConfig.intervalMicros(7), 142_858)
    for (const cps of [0.3, 1, 2.5, 3, 7, 30, 50, 99.9]) {
      const interval = CarrierPacingConfig.intervalMicros(cps)
      // slots at 0, interval, 2 x interval, ...: how many start before 1 s
      assert.strictEqual(Math.ceil(1_000_000 / interval), Math.ceil(cps), String(cps))
    }
  })

  it("backoff doubles per consecutive refusal up to the maximum, with equal jitter (50-100 %)", () => {
    const settings = CarrierPacingConfig.defaults()
    assert.strictEqual(CarrierPacingConfig.backoffDelayMs(settings, 1, 0.999_999), 1_000)
    assert.strictEqual(CarrierPacingConfig.backoffDelayMs(settings, 1, 0), 500)
    assert.strictEqual(CarrierPacingConfig.backoffDelayMs(settings, 3, 0), 2_000)
    assert.strictEqual(CarrierPacingConfig.backoffDelayMs(settings, 3, 0.5), 3_000)
    assert.strictEqual(CarrierPacingConfig.backoffDelayMs(settings, 10, 0), 15_000)
    assert.strictEqual(CarrierPacingConfig.backoffDelayMs(settings, 1_000, 0.999_999), 30_000)
    // a nonsensical count is the first refusal
    assert.strictEqual(CarrierPacingConfig.backoffDelayMs(settings, 0, 0), 500)
  })
})
