/**
 * Settings of history retention (decision 0442), from the environment; docs/operations.md lists
 * them. Unset, everything is kept (and `calls` is not partitioned by time at all).
 */
import { Config, Effect, Option, Schema } from "effect"

/** @category errors */
export class InvalidRetentionConfig extends Schema.TaggedError<InvalidRetentionConfig>()("InvalidRetentionConfig", {
  message: Schema.String
}) {}

/** @category models */
export interface RetentionSettings {
  /** Calls recorded longer ago than this may be dropped (`SVC_RETENTION_CALLS_DAYS`); undefined = keep every call. */
  readonly callsMs: number | undefined
  /** Months after the current one whose partitions must exist (`SVC_RETENTION_AHEAD_MONTHS`, 2). */
  readonly aheadMonths: number
  /** Pause between maintenance rounds (`SVC_RETENTION_EVERY_MINUTES`, 60). */
  readonly everyMs: number
  /** How long a round's step waits for a table lock before leaving it to the next round. */
  readonly lockTimeoutMs: number
}

/** @category constructors */
export const defaults = (overrides: Partial<RetentionSettings> = {}): RetentionSettings => ({
  callsMs: undefined,
  aheadMonths: 2,
  everyMs: 3_600_000,
  lockTimeoutMs: 2_000,
  ...overrides
})

/**
 * The settings from the environment.
 *
 * @category constructors
 */
export const load: Effect.Effect<RetentionSettings, Config.ConfigError | InvalidRetentionConfig> = Effect.gen(
  function*() {
    const c = yield* Config.all({
      callsDays: Config.option(Config.Number("SVC_RETENTION_CALLS_DAYS")),
      aheadMonths: Config.withDefault(Config.Int("SVC_RETENTION_AHEAD_MONTHS"), 2),
      everyMinutes: Config.withDefault(Config.Number("SVC_RETENTION_EVERY_MINUTES"), 60)
    })
    // at least a day: a shorter retention would drop the month a call is still ringing in only if the month ended a
    // day ago, but nothing shorter than a month partition is ever dropped anyway, so a day is the floor that means
    // something; the call webhooks keep their own retention (SVC_WEBHOOK_RETENTION_DAYS, 7)
    if (Option.isSome(c.callsDays) && !(c.callsDays.value >= 1 && Number.isFinite(c.callsDays.value))) {
      return yield* new InvalidRetentionConfig({
        message: `SVC_RETENTION_CALLS_DAYS must be a number of days, at least 1 (got ${c.callsDays.value})`
      })
    }
    // one month ahead at least: a call recorded in the next month needs its partition before the month starts
    if (c.aheadMonths < 1) {
      return yield* new InvalidRetentionConfig({
        message: `SVC_RETENTION_AHEAD_MONTHS must be at least 1 (got ${c.aheadMonths})`
      })
    }
    if (!(c.everyMinutes > 0 && c.everyMinutes <= 24 * 60)) {
      return yield* new InvalidRetentionConfig({
        message: `SVC_RETENTION_EVERY_MINUTES must be above 0 and at most 1440 (got ${c.everyMinutes})`
      })
    }
    return defaults({
      callsMs: Option.match(c.callsDays, { onNone: () => undefined, onSome: (days) => Math.round(days * 86_400_000) }),
      aheadMonths: c.aheadMonths,
      everyMs: Math.round(c.everyMinutes * 60_000)
    })
  }
)
