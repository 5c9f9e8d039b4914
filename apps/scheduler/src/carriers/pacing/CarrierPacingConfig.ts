/**
 * Settings of carrier pacing (decision 0610), from the environment; docs/operations.md
 * lists them.
 */
import { Config, Effect, Option, Schema } from "effect"

/**
 * A pacing setting that does not parse or breaks its rule; the message names the variable and the rule.
 *
 * @category errors
 */
export class InvalidCarrierPacingConfig
  extends Schema.TaggedError<InvalidCarrierPacingConfig>()("InvalidCarrierPacingConfig", { message: Schema.String })
{}

/** @category models */
export interface CarrierPacingSettings {
  /**
   * Call creations per second per carrier account, over every worker (`SVC_CARRIER_CPS`; Twilio's default is 1).
   * Fractional rates are allowed: 0.5 is one call every 2 s.
   */
  readonly cps: number
  /** First backoff after a 429 or 5xx (`SVC_CARRIER_BACKOFF_MS`); it doubles per consecutive refusal. */
  readonly backoffBaseMs: number
  /** Longest backoff (`SVC_CARRIER_BACKOFF_MAX_MS`). */
  readonly backoffMaxMs: number
  /**
   * `SVC_CARRIER_START_TOLERANCE_MS`: when set, a call creation never starts later than this after its slot (a
   * later one gives the slot up) and slots are spaced (1000 + tolerance) / cps ms apart, so that no 1 s window
   * holds more than ceil(cps) STARTS, not only slots, at a rate tolerance/1000 lower (decision 0610). Off by default.
   */
  readonly startToleranceMs: Option.Option<number>
}

/** @category constructors */
export const defaults = (overrides: Partial<CarrierPacingSettings> = {}): CarrierPacingSettings => ({
  cps: 1,
  backoffBaseMs: 1_000,
  backoffMaxMs: 30_000,
  startToleranceMs: Option.none(),
  ...overrides
})

/**
 * Microseconds between two slots at `cps`, rounded UP to a whole microsecond: slots at least 1/cps s apart keep
 * any 1 s window to ceil(cps) call creations, and the rate is at most 1 us per slot slower than asked. With a start
 * tolerance the window that must hold ceil(cps) slots is 1 s + the tolerance.
 *
 * @category constructors
 */
export const intervalMicros = (cps: number, toleranceMs = 0): number =>
  Math.ceil((1_000_000 + toleranceMs * 1_000) / cps)

/**
 * The backoff after the `consecutive`-th refusal in a row (1 for the first): base x 2^(n-1), at most the maximum,
 * then "equal jitter" (a uniform draw in [50 %, 100 %] of it, `random` in [0, 1)), so workers refused together do
 * not come back together, and each waits at least half the delay.
 *
 * @category constructors
 */
export const backoffDelayMs = (settings: CarrierPacingSettings, consecutive: number, random: number): number => {
  const exponent = Math.min(Math.max(consecutive, 1) - 1, 30)
  const capped = Math.min(settings.backoffMaxMs, settings.backoffBaseMs * 2 ** exponent)
  return Math.round(capped * (0.5 + random / 2))
}

const positiveNumber = (name: string, text: string, rule: string) =>
  Effect.gen(function*() {
    const value = text.trim() === "" ? Number.NaN : Number(text)
    if (!Number.isFinite(value) || value <= 0) {
      return yield* new InvalidCarrierPacingConfig({ message: `${name} must be ${rule} (got "${text}")` })
    }
    return value
  })

const wholeMillis = (name: string, text: string) =>
  Effect.flatMap(
    positiveNumber(name, text, "a whole number of milliseconds, at least 1"),
    (value) =>
      Number.isInteger(value)
        ? Effect.succeed(value)
        : Effect.fail(
          new InvalidCarrierPacingConfig({
            message: `${name} must be a whole number of milliseconds, at least 1 (got "${text}")`
          })
        )
  )

/**
 * The settings from the environment.
 *
 * @category constructors
 */
export const load: Effect.Effect<CarrierPacingSettings, Config.ConfigError | InvalidCarrierPacingConfig> = Effect
  .gen(function*() {
    const c = yield* Config.all({
      cps: Config.option(Config.String("SVC_CARRIER_CPS")),
      backoffBaseMs: Config.option(Config.String("SVC_CARRIER_BACKOFF_MS")),
      backoffMaxMs: Config.option(Config.String("SVC_CARRIER_BACKOFF_MAX_MS")),
      startToleranceMs: Config.option(Config.String("SVC_CARRIER_START_TOLERANCE_MS"))
    })
    const fallback = defaults()
    const cps = Option.isSome(c.cps)
      ? yield* positiveNumber(
        "SVC_CARRIER_CPS",
        c.cps.value,
        "a positive number of calls per second per carrier account (fractions allowed, e.g. 0.5)"
      )
      : fallback.cps
    const backoffBaseMs = Option.isSome(c.backoffBaseMs)
      ? yield* wholeMillis("SVC_CARRIER_BACKOFF_MS", c.backoffBaseMs.value)
      : fallback.backoffBaseMs
    const backoffMaxMs = Option.isSome(c.backoffMaxMs)
      ? yield* wholeMillis("SVC_CARRIER_BACKOFF_MAX_MS", c.backoffMaxMs.value)
      : fallback.backoffMaxMs
    if (backoffMaxMs < backoffBaseMs) {
      return yield* new InvalidCarrierPacingConfig({
        message:
          `SVC_CARRIER_BACKOFF_MAX_MS must be at least SVC_CARRIER_BACKOFF_MS (got ${backoffMaxMs} < ${backoffBaseMs})`
      })
    }
    let startToleranceMs = Option.none<number>()
    if (Option.isSome(c.startToleranceMs)) {
      const text = c.startToleranceMs.value
      const value = text.trim() === "" ? Number.NaN : Number(text)
      // at least 1: slots fall between whole milliseconds and the sleep rounds up, so a start is up to 1 ms late
      if (!Number.isInteger(value) || value < 1 || value > 1_000) {
        return yield* new InvalidCarrierPacingConfig({
          message:
            `SVC_CARRIER_START_TOLERANCE_MS must be a whole number of milliseconds from 1 to 1000 (got "${text}")`
        })
      }
      startToleranceMs = Option.some(value)
    }
    return { cps, backoffBaseMs, backoffMaxMs, startToleranceMs }
  })
