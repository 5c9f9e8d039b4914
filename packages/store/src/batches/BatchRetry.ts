/**
 * Retrying a batch's tasks on demand (decision 0551; svc extension `POST /retry-batch-call/{batch_call_id}`).
 *
 * One transaction under the org's advisory lock (ORG_LOCK, as cancel and every claim), the batch row locked first
 * (FOR UPDATE, as cancel: the recorder's retry of decision 0625 holds KEY SHARE on it):
 * - a cancelled batch is refused (BatchCallCancelled, 409); a retry that waited for a cancel reads it cancelled, and a
 *   cancel that waited for a retry cancels the tasks it re-queued, so no pending task is ever left in a cancelled batch;
 * - re-queued: exactly the `completed`/`failed` tasks whose last call (`call_id`, the task's latest attempt) ended
 *   with a requested outcome, whose number is neither suppressed (decision 0550) nor a `do_not_call` contact's (the
 *   claim would skip it and lose the outcome) and which have had fewer than `retryCallCap` calls;
 * - a re-queued task is an ordinary pending task of its next attempt, as the recorder's retry makes it: `retry_attempt`
 *   + 1 (its own call id and idempotency key, `attemptKey`), `attempts` 0 (the claim registers its call), no
 *   `not_before` (due now): the claim applies window, legal hours, attempt caps and the suppression list to it;
 * - a completed batch with tasks re-queued is re-opened (`in_progress`, due now, its finish time cleared so its next
 *   completion is timed); a running one is made due now; a paused one stays paused (resume makes it due); the
 *   schedulers are woken (CREATED_CHANNEL, as create and resume).
 *
 * Completing a batch (DryBatches.completeIfDone) does not take the org's lock, and its snapshot may predate the
 * retry: it would see the re-queued tasks still final and complete a batch with pending tasks, which no scheduler
 * would look at again. A retry that re-queued tasks of a running or completed batch updates the batch row, so a
 * completing statement waits for it and re-checks the row's new version, where `batch_has_pending_task` (its own
 * snapshot, taken after the retry committed) sees the pending tasks and leaves the batch running. A scheduled batch
 * has no finished task (the claim that finishes one makes it in_progress), and a paused one is never completed.
 */
import { retryCallCap, type RetryOutcome } from "@svc/domain/models/BatchRetry.ts"
import type { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { ORG_LOCK } from "../dispatch/index.ts"
import { BatchCallNotFound, type BatchCallStatus, CREATED_CHANNEL } from "./BatchCallsRepo.ts"

/**
 * A retry of a cancelled batch (decision 0551: 409 in the error shape).
 *
 * @category errors
 */
export class BatchCallCancelled extends Schema.TaggedError<BatchCallCancelled>()("BatchCallCancelled", {
  batchCallId: Schema.String,
  message: Schema.String
}) {}

/**
 * What a retry did: tasks re-queued, and those it left, by why.
 *
 * @category models
 */
export interface BatchRetryResult {
  readonly requeued: number
  readonly suppressed: number
  readonly doNotCall: number
  readonly attemptCap: number
  /** The batch's status after the retry. */
  readonly status: BatchCallStatus
}

/**
 * Re-queues a batch's tasks whose last call ended with one of the requested outcomes.
 *
 * @category services
 */
export class BatchRetry extends Context.Service<BatchRetry, {
  readonly retry: (
    orgId: OrgId,
    batchCallId: BatchCallId,
    outcomes: ReadonlyArray<RetryOutcome>,
    now: number
  ) => Effect.Effect<BatchRetryResult, BatchCallNotFound | BatchCallCancelled>
}>()("@svc/store/BatchRetry") {
  /** @category layers */
  static readonly layer: Layer.Layer<BatchRetry, never, SqlClient.SqlClient> = Layer.effect(
    BatchRetry,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const retry = Effect.fn("BatchRetry.retry")(
        function*(orgId: OrgId, batchCallId: BatchCallId, outcomes: ReadonlyArray<RetryOutcome>, now: number) {
          return yield* sql.withTransaction(Effect.gen(function*() {
            yield* sql`SELECT pg_advisory_xact_lock(${ORG_LOCK}, hashtext(${orgId}))`
            const [batch] = yield* sql<{ status: BatchCallStatus; max_retries: number | null }>`
              SELECT status, (retry_policy->>'max_retries')::int4 AS max_retries FROM batch_calls
              WHERE org_id = ${orgId} AND batch_call_id = ${batchCallId} FOR UPDATE`
            if (batch === undefined) {
              return yield* new BatchCallNotFound({ batchCallId, message: `batch call ${batchCallId} not found` })
            }
            if (batch.status === "cancelled") {
              return yield* new BatchCallCancelled({
                batchCallId,
                message: `batch call ${batchCallId} is cancelled: a cancelled batch dials nothing more, so its ` +
                  "tasks cannot be retried (create a new batch call for them)"
              })
            }
            const cap = retryCallCap(batch.max_retries ?? undefined)
            // The outcome of a task's last call, named as retryReasonOf (decision 0625) names it: voicemail by the
            // disconnection reason, then no_answer and busy by the outcome; then failed for a failed task (its call
            // failed, or the carrier refused the dial: no outcome). A task from before calls rows were registered
            // (migration 0012) has its outcome as its state_reason. Read through batch_call_tasks_by_state.
            const [counts] = yield* sql<
              { requeued: number; suppressed: number; do_not_call: number; attempt_cap: number }
            >`
              WITH last AS (
                SELECT t.task_id, t.to_number, t.retry_attempt,
                  CASE
                    WHEN c.disconnection_reason = 'voicemail_reached' THEN 'voicemail'
                    WHEN coalesce(c.outcome, CASE WHEN t.state = 'completed' THEN t.state_reason END) = 'no_answer'
                      THEN 'no_answer'
                    WHEN coalesce(c.outcome, CASE WHEN t.state = 'completed' THEN t.state_reason END) = 'busy'
                      THEN 'busy'
                    WHEN t.state = 'failed' THEN 'failed'
                  END AS outcome
                FROM batch_call_tasks t
                LEFT JOIN calls c ON c.org_id = t.org_id AND c.call_id = t.call_id
                WHERE t.batch_call_id = ${batchCallId} AND t.state IN ('completed', 'failed')
              ), judged AS (
                SELECT l.*,
                  EXISTS (
                    SELECT 1 FROM suppressions s WHERE s.org_id = ${orgId} AND s.phone_number = l.to_number
                  ) AS suppressed,
                  EXISTS (
                    SELECT 1 FROM contacts k
                    WHERE k.org_id = ${orgId} AND k.phone_number = l.to_number AND k.do_not_call
                  ) AS do_not_call,
                  l.retry_attempt >= ${cap} AS capped
                FROM last l
                WHERE l.outcome = ANY(${outcomes}::text[])
              ), requeued AS (
                UPDATE batch_call_tasks t SET state = 'pending',
                  state_reason = 'retry requested: ' || j.outcome || ', call ' || (t.retry_attempt + 1)::text
                    || ' of ' || ${cap}::text,
                  retry_attempt = t.retry_attempt + 1, attempts = 0, not_before = NULL,
                  lease_owner = NULL, lease_expires_at = NULL
                FROM judged j
                WHERE t.task_id = j.task_id AND NOT j.suppressed AND NOT j.do_not_call AND NOT j.capped
                RETURNING 1
              )
              SELECT (SELECT count(*) FROM requeued)::int4 AS requeued,
                (count(*) FILTER (WHERE j.suppressed))::int4 AS suppressed,
                (count(*) FILTER (WHERE NOT j.suppressed AND j.do_not_call))::int4 AS do_not_call,
                (count(*) FILTER (WHERE NOT j.suppressed AND NOT j.do_not_call AND j.capped))::int4 AS attempt_cap
              FROM judged j`
            const requeued = counts?.requeued ?? 0
            let status = batch.status
            if (requeued > 0 && (batch.status === "completed" || batch.status === "in_progress")) {
              // due now; a completed batch runs again, its next completion timed afresh (batch_calls_finished)
              yield* sql`
                UPDATE batch_calls SET status = 'in_progress', next_dispatch_at = least(next_dispatch_at, ${now}),
                  finished_timestamp = CASE WHEN status = 'completed' THEN NULL ELSE finished_timestamp END
                WHERE batch_call_id = ${batchCallId}`
              status = "in_progress"
              // the wake-up create-batch-call and resume send: a listening scheduler looks at its batches now
              yield* sql`SELECT pg_notify(${CREATED_CHANNEL}, ${batchCallId})`
            }
            return {
              requeued,
              suppressed: counts?.suppressed ?? 0,
              doNotCall: counts?.do_not_call ?? 0,
              attemptCap: counts?.attempt_cap ?? 0,
              status
            }
          })).pipe(Effect.catchTag("SqlError", Effect.die))
        }
      )

      return BatchRetry.of({ retry })
    })
  )
}
