/**
 * Webhook housekeeping (decision 0524): every `pruneEveryMs` a worker deletes
 * finished outbox events older than the retention (`SVC_WEBHOOK_RETENTION_DAYS`, 7 days) and signing secrets past
 * their grace period. Pending events are never pruned: they are given up (24 h) first, then kept for the retention
 * like any other finished event.
 *
 * Every worker runs it; rows are taken with SKIP LOCKED, so two workers pruning at once split the work. Deletes go
 * in chunks of `CHUNK` rows (short transactions: a delivering worker never waits long on a pruned page), one chunk
 * after another until a chunk comes back short.
 */
import { WebhooksRepo } from "@svc/store/webhooks/WebhooksRepo.ts"
import { Clock, Effect } from "effect"
import { DatabaseHealth } from "../runtime/DatabaseHealth.ts"
import type { WebhookSettings } from "./WebhookConfig.ts"

/** Rows deleted per statement. */
export const CHUNK = 5_000

/**
 * One round: chunks until a chunk is short; returns the events and secrets deleted.
 *
 * @category constructors
 */
export const round = (settings: Pick<WebhookSettings, "retentionMs">) =>
  Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    let events = 0
    let secrets = 0
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      const deleted = yield* repo.prune(now, settings.retentionMs, CHUNK)
      events += deleted.events
      secrets += deleted.secrets
      if (deleted.events < CHUNK) return { events, secrets }
    }
  })

/**
 * Rounds every `pruneEveryMs`, for the worker's lifetime. A failed round (the database away) is reported through
 * `DatabaseHealth` (one line per outage) and the next round tries again.
 *
 * @category constructors
 */
export const loop = (settings: Pick<WebhookSettings, "retentionMs" | "pruneEveryMs">) =>
  Effect.gen(function*() {
    const health = yield* DatabaseHealth
    for (;;) {
      yield* round(settings).pipe(
        health.observe("pruning webhook events"),
        Effect.tap((deleted) =>
          deleted.events + deleted.secrets > 0
            ? Effect.logInfo("pruned webhook events").pipe(Effect.annotateLogs(deleted))
            : Effect.void
        ),
        Effect.catchCause(() => Effect.void)
      )
      yield* Effect.sleep(settings.pruneEveryMs)
    }
  })
