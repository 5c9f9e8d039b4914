/**
 * Reading stored batch calls: one batch of an org, and how many of its tasks are in each state.
 */
import { BatchCall } from "@svc/domain/models/BatchCall.ts"
import type { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Effect, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import { BatchCallNotFound } from "./BatchCallErrors.ts"
import { BatchCallStatus, type StoredBatchCall, type TaskState, TaskStates } from "./BatchCallModels.ts"

// bigint columns are selected as float8: the driver returns int8 as a JS bigint, and ms timestamps are far below
// 2^53, so the conversion is exact.
const BatchCallRow = Schema.Struct({
  batch_call_id: Schema.String,
  org_id: Schema.String,
  api_key_id: Schema.String,
  name: Schema.String,
  from_number: Schema.String,
  trigger_timestamp: Schema.NullOr(Schema.Number),
  scheduled_timestamp: Schema.Number,
  reserved_concurrency: Schema.Number,
  call_time_window: Schema.NullOr(Schema.Unknown),
  status: BatchCallStatus,
  total_task_count: Schema.Number,
  next_dispatch_at: Schema.Number,
  created_timestamp: Schema.Number
})
type BatchCallRow = typeof BatchCallRow.Type

const decodeRows = Schema.decodeUnknownEffect(Schema.Array(BatchCallRow))
const decodeBatchCall = Schema.decodeUnknownEffect(BatchCall)

const toStored = (row: BatchCallRow) =>
  decodeBatchCall({
    batch_call_id: row.batch_call_id,
    name: row.name,
    from_number: row.from_number,
    scheduled_timestamp: row.scheduled_timestamp,
    total_task_count: row.total_task_count,
    ...(row.call_time_window === null ? {} : { call_time_window: row.call_time_window })
  }).pipe(Effect.map((batch): StoredBatchCall => ({
    batch,
    // branded as the row is read, a type only (the row schema checks a string, as before)
    orgId: row.org_id as OrgId,
    apiKeyId: row.api_key_id,
    status: row.status,
    reservedConcurrency: row.reserved_concurrency,
    triggerTimestamp: row.trigger_timestamp ?? undefined,
    nextDispatchAt: row.next_dispatch_at,
    createdTimestamp: row.created_timestamp
  })))

/** The statements that read batches, on `sql`. */
export const make = (sql: SqlClient.SqlClient) => {
  const selectBatch = (orgId: OrgId, batchCallId: BatchCallId) =>
    sql`
      SELECT batch_call_id, org_id, api_key_id, name, from_number, trigger_timestamp::float8 AS trigger_timestamp,
        scheduled_timestamp::float8 AS scheduled_timestamp, reserved_concurrency, call_time_window, status,
        total_task_count, next_dispatch_at::float8 AS next_dispatch_at, created_timestamp::float8 AS created_timestamp
      FROM batch_calls
      WHERE org_id = ${orgId} AND batch_call_id = ${batchCallId}`.pipe(
      Effect.flatMap(decodeRows),
      Effect.flatMap((rows) => rows.length === 0 ? Effect.succeed(undefined) : toStored(rows[0]!))
    )

  const get = Effect.fn("BatchCallsRepo.get")(
    function*(orgId: OrgId, batchCallId: BatchCallId) {
      const stored = yield* selectBatch(orgId, batchCallId)
      if (stored === undefined) {
        return yield* new BatchCallNotFound({ batchCallId, message: `batch call ${batchCallId} not found` })
      }
      return stored
    },
    Effect.catchTags({ SqlError: Effect.die, SchemaError: Effect.die })
  )

  const taskCounts = Effect.fn("BatchCallsRepo.taskCounts")(
    function*(orgId: OrgId, batchCallId: BatchCallId) {
      const rows = yield* sql<{ state: string | null; n: number }>`
        SELECT t.state, count(t.state)::int4 AS n
        FROM batch_calls b LEFT JOIN batch_call_tasks t ON t.batch_call_id = b.batch_call_id
        WHERE b.org_id = ${orgId} AND b.batch_call_id = ${batchCallId}
        GROUP BY t.state`
      if (rows.length === 0) {
        return yield* new BatchCallNotFound({ batchCallId, message: `batch call ${batchCallId} not found` })
      }
      const counts = Object.fromEntries(TaskStates.map((s) => [s, 0])) as Record<TaskState, number>
      for (const row of rows) if (row.state !== null) counts[row.state as TaskState] = row.n
      return counts
    },
    Effect.catchTag("SqlError", Effect.die)
  )

  return { selectBatch, get, taskCounts }
}

/** What `make` gives. */
export type BatchCallReads = ReturnType<typeof make>
