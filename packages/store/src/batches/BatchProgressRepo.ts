/**
 * A batch call's progress and its cancellation (decisions 0532, 0533; svc extensions `GET /get-batch-call/{id}` and
 * `POST /cancel-batch-call/{id}`).
 *
 * Cancelling, in one transaction under the org's advisory lock (DispatchRepo.ORG_LOCK, the lock every claim takes
 * before it reads pending tasks, migration 0010):
 * - the batch's `pending` tasks become `cancelled` (reason `batch_cancelled`), then the batch does, with the time;
 * - tasks already `dialling` or `unknown` are left alone: their calls finish and are recorded as usual, and an
 *   `unknown` task whose call was never placed becomes `cancelled`, not `pending` (trigger of migration 0014);
 * - a claim that runs after the cancel finds nothing pending; one that ran before it committed its tasks as
 *   `dialling`, which the cancel leaves to finish. No task is dialled after the cancel commits.
 * - idempotent: cancelling a cancelled batch changes nothing and answers its progress; so does cancelling a
 *   completed one (nothing was left to cancel; its status stays `completed`).
 *
 * The batch row is locked first (FOR UPDATE), then the pending tasks are cancelled, then the batch. Claims take the
 * org lock too, so they never interleave with a cancel. The recorder does not: a call whose outcome the batch
 * retries puts its task back to pending in the statement that records it, under a KEY SHARE lock on the batch row
 * (CallsRepo.recordFinished), which the cancel's FOR UPDATE waits for (and the reverse). Without it, a record that
 * started before the cancel committed still read the batch running and left a pending task in a cancelled batch
 * (never dialled, since claims skip cancelled batches, but counted as pending forever).
 *
 * Pausing and resuming (decision 0549; svc extensions `POST /pause-batch-call/{id}`, `/resume-batch-call/{id}`), in
 * the same shape: under the org's lock, the batch row locked. A pause sets `status = 'paused'` and keeps the status
 * it returns to in `paused_from`. `scheduler_claim` reads the batch's status after it is granted the org's lock, so
 * every claim that begins after the pause answered claims nothing of it; a claim that ran before committed its
 * tasks as `dialling` (calls in flight, which finish and are recorded). Pending tasks stay pending (retries a
 * recorder returns to pending too); the batch is not due while paused (`batch_calls_due`'s predicate), so its lines
 * go to the org's other batches at their next claim. Resuming restores the status, makes the batch due now (not
 * before its trigger time; a closed window postpones it as usual) and wakes the schedulers. Both are idempotent; a
 * completed or cancelled batch cannot be paused or resumed (BatchCallNotRunning, 409). Cancelling a paused batch
 * cancels it.
 *
 * Each answers the batch's progress as stored (`StoredProgress`): every field of `BatchCallProgress` but its legal
 * hours, and the rows they are explained from, read in the same transaction. Explaining them is a compliance
 * decision, so the callers run it (`compliance/BatchProgressLegalHours.progressOf`; dependency rule 3).
 */
import { isOpen, nextOpening } from "@svc/domain/CallWindow.ts"
import { CanonicalCallTimeWindow } from "@svc/domain/CallWindow.ts"
import type { StoredProgress } from "@svc/domain/compliance/BatchProgressLegalHours.ts"
import type { LegalHoursRows } from "@svc/domain/compliance/LegalHoursReport.ts"
import type { BatchCallProgress } from "@svc/domain/models/BatchCallProgress.ts"
import { BatchCallId, type OrgId } from "@svc/domain/models/Ids.ts"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { dialTimes, legalHoursRowsOf, ORG_LOCK } from "../dispatch/index.ts"
import {
  BatchCallNotFound,
  type BatchCallStatus,
  CREATED_CHANNEL,
  type TaskState,
  TaskStates
} from "./BatchCallsRepo.ts"

/**
 * Pause or resume of a batch that has finished (decision 0549: 409 in the error shape).
 *
 * @category errors
 */
export class BatchCallNotRunning extends Schema.TaggedError<BatchCallNotRunning>()("BatchCallNotRunning", {
  batchCallId: Schema.String,
  status: Schema.String,
  message: Schema.String
}) {}

/**
 * Length of a call assumed by the completion estimate (the default of `admin batch-preview --call-seconds`).
 *
 * @category models
 */
export const ASSUMED_CALL_MS = 120_000

interface Row {
  readonly batch_call_id: string
  readonly name: string
  readonly from_number: string
  readonly status: BatchCallStatus
  readonly total_task_count: number
  readonly reserved_concurrency: number
  readonly max_concurrency: number | null
  readonly call_time_window: unknown
  readonly trigger_timestamp: number | null
  readonly scheduled_timestamp: number
  readonly created_timestamp: number
  readonly finished_timestamp: number | null
  readonly concurrency_limit: number
  readonly org_in_flight: number
}

const decodeWindow = Schema.decodeUnknownSync(CanonicalCallTimeWindow)

/**
 * Progress of batch calls, and cancelling them.
 *
 * @category services
 */
export class BatchProgressRepo extends Context.Service<BatchProgressRepo, {
  readonly get: (
    orgId: OrgId,
    batchCallId: BatchCallId,
    now: number
  ) => Effect.Effect<StoredProgress, BatchCallNotFound>
  readonly cancel: (
    orgId: OrgId,
    batchCallId: BatchCallId,
    now: number
  ) => Effect.Effect<StoredProgress, BatchCallNotFound>
  readonly pause: (
    orgId: OrgId,
    batchCallId: BatchCallId,
    now: number
  ) => Effect.Effect<StoredProgress, BatchCallNotFound | BatchCallNotRunning>
  readonly resume: (
    orgId: OrgId,
    batchCallId: BatchCallId,
    now: number
  ) => Effect.Effect<StoredProgress, BatchCallNotFound | BatchCallNotRunning>
  /** How many batches of all orgs are scheduled, in progress and paused now (the scheduler's gauge). */
  readonly openCounts: Effect.Effect<
    { readonly scheduled: number; readonly in_progress: number; readonly paused: number }
  >
}>()("@svc/store/BatchProgressRepo") {
  /** @category layers */
  static readonly layer: Layer.Layer<BatchProgressRepo, never, SqlClient.SqlClient> = Layer.effect(
    BatchProgressRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const notFound = (batchCallId: string) =>
        new BatchCallNotFound({ batchCallId, message: `batch call ${batchCallId} not found` })

      const read = (orgId: OrgId, batchCallId: BatchCallId, now: number) =>
        Effect.gen(function*() {
          const [row] = yield* sql<Row>`
            SELECT b.batch_call_id, b.name, b.from_number, b.status, b.total_task_count, b.reserved_concurrency,
              b.max_concurrency,
              b.call_time_window, b.trigger_timestamp::float8 AS trigger_timestamp,
              b.scheduled_timestamp::float8 AS scheduled_timestamp, b.created_timestamp::float8 AS created_timestamp,
              b.finished_timestamp::float8 AS finished_timestamp, o.concurrency_limit,
              -- one count per state, each on its partial index (state IN (...) would scan every task)
              (SELECT count(*)::int4 FROM batch_call_tasks t WHERE t.org_id = b.org_id AND t.state = 'dialling') +
              (SELECT count(*)::int4 FROM batch_call_tasks t WHERE t.org_id = b.org_id AND t.state = 'unknown')
                AS org_in_flight
            FROM batch_calls b JOIN orgs o ON o.org_id = b.org_id
            WHERE b.org_id = ${orgId} AND b.batch_call_id = ${batchCallId}`
          if (row === undefined) return yield* notFound(batchCallId)
          // the batch's tasks by its (batch_call_id, task_index) key
          const counts = yield* sql<{ state: TaskState; n: number }>`
            SELECT state, count(*)::int4 AS n FROM batch_call_tasks
            WHERE batch_call_id = ${batchCallId} GROUP BY state`
          const window = row.call_time_window === null ? undefined : decodeWindow(row.call_time_window)
          const legal = yield* legalHoursRowsOf(orgId, batchCallId, window, now).pipe(
            Effect.provideService(SqlClient.SqlClient, sql)
          )
          return toProgress(row, counts, legal, now)
        })

      const get = Effect.fn("BatchProgressRepo.get")(
        function*(orgId: OrgId, batchCallId: BatchCallId, now: number) {
          return yield* read(orgId, batchCallId, now).pipe(Effect.catchTag("SqlError", Effect.die))
        }
      )

      const cancel = Effect.fn("BatchProgressRepo.cancel")(
        function*(orgId: OrgId, batchCallId: BatchCallId, now: number) {
          return yield* sql.withTransaction(Effect.gen(function*() {
            yield* sql`SELECT pg_advisory_xact_lock(${ORG_LOCK}, hashtext(${orgId}))`
            // the batch row first, FOR UPDATE: a record that would put a retried call's task back to pending
            // locks it too (CallsRepo.recordFinished), so it either finished before (its pending task is cancelled
            // below, the next statement's snapshot seeing it) or waits and reads the batch cancelled
            const [batch] = yield* sql<{ status: BatchCallStatus }>`
              SELECT status FROM batch_calls WHERE org_id = ${orgId} AND batch_call_id = ${batchCallId} FOR UPDATE`
            if (batch === undefined) return yield* notFound(batchCallId)
            if (batch.status === "scheduled" || batch.status === "in_progress" || batch.status === "paused") {
              yield* sql`
                UPDATE batch_call_tasks SET state = 'cancelled', state_reason = 'batch_cancelled'
                WHERE batch_call_id = ${batchCallId} AND state = 'pending'`
              yield* sql`
                UPDATE batch_calls SET status = 'cancelled', paused_from = NULL, finished_timestamp = ${now}
                WHERE batch_call_id = ${batchCallId} AND status IN ('scheduled', 'in_progress', 'paused')`
            }
            return yield* read(orgId, batchCallId, now)
          })).pipe(Effect.catchTag("SqlError", Effect.die))
        }
      )

      /** The batch locked under the org's lock, or why it cannot be paused or resumed. */
      const lockRunning = (orgId: OrgId, batchCallId: BatchCallId, verb: string) =>
        Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(${ORG_LOCK}, hashtext(${orgId}))`
          const [batch] = yield* sql<{ status: BatchCallStatus }>`
            SELECT status FROM batch_calls WHERE org_id = ${orgId} AND batch_call_id = ${batchCallId} FOR UPDATE`
          if (batch === undefined) return yield* notFound(batchCallId)
          if (batch.status === "completed" || batch.status === "cancelled") {
            return yield* new BatchCallNotRunning({
              batchCallId,
              status: batch.status,
              message: `batch call ${batchCallId} is ${batch.status}: only a scheduled, in-progress or paused ` +
                `batch can be ${verb}`
            })
          }
          return batch.status
        })

      const pause = Effect.fn("BatchProgressRepo.pause")(
        function*(orgId: OrgId, batchCallId: BatchCallId, now: number) {
          return yield* sql.withTransaction(Effect.gen(function*() {
            const status = yield* lockRunning(orgId, batchCallId, "paused")
            if (status !== "paused") {
              yield* sql`
                UPDATE batch_calls SET status = 'paused', paused_from = status WHERE batch_call_id = ${batchCallId}`
            }
            return yield* read(orgId, batchCallId, now)
          })).pipe(Effect.catchTag("SqlError", Effect.die))
        }
      )

      const resume = Effect.fn("BatchProgressRepo.resume")(
        function*(orgId: OrgId, batchCallId: BatchCallId, now: number) {
          return yield* sql.withTransaction(Effect.gen(function*() {
            const status = yield* lockRunning(orgId, batchCallId, "resumed")
            if (status === "paused") {
              // due now (a batch that rested or slept while paused is looked at again at once), never before its
              // trigger time; a closed window postpones it at the next pass, as for any due batch
              yield* sql`
                UPDATE batch_calls SET status = paused_from, paused_from = NULL,
                  next_dispatch_at = greatest(least(next_dispatch_at, ${now}), coalesce(trigger_timestamp, 0))
                WHERE batch_call_id = ${batchCallId}`
              // the wake-up create-batch-call sends: a listening scheduler looks at its batches now, not at its
              // next poll
              yield* sql`SELECT pg_notify(${CREATED_CHANNEL}, ${batchCallId})`
            }
            return yield* read(orgId, batchCallId, now)
          })).pipe(Effect.catchTag("SqlError", Effect.die))
        }
      )

      // each count off its partial index: batch_calls_due (scheduled, in_progress), batch_calls_paused (migration 0034)
      const openCounts = sql<{ scheduled: number; in_progress: number; paused: number }>`
        SELECT
          (SELECT count(*)::int4 FROM batch_calls WHERE status IN ('scheduled', 'in_progress') AND status = 'scheduled')
            AS scheduled,
          (SELECT count(*)::int4 FROM batch_calls WHERE status IN ('scheduled', 'in_progress') AND status = 'in_progress')
            AS in_progress,
          (SELECT count(*)::int4 FROM batch_calls WHERE status = 'paused') AS paused`.pipe(
        Effect.map((rows) => ({ ...rows[0]! })),
        Effect.orDie,
        Effect.withSpan("BatchProgressRepo.openCounts")
      )

      return BatchProgressRepo.of({ get, cancel, pause, resume, openCounts })
    })
  )
}

const toProgress = (
  row: Row,
  counts: ReadonlyArray<{ readonly state: TaskState; readonly n: number }>,
  legal: LegalHoursRows,
  now: number
): StoredProgress => {
  const tasks = Object.fromEntries(TaskStates.map((s) => [s, 0])) as Record<TaskState, number>
  for (const c of counts) tasks[c.state] = c.n
  const open = row.status === "scheduled" || row.status === "in_progress"
  const window = row.call_time_window === null ? undefined : decodeWindow(row.call_time_window)
  const from = Math.max(now, row.trigger_timestamp ?? now)
  const opening = !open ? null : window === undefined ? from : Option.getOrNull(nextOpening(window, from))
  const inFlight = tasks.dialling + tasks.unknown
  // the dispatcher's model (DispatchInspect.preview): the batch's lines are the org's limit less its reserve and
  // the other batches' calls in flight; its own calls in flight hold lines for one assumed call length
  // the batch's own cap binds too (decision 0549)
  const slots = Math.min(
    Math.max(0, row.concurrency_limit - row.reserved_concurrency - (row.org_in_flight - inFlight)),
    row.max_concurrency ?? Number.POSITIVE_INFINITY
  )
  const times = !open || tasks.pending === 0 || opening === null ? [] : dialTimes({
    window,
    start: opening,
    slots,
    busy: Math.min(slots, inFlight),
    durationMs: ASSUMED_CALL_MS,
    count: tasks.pending
  })
  const last = times[times.length - 1]
  return {
    batch_call_id: BatchCallId.make(row.batch_call_id),
    name: row.name,
    from_number: row.from_number as BatchCallProgress["from_number"],
    status: row.status,
    total_task_count: row.total_task_count,
    tasks,
    calls_placed: tasks.completed + tasks.failed,
    calls_in_flight: inFlight,
    ...(row.max_concurrency === null ? {} : { max_concurrency: row.max_concurrency }),
    scheduled_timestamp: row.scheduled_timestamp,
    window_open_now: window === undefined || isOpen(window, now),
    next_window_opening_timestamp: opening,
    estimated_completion_timestamp: last === undefined ? null : last + ASSUMED_CALL_MS,
    completed_timestamp: row.status === "completed" ? row.finished_timestamp : null,
    cancelled_timestamp: row.status === "cancelled" ? row.finished_timestamp : null,
    created_timestamp: row.created_timestamp,
    legal_hours_rows: legal
  }
}
