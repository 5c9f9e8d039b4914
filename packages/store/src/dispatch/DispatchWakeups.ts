/**
 * Wake-ups for idle schedulers: a committed create-batch-call sends `NOTIFY svc_batch_call_created`
 * (BatchCallsRepo `CREATED_CHANNEL`), so a worker that LISTENs starts a new batch at once instead of at its next
 * poll. Where this process cannot LISTEN (behind a transaction pooler without `DATABASE_DIRECT_URL`, decision 0440)
 * it polls instead: every `POLL_FALLBACK_MS` it asks whether an open batch is due and wakes the worker if one is, so
 * a new (or resumed, or woken) batch waits at most that long whatever the worker's own poll interval. On a
 * `SqlClient` that is not PostgreSQL's nothing is listened to and the worker's poll interval alone applies.
 */
import type { BatchCallId } from "@svc/domain/models/Ids.ts"
import { type Cause, Clock, Effect, Option, Queue, type Scope } from "effect"
import { SqlClient } from "effect/sql"
import { CREATED_CHANNEL } from "../batches/index.ts"
import * as DatabaseNotifications from "../db/DatabaseNotifications.ts"

/** What a listener that broke (its connection was lost, or could not be opened) does before listening again. */
export type OnListenerFailure = (cause: Cause.Cause<unknown>, startedAt: number) => Effect.Effect<void>

const logFailure: OnListenerFailure = (cause) =>
  Effect.logWarning("batch-created listener failed; listening again in 1 s").pipe(
    Effect.annotateLogs({ cause: String(cause) })
  )

/**
 * The poll that stands in for the LISTEN: one open batch due by `now`, if any (the partial index `batch_calls_due`).
 * Every NOTIFY on `CREATED_CHANNEL` announces a batch due now (created, resumed, or woken by a policy change), so a
 * due batch is what a notification would have said; one that stays due (its org at its limit) wakes the worker at
 * each poll, which a worker polling every second does anyway.
 */
const dueBatch = (now: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ batch_call_id: BatchCallId }>`
      SELECT batch_call_id FROM batch_calls
      WHERE status IN ('scheduled', 'in_progress') AND next_dispatch_at <= ${now}
      LIMIT 1`
    return rows.length > 0 ? Option.some(rows[0]!.batch_call_id) : Option.none()
  })

/**
 * Runs `onCreated` for every batch created from now on (payload: the batch call id), in a fiber of the current
 * scope; a broken listener is reported to `onFailure` (by default logged) with the time the attempt started, and
 * opened again a second later. A worker passes its own report, so that a database outage is not a warning a second.
 * Without a LISTEN (see the module comment) `onCreated` gets, every `POLL_FALLBACK_MS`, a batch that is due, if any;
 * a failed poll goes to `onFailure` and the next poll comes as usual.
 *
 * @category constructors
 */
export const onBatchCreated = (
  onCreated: (batchCallId: BatchCallId) => Effect.Effect<void>,
  onFailure: OnListenerFailure = logFailure
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const listener = yield* DatabaseNotifications.listener
    if (Option.isNone(listener)) {
      // polled only where the database layer said LISTEN cannot reach this process
      const said = yield* Effect.serviceOption(DatabaseNotifications.DatabaseNotifications)
      const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
      if (Option.isNone(said) || Option.isNone(sql)) return
      const poll = Effect.gen(function*() {
        yield* Effect.sleep(DatabaseNotifications.POLL_FALLBACK_MS)
        const startedAt = yield* Clock.currentTimeMillis
        const due = yield* dueBatch(startedAt).pipe(
          Effect.provideService(SqlClient.SqlClient, sql.value),
          Effect.catchCause((cause) => Effect.as(onFailure(cause, startedAt), Option.none()))
        )
        if (Option.isSome(due)) yield* onCreated(due.value)
      })
      return yield* Effect.forkScoped(Effect.forever(poll))
    }
    const listen = Effect.scoped(Effect.gen(function*() {
      const notifications = yield* listener.value(CREATED_CHANNEL)
      for (;;) {
        const notification = yield* Queue.take(notifications)
        // every NOTIFY on the channel carries a batch_call_id (create, resume, retry, policy change): branded as it
        // is read, a type only
        yield* onCreated(notification.payload as BatchCallId)
      }
    }))
    yield* Effect.flatMap(Clock.currentTimeMillis, (startedAt) =>
      listen.pipe(
        Effect.catchCause((cause) => Effect.andThen(onFailure(cause, startedAt), Effect.sleep(1_000)))
      )).pipe(Effect.forever, Effect.forkScoped)
  })
