/**
 * Wake-ups for idle schedulers: a committed create-batch-call sends `NOTIFY svc_batch_call_created`
 * (BatchCallsRepo `CREATED_CHANNEL`), so a worker that LISTENs starts a new batch at once instead of at its next
 * poll. Listening needs the PostgreSQL client; on another `SqlClient` nothing is listened to and the worker's poll
 * interval alone applies.
 */
import { PgClient } from "@effect/sql-pg"
import { Cause, Effect, Option, Queue, type Scope } from "effect"
import { CREATED_CHANNEL } from "./BatchCallsRepo.ts"
import { isUnavailable } from "./DatabaseUnavailable.ts"

/**
 * Runs `onCreated` for every batch created from now on (payload: the batch call id), in a fiber of the current
 * scope; a broken listener is logged and opened again a second later.
 *
 * @category constructors
 */
export const onBatchCreated = (
  onCreated: (batchCallId: string) => Effect.Effect<void>
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
    yield* listen.pipe(
      Effect.catchCause((cause) =>
        // During a database outage the scheduler's loops log it once (apps/scheduler Retrying.ts); this listener
        // only waits for it to end.
        (isUnavailable(Cause.squash(cause))
          ? Effect.logDebug("batch-created listener lost the database; listening again in 1 s")
          : Effect.logWarning("batch-created listener failed; listening again in 1 s").pipe(
            Effect.annotateLogs({ cause: String(cause) })
          )).pipe(Effect.andThen(Effect.sleep(1_000)))
      ),
      Effect.forever,
      Effect.forkScoped
    )
  })
