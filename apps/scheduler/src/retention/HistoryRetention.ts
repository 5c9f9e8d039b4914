/**
 * History retention (decision 0442): every `everyMs` of Effect's clock a worker maintains the time
 * partitions of `calls` (`HistoryPartitions.maintain`): the months ahead exist, and with `SVC_RETENTION_CALLS_DAYS`
 * set, the months that ended that long ago are dropped whole. Without a retention it does nothing.
 *
 * Every worker runs it; the store takes an advisory lock per table and step, so two workers at once take turns (the
 * second finds the work done), and a step whose table lock is not granted within `lockTimeoutMs` is left for the
 * next round rather than queueing the table's readers behind it. Months are created `aheadMonths` ahead, so a worker
 * down for less than that never leaves a call without its partition.
 */
import { CALLS, HistoryPartitions } from "@svc/store/partitions/HistoryPartitions.ts"
import { Clock, Effect } from "effect"
import { DatabaseHealth } from "../runtime/DatabaseHealth.ts"
import type { RetentionSettings } from "./RetentionConfig.ts"

/**
 * One round at the clock's time; returns what it did.
 *
 * @category constructors
 */
export const round = (settings: RetentionSettings) =>
  Effect.gen(function*() {
    const partitions = yield* HistoryPartitions
    const now = yield* Clock.currentTimeMillis
    return yield* partitions.maintain(CALLS, now, {
      retentionMs: settings.callsMs,
      aheadMonths: settings.aheadMonths,
      lockTimeoutMs: settings.lockTimeoutMs
    })
  })

/**
 * Rounds every `everyMs`, the first at once, for the worker's lifetime. A failed round (the database away) is
 * reported through `DatabaseHealth` (one line per outage) and the next round tries again.
 *
 * @category constructors
 */
export const loop = (settings: RetentionSettings) =>
  Effect.gen(function*() {
    const health = yield* DatabaseHealth
    for (;;) {
      yield* round(settings).pipe(
        health.observe("maintaining history partitions"),
        Effect.tap((done) =>
          done.created.length + done.dropped.length > 0 || done.truncatedDefault || done.deferred.length > 0
            ? Effect.logInfo("history partitions maintained").pipe(Effect.annotateLogs({
              table: CALLS.table,
              created: done.created.join(" "),
              dropped: done.dropped.join(" "),
              truncatedDefault: done.truncatedDefault,
              deferred: done.deferred.join("; ")
            }))
            : Effect.void
        ),
        Effect.catchCause(() => Effect.void)
      )
      yield* Effect.sleep(settings.everyMs)
    }
  })
