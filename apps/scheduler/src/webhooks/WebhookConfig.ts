/**
 * Settings of webhook delivery (decision 0524), from the environment; docs/operations.md lists them.
 */
import { Config, Effect, Schema } from "effect"

/** @category errors */
export class InvalidWebhookConfig extends Schema.TaggedError<InvalidWebhookConfig>()("InvalidWebhookConfig", {
  message: Schema.String
}) {}

/** @category models */
export interface WebhookSettings {
  /** `SVC_WEBHOOK_ALLOW_PRIVATE=true`: deliver to loopback, private, link-local and metadata addresses too. */
  readonly allowPrivate: boolean
  /** Attempts one worker has in flight at most (`SVC_WEBHOOK_CONCURRENCY`). */
  readonly concurrency: number
  /** Attempts of one org one worker has in flight at most (`SVC_WEBHOOK_PER_ORG`): one slow org's share. */
  readonly perOrg: number
  /** First retry delay; each retry doubles it, up to `maxDelayMs`, then a random 50-100 % of it is used. */
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  /** An event is given up when its next attempt would start later than this after its first (24 h). */
  readonly giveUpMs: number
  /** Pause between looks at the outbox while nothing is due. */
  readonly idleMs: number
  /** Added to an attempt's timeout for its lease: after that, another worker may take the event. */
  readonly leaseMarginMs: number
  /** Finished events are kept this long for `webhook-deliveries`, then pruned (`SVC_WEBHOOK_RETENTION_DAYS`). */
  readonly retentionMs: number
  /** Pause between housekeeping rounds (pruning); a round deletes in chunks until nothing is left. */
  readonly pruneEveryMs: number
}

/** @category constructors */
export const defaults = (overrides: Partial<WebhookSettings> = {}): WebhookSettings => ({
  allowPrivate: false,
  concurrency: 256,
  perOrg: 64,
  baseDelayMs: 1_000,
  maxDelayMs: 3_600_000,
  giveUpMs: 24 * 3_600_000,
  idleMs: 200,
  leaseMarginMs: 5_000,
  retentionMs: 7 * 86_400_000,
  pruneEveryMs: 600_000,
  ...overrides
})

/**
 * The settings from the environment.
 *
 * @category constructors
 */
export const load: Effect.Effect<WebhookSettings, Config.ConfigError | InvalidWebhookConfig> = Effect.gen(
  function*() {
    const c = yield* Config.all({
      allowPrivate: Config.withDefault(Config.Boolean("SVC_WEBHOOK_ALLOW_PRIVATE"), false),
      concurrency: Config.withDefault(Config.Int("SVC_WEBHOOK_CONCURRENCY"), 256),
      perOrg: Config.withDefault(Config.Int("SVC_WEBHOOK_PER_ORG"), 64),
      retentionDays: Config.withDefault(Config.Number("SVC_WEBHOOK_RETENTION_DAYS"), 7)
    })
    if (c.concurrency < 1) {
      return yield* new InvalidWebhookConfig({ message: `SVC_WEBHOOK_CONCURRENCY must be at least 1` })
    }
    if (c.perOrg < 1) return yield* new InvalidWebhookConfig({ message: `SVC_WEBHOOK_PER_ORG must be at least 1` })
    // at least the 24 h an event may be retried for: a shorter retention would delete what webhook-deliveries is
    // needed for (why did the receiver not get it?) before the last attempt of a sibling event of the same call
    if (!(c.retentionDays >= 1) || !Number.isFinite(c.retentionDays)) {
      return yield* new InvalidWebhookConfig({
        message: `SVC_WEBHOOK_RETENTION_DAYS must be a number of days, at least 1 (got ${c.retentionDays})`
      })
    }
    return defaults({
      allowPrivate: c.allowPrivate,
      concurrency: c.concurrency,
      perOrg: c.perOrg,
      retentionMs: Math.round(c.retentionDays * 86_400_000)
    })
  }
)
