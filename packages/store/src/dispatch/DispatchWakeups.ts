/**
 * Wake-ups for idle schedulers: a committed create-batch-call sends `NOTIFY svc_batch_call_created`
 * (BatchCallsRepo `CREATED_CHANNEL`), so a worker that LISTENs starts a new batch at once instead of at its next
 * poll. Listening needs the PostgreSQL client; on another `SqlClient` nothing is listened to and the worker's poll
 * interval alone applies.
 */
import { PgClient } from "@effect/sql-pg"
import { type Cause, Clock, Effect, Option, Queue, type Scope } from "effect"
import { CREATED_CHANNEL } from "../batches/index.ts"

/** What a listener that broke (its connection was lost, or could not be opened) does before listening again. */
export type OnListenerFailure = (cause: Cause.Cause<unknown>, startedAt: number) => Effect.Effect<void>

const logFailure: OnListenerFailure = (cause) =>
  Effect.logWarning("batch-created listener failed; listening again in 1 s").pipe(
    Effect.annotateLogs({ cause: String(cause) })
  )

/**
 * Runs `onCreated` for every batch created from now on (payload: the batch call id), in a fiber of the current
 * scope; a broken listener is reported to `onFailure` (by default logged) with the time the attempt started, and
 * opened again a second later. A worker passes its own report, so that a database outage is not a warning a second.
 *
 * @category constructors
 */
export const onBatchCreated = (
  onCreated: (batchCallId: string) => Effect.Effect<void>,
  onFailure: OnListenerFailure = logFailure
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const client = yield* Effect.serviceOption(PgClient.PgClient)
    if (Option.isNone(client)) return
    const listen = Effect.scoped(Effect.gen(function*() {
      const notifications = yield* client.value.listen(CREATED_CHANNEL)
      for (;;) {
        const notification = yield* Queue.take(notifications)
        yield* onCreated(notification.payload)
      }
    }))
    yield* Effect.flatMap(Clock.currentTimeMillis, (startedAt) =>
      listen.pipe(
        Effect.catchCause((cause) => Effect.andThen(onFailure(cause, startedAt), Effect.sleep(1_000)))
      )).pipe(Effect.forever, Effect.forkScoped)
  })
