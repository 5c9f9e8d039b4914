/**
 * Listing batch calls and a batch's tasks (decision 0548; svc extensions `POST /list-batch-calls` and
 * `POST /list-batch-call-tasks/{batch_call_id}`).
 *
 * Both page with the signed keys of decision 0102 (the domain's codec through `CursorKeys`, as list-contacts and
 * list-calls), bound to the org and to the query: a batches key carries `(created_timestamp, batch_call_id)` of
 * the page's last batch, a tasks key `(task_index, task_id)` of its last task and is bound to the batch, so it
 * cannot page another batch. Every statement is scoped by `org_id`: another org's batch is not found.
 *
 * - A page of batches is a walk of `batch_calls_org_page` (migration 0029) in the list order; each batch on it is
 *   then answered as get-batch-call answers it (`BatchProgressRepo.get`, the one place that computes a batch's
 *   progress), so an item costs what a get-batch-call costs. Items are progress as stored (`StoredProgress`): the
 *   caller explains their legal hours, as for get-batch-call (dependency rule 3).
 * - A page of tasks walks the batch's `(batch_call_id, task_index)` key, or with a state filter one range of
 *   `batch_call_tasks_by_state` per state merged in task order, and joins each task's latest call by its
 *   `(org_id, call_id)` key: a page reads its own rows only, however large the batch.
 */
import type { StoredProgress } from "@svc/domain/compliance/BatchProgressLegalHours.ts"
import type {
  BatchCallFilterCriteria,
  BatchCallTaskItem,
  ListBatchCallsRequest,
  ListBatchCallTasksRequest
} from "@svc/domain/models/BatchCallLists.ts"
import type { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import * as Pagination from "@svc/domain/Pagination.ts"
import { Context, Effect, Layer, Result, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { CursorKeys } from "../db/CursorKeys.ts"
import { BatchCallNotFound } from "./BatchCallErrors.ts"
import { BatchProgressRepo } from "./BatchProgressRepo.ts"

/**
 * A `pagination_key` refused: not ours, altered, another org's, another query's (or batch's), or not a key of
 * this list. The message names the field and why.
 *
 * @category errors
 */
export class BatchListKeyInvalid extends Schema.TaggedError<BatchListKeyInvalid>()("BatchListKeyInvalid", {
  message: Schema.String
}) {}

/** @category models */
export interface BatchCallsPage {
  readonly has_more: boolean
  readonly items: ReadonlyArray<StoredProgress>
  readonly pagination_key?: string
}

/** @category models */
export interface BatchCallTasksPage {
  readonly has_more: boolean
  readonly items: ReadonlyArray<BatchCallTaskItem>
  readonly pagination_key?: string
}

/** A statement and its parameters, as the repository runs it (plan tests and the bench run the same). */
export interface Statement {
  readonly text: string
  readonly params: ReadonlyArray<unknown>
}

/** Accumulates bind parameters and hands out their placeholders. */
class Params {
  readonly values: Array<unknown> = []
  add(value: unknown): string {
    this.values.push(value)
    return `$${this.values.length}`
  }
}

/**
 * The condition of list-batch-calls' `created_timestamp` member. Creation times are whole milliseconds, so the bound
 * is rounded to the integer that keeps the same rows and compared as int8: a column compared with a numeric is cast
 * for every row and cannot bound the index scan.
 */
const createdCondition = (f: NonNullable<BatchCallFilterCriteria["created_timestamp"]>, p: Params): string => {
  const at = (n: number) => `${p.add(n)}::int8`
  if (f.type === "range") {
    return `b.created_timestamp BETWEEN ${at(Math.ceil(f.value[0]))} AND ${at(Math.floor(f.value[1]))}`
  }
  const v = f.value
  switch (f.op) {
    case "gt":
      return `b.created_timestamp > ${at(Math.floor(v))}`
    case "ge":
      return `b.created_timestamp >= ${at(Math.ceil(v))}`
    case "lt":
      return `b.created_timestamp < ${at(Math.ceil(v))}`
    case "le":
      return `b.created_timestamp <= ${at(Math.floor(v))}`
    case "ne":
      return Number.isInteger(v) ? `b.created_timestamp <> ${at(v)}` : "true"
    default:
      return Number.isInteger(v) ? `b.created_timestamp = ${at(v)}` : "false"
  }
}

/**
 * The statement of one list-batch-calls page (limit + 1 ids, in list order), after `after` when given.
 *
 * @category encoding
 */
export const batchCallsStatement = (
  orgId: OrgId,
  request: ListBatchCallsRequest,
  after: Pagination.CursorPosition | undefined
): Statement => {
  const p = new Params()
  const where = [`b.org_id = ${p.add(orgId)}::text`]
  const criteria = request.filter_criteria
  if (criteria?.status !== undefined) where.push(`b.status = ANY(${p.add(criteria.status.value)}::text[])`)
  if (criteria?.created_timestamp !== undefined) where.push(createdCondition(criteria.created_timestamp, p))
  const seek = after === undefined ? undefined : Pagination.keysetSeek(direction(request.sort_order), after)
  if (seek !== undefined) {
    where.push(
      `(b.created_timestamp, b.batch_call_id) ${seek.operator} (${p.add(seek.sortValue)}::int8, ${
        p.add(seek.id)
      }::text)`
    )
  }
  const dir = request.sort_order === "descending" ? "DESC" : "ASC"
  return {
    text: `SELECT b.batch_call_id, b.created_timestamp::float8 AS created_timestamp FROM batch_calls b
      WHERE ${where.join(" AND ")} ORDER BY b.created_timestamp ${dir}, b.batch_call_id ${dir}
      LIMIT ${p.add(request.limit + 1)}::int8`,
    params: p.values
  }
}

/**
 * The statement of one list-batch-call-tasks page of batch `batchCallId` (already known to be the org's): limit + 1
 * tasks in task order after `after`, each with its latest call's outcome. `now` bounds `next_attempt_timestamp`
 * from below. With a state filter, one index range per state, each cut to the page size, merged in task order.
 *
 * @category encoding
 */
export const tasksStatement = (
  orgId: OrgId,
  batchCallId: BatchCallId,
  request: ListBatchCallTasksRequest,
  after: Pagination.CursorPosition | undefined,
  now: number
): Statement => {
  const p = new Params()
  const batch = p.add(batchCallId)
  const desc = request.sort_order === "descending"
  const dir = desc ? "DESC" : "ASC"
  const seek = after === undefined ? "" : ` AND q.task_index ${desc ? "<" : ">"} ${p.add(after.sortValue)}::int4`
  const limit = p.add(request.limit + 1)
  const range = (state: string | undefined) =>
    `SELECT q.* FROM batch_call_tasks q WHERE q.batch_call_id = ${batch}::text${
      state === undefined ? "" : ` AND q.state = ${p.add(state)}::text`
    }${seek} ORDER BY q.task_index ${dir} LIMIT ${limit}::int8`
  const states = stateFilter(request)
  // PostgreSQL takes one ORDER BY and LIMIT per query level: one range is the page itself, several are merged
  const page = states === undefined
    ? range(undefined)
    : states.length === 1
    ? range(states[0])
    : states.map((s) => `(${range(s)})`).join(" UNION ALL ") + ` ORDER BY task_index ${dir} LIMIT ${limit}::int8`
  return {
    text: `SELECT t.task_id::text AS task_id, t.task_index, t.to_number, t.state, t.state_reason,
        -- calls started: each retry is the next attempt (migration 0024), and the current one counts once claimed
        t.retry_attempt - 1 + CASE WHEN t.attempts > 0 THEN 1 ELSE 0 END AS attempts,
        t.call_id AS last_call_id,
        CASE WHEN c.call_status NOT IN ('registered', 'ongoing') THEN c.disconnection_reason END AS last_outcome,
        CASE WHEN t.state = 'pending' AND b.status IN ('scheduled', 'in_progress')
          THEN greatest(${p.add(now)}::int8, t.not_before, b.next_dispatch_at)::float8 END AS next_attempt_timestamp,
        -- SQL NULL: none given; a JSON null given is kept
        t.metadata, t.metadata IS NOT NULL AS has_metadata
      FROM (${page}) t
      -- the batch by its key, once (joined on the task's column it was hashed from a scan of every batch)
      CROSS JOIN (SELECT status, next_dispatch_at FROM batch_calls
        WHERE batch_call_id = ${batch}::text AND org_id = ${p.add(orgId)}::text) b
      LEFT JOIN calls c ON c.org_id = t.org_id AND c.call_id = t.call_id
      ORDER BY t.task_index ${dir}`,
    params: p.values
  }
}

const direction = (order: "ascending" | "descending"): Pagination.SortDirection =>
  order === "descending" ? "desc" : "asc"

/** The states filtered, without repeats and in one order (the same filter is the same query). */
const stateFilter = (request: ListBatchCallTasksRequest): ReadonlyArray<string> | undefined => {
  const value = request.filter_criteria?.state?.value
  return value === undefined ? undefined : [...new Set(value)].sort()
}

/**
 * The fingerprint a list-batch-calls key is bound to (decision 0102): what selects and orders the batches.
 *
 * @category encoding
 */
export const batchCallsFingerprint = (request: ListBatchCallsRequest): Pagination.QueryFingerprint =>
  Pagination.queryFingerprint({
    resource: "batch_calls",
    status: request.filter_criteria?.status?.value === undefined
      ? null
      : [...new Set(request.filter_criteria.status.value)].sort(),
    created_timestamp: request.filter_criteria?.created_timestamp ?? null,
    sort_order: request.sort_order
  })

/**
 * The fingerprint a list-batch-call-tasks key is bound to: the batch, the states and the order.
 *
 * @category encoding
 */
export const tasksFingerprint = (
  batchCallId: BatchCallId,
  request: ListBatchCallTasksRequest
): Pagination.QueryFingerprint =>
  Pagination.queryFingerprint({
    resource: "batch_call_tasks",
    batch_call_id: batchCallId,
    state: stateFilter(request) ?? null,
    sort_order: request.sort_order
  })

const wrongList = (list: string) =>
  new BatchListKeyInvalid({
    message: `pagination_key is not a ${list} key; pass the pagination_key of the previous response unchanged, ` +
      "or start again without pagination_key"
  })

interface TaskRow {
  readonly task_id: string
  readonly task_index: number
  readonly to_number: string
  readonly state: BatchCallTaskItem["state"]
  readonly state_reason: string | null
  readonly attempts: number
  readonly last_call_id: string | null
  readonly last_outcome: string | null
  readonly next_attempt_timestamp: number | null
  readonly metadata: unknown
  readonly has_metadata: boolean
}

const toItem = (row: TaskRow): BatchCallTaskItem => ({
  task_id: row.task_id,
  to_number: row.to_number,
  state: row.state,
  state_reason: row.state_reason,
  attempts: row.attempts,
  last_call_id: row.last_call_id,
  last_outcome: row.last_outcome,
  next_attempt_timestamp: row.next_attempt_timestamp,
  ...(row.has_metadata ? { metadata: row.metadata as Schema.Json } : {})
})

// each batch of a page is answered by get-batch-call's reads: a few statements each, run a few at a time so that a
// page does not take the whole pool
const PROGRESS_CONCURRENCY = 4

/**
 * The org's batch calls and a batch's tasks, a page at a time.
 *
 * @category services
 */
export class BatchCallLists extends Context.Service<BatchCallLists, {
  readonly batchCalls: (
    orgId: OrgId,
    request: ListBatchCallsRequest,
    now: number
  ) => Effect.Effect<BatchCallsPage, BatchListKeyInvalid>
  readonly tasks: (
    orgId: OrgId,
    batchCallId: BatchCallId,
    request: ListBatchCallTasksRequest,
    now: number
  ) => Effect.Effect<BatchCallTasksPage, BatchListKeyInvalid | BatchCallNotFound>
}>()("@svc/store/BatchCallLists") {
  /** @category layers */
  static readonly layer: Layer.Layer<BatchCallLists, never, SqlClient.SqlClient | CursorKeys | BatchProgressRepo> =
    Layer.effect(
      BatchCallLists,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const cursors = yield* CursorKeys
        const progress = yield* BatchProgressRepo

        const resume = (key: string | undefined, context: Pagination.CursorContext, list: string) => {
          if (key === undefined) return Effect.succeed(undefined)
          const decoded = cursors.decode(key, context)
          if (Result.isFailure(decoded)) {
            return Effect.fail(new BatchListKeyInvalid({ message: decoded.failure.message }))
          }
          // every key of these lists has a numeric sort value (a timestamp, a task index)
          return typeof decoded.success.sortValue === "number" ? Effect.succeed(decoded.success) : wrongList(list)
        }

        const run = <A extends object>(statement: Statement) =>
          sql.unsafe<A>(statement.text, statement.params as Array<never>).pipe(Effect.orDie)

        const batchCalls = Effect.fn("BatchCallLists.batchCalls")(
          function*(orgId: OrgId, request: ListBatchCallsRequest, now: number) {
            const context = { orgId, queryFingerprint: batchCallsFingerprint(request) }
            const after = yield* resume(request.pagination_key, context, "list-batch-calls")
            const rows = yield* run<{ batch_call_id: BatchCallId; created_timestamp: number }>(
              batchCallsStatement(orgId, request, after)
            )
            const page = Pagination.keysetPage(rows, request.limit, (r) => ({
              sortValue: r.created_timestamp,
              id: r.batch_call_id
            }))
            const items = yield* Effect.forEach(
              page.items,
              (r) =>
                progress.get(orgId, r.batch_call_id, now).pipe(
                  // deleted since the page was read (its org was): not listed
                  Effect.catchTag("BatchCallNotFound", () => Effect.succeed(undefined))
                ),
              { concurrency: PROGRESS_CONCURRENCY }
            )
            return {
              has_more: page.hasMore,
              items: items.filter((item) => item !== undefined),
              ...(page.hasMore && page.last !== undefined
                ? { pagination_key: cursors.encode(page.last, context) }
                : {})
            }
          }
        )

        const tasks = Effect.fn("BatchCallLists.tasks")(
          function*(orgId: OrgId, batchCallId: BatchCallId, request: ListBatchCallTasksRequest, now: number) {
            const context = { orgId, queryFingerprint: tasksFingerprint(batchCallId, request) }
            const after = yield* resume(request.pagination_key, context, "list-batch-call-tasks")
            const rows = yield* run<TaskRow>(tasksStatement(orgId, batchCallId, request, after, now))
            if (rows.length === 0) {
              // an empty page, or no such batch of this org: one more look tells them apart
              const found =
                yield* sql`SELECT 1 FROM batch_calls WHERE org_id = ${orgId} AND batch_call_id = ${batchCallId}`
                  .pipe(Effect.orDie)
              if (found.length === 0) {
                return yield* new BatchCallNotFound({ batchCallId, message: `batch call ${batchCallId} not found` })
              }
            }
            const page = Pagination.keysetPage(rows, request.limit, (r) => ({ sortValue: r.task_index, id: r.task_id }))
            return {
              has_more: page.hasMore,
              items: page.items.map(toItem),
              ...(page.hasMore && page.last !== undefined
                ? { pagination_key: cursors.encode(page.last, context) }
                : {})
            }
          }
        )

        return BatchCallLists.of({ batchCalls, tasks })
      })
    )
}
