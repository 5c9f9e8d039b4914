/**
 * Persistence behind `POST /create-batch-call`: the checks that need the database (the `from_number` is the
 * org's, every override agent exists in the org), the batch and all its tasks stored in one transaction through
 * one bulk statement (`unnest` of column arrays, one round trip for 100,000 tasks), and retries that return the
 * first batch instead of creating a second one.
 *
 * Invariants:
 * - Every statement is scoped by the caller's org: no id, key or body reaches another org's rows.
 * - A create either stores the batch, every task and its idempotency record, or nothing.
 * - Retries (design: "retries of create-batch-call"): a request with an `Idempotency-Key` seen for the org within
 *   24 h returns the batch that key created when the body is the same, and fails with
 *   {@link IdempotencyKeyReused} when it differs; without a key, a request the client marks as a retry
 *   (`retryCount > 0`, the vendor client's `X-Stainless-Retry-Count`) whose body is identical to one the same API
 *   key sent at most 10 minutes before returns that batch. Concurrent duplicates serialize on a unique row claimed before the
 *   batch is written, so they cannot both create.
 *
 * Decision record: docs/decisions/0302-batch-call-storage.md.
 */
import { canonicalize } from "@svc/domain/CallWindow.ts"
import { type LegalGroup, LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import type { ContactLocation } from "@svc/domain/compliance/RecipientZones.ts"
import { BatchCall, type CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import type { BatchCallTask } from "@svc/domain/models/BatchCallTask.ts"
import { BatchCallId } from "@svc/domain/models/Ids.ts"
import { defaultSpacingMs } from "@svc/domain/models/RetryPolicy.ts"
import { Clock, Context, Data, Effect, Layer, Schema, Stream } from "effect"
import { SqlClient } from "effect/sql"
import * as crypto from "node:crypto"

// ---------------------------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------------------------

/**
 * More tasks than the configured maximum per batch (design: "empty `tasks`": 400; default maximum 100,000).
 *
 * @category errors
 */
export class TooManyTasks extends Schema.TaggedError<TooManyTasks>()("TooManyTasks", {
  count: Schema.Int,
  max: Schema.Int,
  message: Schema.String
}) {}

/**
 * A batch without tasks (design: "empty `tasks`": 400). The request schema already rejects it; the repository
 * does not rely on that.
 *
 * @category errors
 */
export class NoTasks extends Schema.TaggedError<NoTasks>()("NoTasks", {
  message: Schema.String
}) {}

/**
 * The `from_number` is not a number of the org (spec: "a number ... that the account owns"; 404 "not found under
 * the given key").
 *
 * @category errors
 */
export class FromNumberNotOwned extends Schema.TaggedError<FromNumberNotOwned>()("FromNumberNotOwned", {
  fromNumber: Schema.String,
  message: Schema.String
}) {}

/**
 * A task's `override_agent_id` (with its numeric `override_agent_version`, when one is given) is not an agent of
 * the org (spec: 404 "the asset cannot be found under the given key"). Names the first such agent in task order.
 *
 * @category errors
 */
export class AgentNotFound extends Schema.TaggedError<AgentNotFound>()("AgentNotFound", {
  agentId: Schema.String,
  version: Schema.optionalKey(Schema.Int),
  taskIndex: Schema.Int,
  message: Schema.String
}) {}

/**
 * The `Idempotency-Key` already created a batch for the org, from a different body (400: the vendor's client
 * retries 409, so a conflict is never 409; design: "never 408/409").
 *
 * @category errors
 */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {
  idempotencyKey: Schema.String,
  message: Schema.String
}) {}

/**
 * A string PostgreSQL cannot store: it contains a NUL character (U+0000) or an unpaired UTF-16 surrogate, which
 * neither `text` nor `jsonb` accepts. Names the field (400).
 *
 * @category errors
 */
export class UnstorableText extends Schema.TaggedError<UnstorableText>()("UnstorableText", {
  field: Schema.String,
  message: Schema.String
}) {}

/**
 * No batch call with this id in the org.
 *
 * @category errors
 */
export class BatchCallNotFound extends Schema.TaggedError<BatchCallNotFound>()("BatchCallNotFound", {
  batchCallId: Schema.String,
  message: Schema.String
}) {}

/**
 * Every way `create` can refuse a request.
 *
 * @category errors
 */
export type CreateBatchCallError =
  | TooManyTasks
  | NoTasks
  | FromNumberNotOwned
  | AgentNotFound
  | IdempotencyKeyReused
  | UnstorableText

// ---------------------------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------------------------

/**
 * Lifecycle of a batch: `scheduled` until the scheduler starts it, `in_progress` while tasks are left,
 * `completed` when none is, `cancelled` when stopped.
 *
 * @category models
 */
export const BatchCallStatus = Schema.Literals(["scheduled", "in_progress", "completed", "cancelled"])
/** @category models */
export type BatchCallStatus = typeof BatchCallStatus.Type

/**
 * States of a task (see migrations/0004_batch_calls.ts): `pending` -> `dialling` (leased) -> `completed` |
 * `failed`; an expired lease -> `unknown` (reconciled before any redial); `skipped` (never dialled, reason
 * recorded); `cancelled` with its batch.
 *
 * @category models
 */
export const TaskStates = ["pending", "dialling", "unknown", "completed", "failed", "skipped", "cancelled"] as const
/** @category models */
export type TaskState = typeof TaskStates[number]

/**
 * A stored batch: the `BatchCall` the API returns plus what the scheduler and operators need.
 *
 * @category models
 */
export interface StoredBatchCall {
  readonly batch: BatchCall
  readonly orgId: string
  readonly apiKeyId: string
  readonly status: BatchCallStatus
  readonly reservedConcurrency: number
  /** As requested; `undefined` when the batch was to be sent immediately. */
  readonly triggerTimestamp: number | undefined
  readonly nextDispatchAt: number
  readonly createdTimestamp: number
}

/** @category models */
export interface CreateOptions {
  /** The request's `Idempotency-Key` header, if any. */
  readonly idempotencyKey?: string | undefined
  /** The request's `X-Stainless-Retry-Count` header as a number; absent or 0 on a first attempt. */
  readonly retryCount?: number | undefined
  /** Maximum tasks per batch (configuration; design default 100,000). */
  readonly maxTasks: number
}

/**
 * The fields of a create-batch-call request other than its tasks.
 *
 * @category models
 */
export type CreateBatchCallHead = Omit<CreateBatchCallRequest, "tasks">

/**
 * A create-batch-call request as it arrives (decision 0303): its tasks in request order, a chunk at a time, then
 * its other fields, which a body may send after the tasks. `tasks` may fail at any point, and fails at its end at
 * the latest when the request is invalid; `head` is read only after `tasks` ended.
 *
 * @category models
 */
export interface CreateBatchCallSource<E> {
  readonly tasks: Stream.Stream<ReadonlyArray<BatchCallTask>, E>
  readonly head: Effect.Effect<CreateBatchCallHead, E>
}

/** Tasks per insert statement (and per chunk of a request created from memory): 2,000 rows, a few MB of binds. */
export const CHUNK_TASKS = 2_000

const chunksOf = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const chunks: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size))
  return chunks
}

/**
 * A retry of an earlier create: its batch. Fails the transaction so that this attempt's tasks are rolled back;
 * `keylessHash` is set when the retry window must then be moved to this attempt (the claim's update went too).
 */
class EarlierBatch extends Data.TaggedError("BatchCallsRepo/EarlierBatch")<{
  readonly batch: BatchCall
  readonly keylessHash: Uint8Array | undefined
  readonly now: number
}> {}

/** The source failed; carried through the transaction so that it rolls back, then failed with as is. */
class SourceFailed extends Data.TaggedError("BatchCallsRepo/SourceFailed")<{ readonly error: unknown }> {}

/**
 * How long an `Idempotency-Key` names its batch (then the key may be used for a new one).
 *
 * @category models
 */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000

/**
 * How long after the previous attempt an identical keyless body marked as a retry returns the same batch. The
 * vendor client makes at most three attempts, each waiting up to its 300 s timeout before the next (delays up to
 * 8 s); measured from the previous attempt, a retry after a full timeout still falls inside the window.
 *
 * @category models
 */
export const RETRY_WINDOW_MS = 10 * 60 * 1000

/**
 * Channel on which a committed create is announced (payload: the batch call id), for schedulers that LISTEN.
 *
 * @category models
 */
export const CREATED_CHANNEL = "svc_batch_call_created"

// ---------------------------------------------------------------------------------------------------------------
// Preparing the request: the task columns and the body hash, in one pass over the tasks
// ---------------------------------------------------------------------------------------------------------------

// The walkers below are iterative (issue 27): they see what the HTTP edge accepted (nested at most maxJsonDepth
// levels), but a value nested thousands of levels deep must never exhaust the stack of a process that stores it.

/** A container being walked: its members in order (an object's keys; undefined for an array) and the next one. */
interface Walk {
  readonly container: object
  readonly keys: ReadonlyArray<string> | undefined
  index: number
  /** Members written so far (canonical: an object's members whose value is undefined are left out). */
  written: number
}

const walkOf = (container: object, sortKeys: boolean): Walk => {
  if (Array.isArray(container)) return { container, keys: undefined, index: 0, written: 0 }
  const keys = Object.keys(container)
  return { container, keys: sortKeys ? keys.sort() : keys, index: 0, written: 0 }
}

const sizeOf = (walk: Walk) =>
  walk.keys === undefined ? (walk.container as ReadonlyArray<unknown>).length : walk.keys.length

/** Whether every object inside `value` lists its keys in sorted order, so `JSON.stringify` is canonical. */
export const isCanonicalOrder = (value: unknown): boolean => {
  if (typeof value !== "object" || value === null) return true
  const stack: Array<Walk> = [walkOf(value, false)]
  while (stack.length > 0) {
    const walk = stack[stack.length - 1]!
    if (walk.index >= sizeOf(walk)) {
      stack.pop()
      continue
    }
    const at = walk.index++
    let child: unknown
    if (walk.keys === undefined) child = (walk.container as ReadonlyArray<unknown>)[at]
    else {
      if (at > 0 && !(walk.keys[at - 1]! < walk.keys[at]!)) return false
      child = (walk.container as Record<string, unknown>)[walk.keys[at]!]
    }
    if (typeof child === "object" && child !== null) stack.push(walkOf(child, false))
  }
  return true
}

/**
 * Canonical JSON (object keys sorted, no whitespace): equal text for values a client means as equal. The text is
 * what the recursive definition gives: `JSON.stringify` of each scalar (`null` for `undefined` in an array), members
 * whose value is `undefined` left out, keys in code-unit order.
 */
export const canonical = (value: unknown): string => {
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null"
  let out = ""
  const stack: Array<Walk> = []
  /** Writes `item` (a member's value or an element): a scalar whole, a container's opening. */
  const open = (item: unknown) => {
    if (typeof item !== "object" || item === null) {
      out += JSON.stringify(item) ?? "null"
      return
    }
    const walk = walkOf(item, true)
    out += walk.keys === undefined ? "[" : "{"
    stack.push(walk)
  }
  open(value)
  while (stack.length > 0) {
    const walk = stack[stack.length - 1]!
    if (walk.keys === undefined) {
      const items = walk.container as ReadonlyArray<unknown>
      if (walk.index >= items.length) {
        out += "]"
        stack.pop()
        continue
      }
      if (walk.index > 0) out += ","
      open(items[walk.index++])
      continue
    }
    const record = walk.container as Record<string, unknown>
    // members whose value is undefined are left out
    while (walk.index < walk.keys.length && record[walk.keys[walk.index]!] === undefined) walk.index++
    if (walk.index >= walk.keys.length) {
      out += "}"
      stack.pop()
      continue
    }
    const key = walk.keys[walk.index]!
    out += (walk.written++ > 0 ? "," : "") + JSON.stringify(key) + ":"
    walk.index++
    open(record[key])
  }
  return out
}

/**
 * The canonical JSON of a JSON value. Clients nearly always send keys in one order per shape, and objects whose
 * keys are already sorted take the native `JSON.stringify` path (the slow path costs ~5x).
 */
export const canonicalJson = (value: unknown): string =>
  isCanonicalOrder(value) ? JSON.stringify(value) : canonical(value)

/**
 * Whether a string inside `value` contains U+0000 or an unpaired surrogate: `text` rejects the first, `jsonb`
 * both (as the escapes `\u0000` and `\udXXX`).
 */
export const hasUnstorable = (value: unknown): boolean => {
  const bad = (text: string) => text.includes("\u0000") || !text.isWellFormed()
  if (typeof value === "string") return bad(value)
  if (typeof value !== "object" || value === null) return false
  const stack: Array<Walk> = [walkOf(value, false)]
  while (stack.length > 0) {
    const walk = stack[stack.length - 1]!
    if (walk.index >= sizeOf(walk)) {
      stack.pop()
      continue
    }
    const at = walk.index++
    let child: unknown
    if (walk.keys === undefined) child = (walk.container as ReadonlyArray<unknown>)[at]
    else {
      if (bad(walk.keys[at]!)) return true
      child = (walk.container as Record<string, unknown>)[walk.keys[at]!]
    }
    if (typeof child === "string") {
      if (bad(child)) return true
    } else if (typeof child === "object" && child !== null) stack.push(walkOf(child, false))
  }
  return false
}

/** Column arrays of the tasks insert, in task order; `null` where a task has no value. */
interface TaskColumns {
  readonly toNumber: Array<string>
  readonly agentId: Array<string | null>
  readonly agentVersion: Array<number | null>
  readonly agentVersionName: Array<string | null>
  readonly agentOverride: Array<string | null>
  readonly dynamicVariables: Array<string | null>
  readonly metadata: Array<string | null>
  readonly customSipHeaders: Array<string | null>
  /** The task's legal group (LegalGroups; null = unconstrained), decision 0623. */
  readonly legalGroup: Array<number | null>
}

/** Distinct (agent id, version or -1 for "any version") pairs in order of first use, with that task's index. */
type AgentUses = Array<{ readonly agentId: string; readonly version: number; readonly taskIndex: number }>

const INT4_MAX = 2_147_483_647

/** Every field of a task this module stores or hashes; a test fails when the task schema gains another. */
export const TASK_FIELDS = [
  "to_number",
  "ignore_e164_validation",
  "override_agent_id",
  "override_agent_version",
  "agent_override",
  "svc_llm_dynamic_variables",
  "metadata",
  "custom_sip_headers"
] as const

/** The first field of the request's own (non-task) fields holding a string PostgreSQL cannot store. */
const findUnstorableHead = (head: CreateBatchCallHead): string | undefined => {
  for (const [key, value] of Object.entries(head)) {
    if (key !== "tasks" && hasUnstorable(value)) return key
  }
  return undefined
}

const unstorable = (field: string) =>
  new UnstorableText({
    field,
    message: `${field} contains a NUL character (\\u0000) or an unpaired surrogate, which cannot be stored`
  })

/**
 * The tasks of one create, taken a chunk at a time as the request arrives: each chunk becomes the column arrays
 * of one insert, and every task goes into the request's hash and the list of override agents to check. The
 * first refusal the tasks alone decide (too many tasks, a string PostgreSQL cannot store) is kept and ends the
 * columns: nothing more needs storing for a request that will be refused.
 *
 * The hash (SHA-256) covers a version tag, then per task in order the canonical JSON of its stored values (jsonb
 * values with object keys sorted), then the canonical JSON of the request's other fields: equal for bodies a
 * client means as equal, whatever their key order or whitespace, and whatever the chunks they arrived in.
 */
class TaskPreparer {
  count = 0
  refusal: TooManyTasks | UnstorableText | undefined
  readonly agents: AgentUses = []
  private readonly seenAgents = new Set<string>()
  private readonly hash = crypto.createHash("sha256").update("create-batch-call v2\n")
  private readonly maxTasks: number
  /** Legal groups of the batch's tasks, assigned in task order (issue 15, decision 0623). */
  readonly legal = new LegalGrouper()

  constructor(maxTasks: number) {
    this.maxTasks = maxTasks
  }

  /** The chunk's columns and the index of its first task, or `undefined` once the request is refused. */
  add(tasks: ReadonlyArray<BatchCallTask>): { readonly offset: number; readonly columns: TaskColumns } | undefined {
    const offset = this.count
    this.count += tasks.length
    if (this.refusal === undefined && this.count > this.maxTasks) {
      this.refusal = new TooManyTasks({
        count: this.count,
        max: this.maxTasks,
        message: `tasks has more than ${this.maxTasks} tasks; a batch holds at most ${this.maxTasks}`
      })
    }
    if (this.refusal !== undefined) return undefined
    const count = tasks.length
    const columns: TaskColumns = {
      toNumber: new Array(count),
      agentId: new Array(count),
      agentVersion: new Array(count),
      agentVersionName: new Array(count),
      agentOverride: new Array(count),
      dynamicVariables: new Array(count),
      metadata: new Array(count),
      customSipHeaders: new Array(count),
      legalGroup: new Array(count)
    }
    for (let i = 0; i < count; i++) {
      const task = tasks[i]!
      const version = task.override_agent_version
      const agentVersion = typeof version === "number" ? version : null
      const agentVersionName = typeof version === "string" ? version : null
      const agentOverride = task.agent_override === undefined ? null : canonicalJson(task.agent_override)
      const dynamicVariables = task.svc_llm_dynamic_variables === undefined
        ? null
        : canonicalJson(task.svc_llm_dynamic_variables)
      const metadata = task.metadata === undefined ? null : canonicalJson(task.metadata)
      const customSipHeaders = task.custom_sip_headers === undefined ? null : canonicalJson(task.custom_sip_headers)
      const record = JSON.stringify([
        task.to_number,
        task.ignore_e164_validation ?? null,
        task.override_agent_id ?? null,
        agentVersion,
        agentVersionName,
        agentOverride,
        dynamicVariables,
        metadata,
        customSipHeaders
      ])
      // JSON.stringify writes U+0000 and unpaired surrogates as \u escapes; without one, nothing needs a closer look
      if (record.includes("\\u")) {
        const field = Object.entries(task).find(([, value]) => hasUnstorable(value))?.[0]
        if (field !== undefined) {
          this.refusal = unstorable(`tasks[${offset + i}].${field}`)
          return undefined
        }
      }
      this.hash.update(record).update("\n")
      columns.toNumber[i] = task.to_number
      columns.agentId[i] = task.override_agent_id ?? null
      columns.agentVersion[i] = agentVersion
      columns.agentVersionName[i] = agentVersionName
      columns.agentOverride[i] = agentOverride
      columns.dynamicVariables[i] = dynamicVariables
      columns.metadata[i] = metadata
      columns.customSipHeaders[i] = customSipHeaders
      // assigned in assignLegal, once the contacts' location fields of the chunk's numbers are known
      columns.legalGroup[i] = null
      if (task.override_agent_id !== undefined) {
        // a name ("latest", "latest_published", a tag) resolves at dial time: the agent must exist in some version
        const wanted = typeof version === "number" ? version : -1
        const pair = `${wanted}:${task.override_agent_id}`
        if (!this.seenAgents.has(pair)) {
          this.seenAgents.add(pair)
          this.agents.push({ agentId: task.override_agent_id, version: wanted, taskIndex: offset + i })
        }
      }
    }
    return { offset, columns }
  }

  /**
   * The chunk's legal groups (issue 15, decisions 0620, 0623): from each number and, when the org has a contact for
   * it with location custom fields (`timezone`, `state`), from those too: a timezone narrows the number's candidate
   * zones (or adds itself to them), an address state adds its zones and its rules.
   */
  assignLegal(columns: TaskColumns, contacts: ReadonlyMap<string, ContactLocation>): void {
    for (let i = 0; i < columns.toNumber.length; i++) {
      const toNumber = columns.toNumber[i]!
      columns.legalGroup[i] = this.legal.assign(toNumber, contacts.get(toNumber))
    }
  }

  /** The request's hash, once every task was added. */
  digest(head: CreateBatchCallHead): Uint8Array {
    const { tasks: _tasks, ...fields } = head as CreateBatchCallHead & { readonly tasks?: unknown }
    return this.hash.update("request\n").update(canonical(fields)).digest()
  }
}

/**
 * A column array as a bind parameter. The driver infers an array's type from its elements and cannot type an
 * array of only NULLs; an empty array is bound untyped instead, and the lockstep `unnest`s of the insert pad it
 * with NULLs to the length of the longest array, which is the same thing.
 */
const column = <A>(values: Array<A | null>): Array<A | null> => values.some((v) => v !== null) ? values : []

/**
 * Versions as one bind type: the driver binds a JS integer as int4 when it fits and int8 otherwise, and refuses an
 * array that mixes the two.
 */
const int8 = (values: Array<number | null>): Array<number | bigint | null> =>
  values.some((v) => v !== null && v > INT4_MAX) ? values.map((v) => v === null ? null : BigInt(v)) : values

/** A random, unguessable batch id: 128 bits. */
const newBatchCallId = (): BatchCallId => BatchCallId.make(`batch_call_${crypto.randomBytes(16).toString("hex")}`)

// ---------------------------------------------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------------------------------------------

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
    orgId: row.org_id,
    apiKeyId: row.api_key_id,
    status: row.status,
    reservedConcurrency: row.reserved_concurrency,
    triggerTimestamp: row.trigger_timestamp ?? undefined,
    nextDispatchAt: row.next_dispatch_at,
    createdTimestamp: row.created_timestamp
  })))

// ---------------------------------------------------------------------------------------------------------------
// Service
// ---------------------------------------------------------------------------------------------------------------

/**
 * Batch calls and their tasks in PostgreSQL.
 *
 * @category services
 */
export class BatchCallsRepo extends Context.Service<BatchCallsRepo, {
  /**
   * Checks and stores a batch with all its tasks; returns the `BatchCall` response. A retry of an earlier create
   * (see the module notes) returns that create's batch and stores nothing.
   */
  readonly create: (
    orgId: string,
    apiKeyId: string,
    request: CreateBatchCallRequest,
    options: CreateOptions
  ) => Effect.Effect<BatchCall, CreateBatchCallError>
  /**
   * `create` of a request read as it arrives, without holding it whole: each chunk of tasks is checked and
   * inserted in the create's transaction as it comes; the checks that need every task or the other fields (the
   * count, the from_number, the override agents, the retry lookup) run once `source` has ended. A failure of
   * `source` rolls everything back and is this effect's failure.
   */
  readonly createFrom: <E>(
    orgId: string,
    apiKeyId: string,
    source: CreateBatchCallSource<E>,
    options: CreateOptions
  ) => Effect.Effect<BatchCall, CreateBatchCallError | E>
  /** The org's batch with this id. */
  readonly get: (orgId: string, batchCallId: string) => Effect.Effect<StoredBatchCall, BatchCallNotFound>
  /** Number of the batch's tasks in each state (every state present, 0 when none). */
  readonly taskCounts: (
    orgId: string,
    batchCallId: string
  ) => Effect.Effect<Record<TaskState, number>, BatchCallNotFound>
  /**
   * Deletes idempotency records past their lifetime (24 h for keys, 10 minutes for keyless retries); returns how
   * many. Housekeeping only: expired records are already ignored by `create`.
   */
  readonly purgeExpired: Effect.Effect<number>
}>()("@svc/store/BatchCallsRepo") {
  /**
   * The repository on the application's `SqlClient` (PostgreSQL).
   *
   * @category layers
   */
  static readonly layer: Layer.Layer<BatchCallsRepo, never, SqlClient.SqlClient> = Layer.effect(
    BatchCallsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const selectBatch = (orgId: string, batchCallId: string) =>
        sql`
          SELECT batch_call_id, org_id, api_key_id, name, from_number, trigger_timestamp::float8 AS trigger_timestamp,
            scheduled_timestamp::float8 AS scheduled_timestamp, reserved_concurrency, call_time_window, status,
            total_task_count, next_dispatch_at::float8 AS next_dispatch_at, created_timestamp::float8 AS created_timestamp
          FROM batch_calls
          WHERE org_id = ${orgId} AND batch_call_id = ${batchCallId}`.pipe(
          Effect.flatMap(decodeRows),
          Effect.flatMap((rows) => rows.length === 0 ? Effect.succeed(undefined) : toStored(rows[0]!))
        )

      /**
       * Claims the request's idempotency record, or finds the batch of the earlier create it repeats. The claim is
       * an insert on a primary key: a concurrent duplicate blocks on it until this transaction ends, then sees the
       * committed batch (or, after a rollback, claims the key itself).
       */
      const claim = Effect.fnUntraced(function*(
        orgId: string,
        apiKeyId: string,
        batchCallId: BatchCallId,
        hash: Uint8Array,
        now: number,
        options: CreateOptions
      ) {
        const key = options.idempotencyKey
        // an empty header is no key
        if (key !== undefined && key !== "") {
          const keyHash = crypto.createHash("sha256").update(key).digest()
          const claimed = yield* sql`
            INSERT INTO batch_call_idempotency_keys AS k
              (org_id, key_hash, idempotency_key, request_hash, batch_call_id, created_timestamp)
            VALUES (${orgId}, ${keyHash}, ${key}, ${hash}, ${batchCallId}, ${now})
            ON CONFLICT (org_id, key_hash) DO UPDATE
              SET idempotency_key = EXCLUDED.idempotency_key, request_hash = EXCLUDED.request_hash,
                batch_call_id = EXCLUDED.batch_call_id, created_timestamp = EXCLUDED.created_timestamp
              WHERE k.created_timestamp <= ${now - IDEMPOTENCY_KEY_TTL_MS}
            RETURNING 1 AS claimed`
          if (claimed.length > 0) return undefined
          // ON CONFLICT locked the row even though it did not update it, so it is still there
          const [seen] = yield* sql<{ batch_call_id: string; same: boolean }>`
            SELECT batch_call_id, request_hash = ${hash} AS same
            FROM batch_call_idempotency_keys WHERE org_id = ${orgId} AND key_hash = ${keyHash}`
          if (seen === undefined) return undefined
          if (!seen.same) {
            return yield* new IdempotencyKeyReused({
              idempotencyKey: key,
              message: "the Idempotency-Key was already used with a different request body; use a new key"
            })
          }
          return seen.batch_call_id
        }
        const isRetry = (options.retryCount ?? 0) > 0
        // A first attempt always records itself (it is the batch a later retry of it means); a retry takes over
        // the record only when the previous attempt is older than the retry window.
        const claimed = yield* sql`
          INSERT INTO batch_call_recent_requests AS r
            (api_key_id, request_hash, org_id, batch_call_id, seen_timestamp)
          VALUES (${apiKeyId}, ${hash}, ${orgId}, ${batchCallId}, ${now})
          ON CONFLICT (api_key_id, request_hash) DO UPDATE
            SET org_id = EXCLUDED.org_id, batch_call_id = EXCLUDED.batch_call_id,
              seen_timestamp = EXCLUDED.seen_timestamp
            WHERE ${!isRetry} OR r.seen_timestamp <= ${now - RETRY_WINDOW_MS}
          RETURNING 1 AS claimed`
        if (claimed.length > 0) return undefined
        // a repeat: the window runs from this attempt now, so the client's next retry, up to a full timeout
        // later, still finds the batch (the row is locked by the ON CONFLICT above)
        const [seen] = yield* sql<{ batch_call_id: string }>`
          UPDATE batch_call_recent_requests SET seen_timestamp = ${now}
          WHERE api_key_id = ${apiKeyId} AND request_hash = ${hash} AND org_id = ${orgId}
          RETURNING batch_call_id`
        return seen?.batch_call_id
      })

      /**
       * Moves a keyless retry's window to this attempt, after the attempt's transaction was rolled back (the
       * claim's own update went with it), so that the client's next retry, up to a full timeout later, still
       * finds the batch.
       */
      const touchRecent = (orgId: string, apiKeyId: string, hash: Uint8Array, now: number) =>
        Effect.orDie(sql`
          UPDATE batch_call_recent_requests SET seen_timestamp = GREATEST(seen_timestamp, ${now})
          WHERE api_key_id = ${apiKeyId} AND request_hash = ${hash} AND org_id = ${orgId}`)

      const checkFromNumber = Effect.fnUntraced(function*(orgId: string, fromNumber: string) {
        const owned = yield* sql`
          SELECT 1 AS owned FROM phone_numbers WHERE org_id = ${orgId} AND phone_number = ${fromNumber}`
        if (owned.length === 0) {
          return yield* new FromNumberNotOwned({
            fromNumber,
            message: `from_number ${fromNumber} is not a phone number of this account`
          })
        }
      })

      const checkAgents = Effect.fnUntraced(function*(orgId: string, agents: AgentUses) {
        if (agents.length === 0) return
        // agents.version is an int4: a larger version cannot exist, and would not bind as an int4 array element
        const queried = agents.filter((a) => a.version <= INT4_MAX)
        const missing = new Set<number>(agents.filter((a) => a.version > INT4_MAX).map((a) => a.taskIndex))
        if (queried.length > 0) {
          const rows = yield* sql<{ task_index: number }>`
            SELECT r.task_index
            FROM unnest(
              ${queried.map((a) => a.agentId)}::text[],
              ${queried.map((a) => a.version)}::int4[],
              ${queried.map((a) => a.taskIndex)}::int4[]
            ) AS r(agent_id, version, task_index)
            WHERE NOT EXISTS (
              SELECT 1 FROM agents a
              WHERE a.org_id = ${orgId} AND a.agent_id = r.agent_id AND (r.version < 0 OR a.version = r.version)
            )`
          for (const row of rows) missing.add(row.task_index)
        }
        if (missing.size === 0) return
        const first = agents.find((a) => missing.has(a.taskIndex))!
        const versioned = first.version >= 0
        return yield* new AgentNotFound({
          agentId: first.agentId,
          ...(versioned ? { version: first.version } : {}),
          taskIndex: first.taskIndex,
          message: `tasks[${first.taskIndex}].override_agent_id ${JSON.stringify(first.agentId)}` +
            (versioned ? ` version ${first.version}` : "") + " is not an agent of this account"
        })
      })

      const insertBatch = Effect.fnUntraced(function*(
        orgId: string,
        apiKeyId: string,
        head: CreateBatchCallHead,
        batch: BatchCall,
        now: number
      ) {
        const window = batch.call_time_window === undefined ? null : JSON.stringify(batch.call_time_window)
        // the retry policy with its spacing filled in (decision 0625): what the recorder reads is complete
        const retry = head.retry_policy === undefined ? null : JSON.stringify({
          max_retries: head.retry_policy.max_retries,
          retry_on: [...new Set(head.retry_policy.retry_on)],
          min_spacing_ms: head.retry_policy.min_spacing_ms ?? defaultSpacingMs
        })
        yield* sql`
          WITH b AS (
            INSERT INTO batch_calls (batch_call_id, org_id, api_key_id, name, from_number, trigger_timestamp,
              scheduled_timestamp, reserved_concurrency, call_time_window, total_task_count, next_dispatch_at,
              created_timestamp, retry_policy)
            VALUES (${batch.batch_call_id}, ${orgId}, ${apiKeyId}, ${batch.name}, ${batch.from_number},
              ${head.trigger_timestamp ?? null}::bigint, ${batch.scheduled_timestamp},
              ${head.reserved_concurrency ?? 0}, ${window}::jsonb, ${batch.total_task_count},
              ${batch.scheduled_timestamp}, ${now}, ${retry}::jsonb)
            RETURNING batch_call_id
          )
          SELECT pg_notify(${CREATED_CHANNEL}, batch_call_id) FROM b`
      })

      // One statement per chunk of tasks: the arrays travel in one Bind message, in binary. The set-returning
      // functions sit in the select list, where they advance in lockstep and stream (in FROM, unnest would first
      // materialize every row in a tuplestore, spilling to disk: measured 10-30% slower server-side); unnest pads
      // a shorter (empty) array with NULLs. The tasks go in before their batch row (no foreign key: decision 0302),
      // inside the create's transaction, so nothing of a refused or failed create is ever visible.
      const insertTasks = (orgId: string, batchCallId: string, offset: number, columns: TaskColumns) => {
        const versions = column(int8(columns.agentVersion))
        return sql`
          INSERT INTO batch_call_tasks (org_id, batch_call_id, task_index, to_number, override_agent_id,
            override_agent_version, override_agent_version_name, agent_override, dynamic_variables, metadata,
            custom_sip_headers, legal_group)
          SELECT ${orgId}, ${batchCallId}, t.task_index, t.to_number, t.agent_id, t.agent_version,
            t.agent_version_name, t.agent_override::jsonb, t.dynamic_variables::jsonb, t.metadata::jsonb,
            t.custom_sip_headers::jsonb, t.legal_group
          FROM (
            SELECT generate_series(${offset}::int4, ${offset + columns.toNumber.length - 1}::int4) AS task_index,
              unnest(${columns.toNumber}::text[]) AS to_number,
              unnest(${column(columns.agentId)}::text[]) AS agent_id,
              unnest(${versions}::int8[]) AS agent_version,
              unnest(${column(columns.agentVersionName)}::text[]) AS agent_version_name,
              unnest(${column(columns.agentOverride)}::text[]) AS agent_override,
              unnest(${column(columns.dynamicVariables)}::text[]) AS dynamic_variables,
              unnest(${column(columns.metadata)}::text[]) AS metadata,
              unnest(${column(columns.customSipHeaders)}::text[]) AS custom_sip_headers,
              unnest(${column(columns.legalGroup)}::int4[]) AS legal_group
          ) AS t`
      }

      // The location custom fields of the org's contacts among these numbers (NANP ones only: other numbers have no
      // legal hours), through contacts_org_phone_key; contacts without either field are not returned.
      const contactLocations = (orgId: string, numbers: ReadonlyArray<string>) => {
        const nanp = numbers.filter((n) => n.charCodeAt(0) === 43 && n.charCodeAt(1) === 49)
        return nanp.length === 0
          ? Effect.succeed(new Map<string, ContactLocation>())
          : sql<{ phone_number: string; timezone: string | null; state: string | null }>`
            SELECT phone_number, custom_fields->>'timezone' AS timezone, custom_fields->>'state' AS state
            FROM contacts
            WHERE org_id = ${orgId} AND phone_number = ANY(${nanp}::text[])
              AND (custom_fields ? 'timezone' OR custom_fields ? 'state')`.pipe(
            Effect.map((rows) => {
              const found = new Map<string, ContactLocation>()
              for (const row of rows) {
                found.set(row.phone_number, {
                  ...(row.timezone === null ? {} : { timezone: row.timezone }),
                  ...(row.state === null ? {} : { state: row.state })
                })
              }
              return found
            })
          )
      }

      // The batch's distinct legal groups, once (a handful: one per zone set and rule set among its numbers); the
      // dispatcher reads them to decide which groups may be claimed now (decision 0623). Zones and rule ids travel
      // as one text per group ("&" and "," cannot occur in an IANA zone name or a jurisdiction code).
      const insertLegalGroups = (batchCallId: string, groups: ReadonlyArray<LegalGroup>) =>
        groups.length === 0 ? Effect.void : Effect.asVoid(sql`
          INSERT INTO batch_call_legal_groups (batch_call_id, legal_group, zones, rule_ids)
          SELECT ${batchCallId}, g.legal_group, string_to_array(g.zones, '&'), string_to_array(g.rule_ids, ',')
          FROM unnest(${groups.map((g) => g.group)}::int4[], ${groups.map((g) => g.zones.join("&"))}::text[],
            ${groups.map((g) => g.ruleIds.join(","))}::text[]) AS g(legal_group, zones, rule_ids)`)

      const createFrom = <E>(
        orgId: string,
        apiKeyId: string,
        source: CreateBatchCallSource<E>,
        options: CreateOptions
      ): Effect.Effect<BatchCall, CreateBatchCallError | E> =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const batchCallId = newBatchCallId()
          const tasks = new TaskPreparer(options.maxTasks)
          return yield* sql.withTransaction(Effect.gen(function*() {
            // a refused request is still read to its end: a later part of it may be invalid, which the caller
            // reports first (the source fails), as it did when the whole body was decoded before anything else
            yield* Stream.runForEach(Stream.mapError(source.tasks, (error) => new SourceFailed({ error })), (chunk) => {
              const prepared = tasks.add(chunk)
              return prepared === undefined ? Effect.void : Effect.gen(function*() {
                tasks.assignLegal(prepared.columns, yield* contactLocations(orgId, prepared.columns.toNumber))
                yield* insertTasks(orgId, batchCallId, prepared.offset, prepared.columns)
              })
            })
            const head = yield* Effect.mapError(source.head, (error) => new SourceFailed({ error }))
            // refusals in the order the whole request was checked before it was streamed
            if (tasks.count === 0) return yield* new NoTasks({ message: "tasks must contain at least one task" })
            if (tasks.count > options.maxTasks) {
              return yield* new TooManyTasks({
                count: tasks.count,
                max: options.maxTasks,
                message: `tasks has ${tasks.count} tasks; a batch holds at most ${options.maxTasks}`
              })
            }
            const headField = findUnstorableHead(head)
            if (headField !== undefined) return yield* unstorable(headField)
            if (tasks.refusal instanceof UnstorableText) return yield* tasks.refusal
            const batch = new BatchCall({
              batch_call_id: batchCallId,
              name: head.name ?? "",
              from_number: head.from_number,
              scheduled_timestamp: head.trigger_timestamp ?? now,
              total_task_count: tasks.count,
              ...(head.call_time_window === undefined ? {} : { call_time_window: canonicalize(head.call_time_window) })
            })
            const hash = tasks.digest(head)
            const earlier = yield* claim(orgId, apiKeyId, batchCallId, hash, now, options)
            if (earlier !== undefined) {
              const stored = yield* selectBatch(orgId, earlier)
              // the record's foreign key cascades from the batch, so its batch exists
              if (stored !== undefined) {
                const keyless = options.idempotencyKey === undefined || options.idempotencyKey === ""
                return yield* new EarlierBatch({ batch: stored.batch, keylessHash: keyless ? hash : undefined, now })
              }
            }
            yield* checkFromNumber(orgId, head.from_number)
            yield* checkAgents(orgId, tasks.agents)
            yield* insertLegalGroups(batchCallId, tasks.legal.groups)
            yield* insertBatch(orgId, apiKeyId, head, batch, now)
            return batch
          }))
        }).pipe(
          // database and row-decoding failures are not the caller's to handle (house style §5.3)
          Effect.catchTags({ SqlError: Effect.die, SchemaError: Effect.die }),
          Effect.catchTags({
            "BatchCallsRepo/EarlierBatch": (earlier: EarlierBatch) =>
              earlier.keylessHash === undefined
                ? Effect.succeed(earlier.batch)
                : Effect.as(touchRecent(orgId, apiKeyId, earlier.keylessHash, earlier.now), earlier.batch),
            "BatchCallsRepo/SourceFailed": (failed: SourceFailed) => Effect.fail(failed.error as E)
          }),
          Effect.withSpan("BatchCallsRepo.createFrom")
        )

      const create = (orgId: string, apiKeyId: string, request: CreateBatchCallRequest, options: CreateOptions) => {
        const { tasks, ...head } = request
        return createFrom(orgId, apiKeyId, {
          tasks: Stream.fromIterable(chunksOf(tasks, CHUNK_TASKS)),
          head: Effect.succeed(head)
        }, options)
      }

      const get = Effect.fn("BatchCallsRepo.get")(
        function*(orgId: string, batchCallId: string) {
          const stored = yield* selectBatch(orgId, batchCallId)
          if (stored === undefined) {
            return yield* new BatchCallNotFound({ batchCallId, message: `batch call ${batchCallId} not found` })
          }
          return stored
        },
        Effect.catchTags({ SqlError: Effect.die, SchemaError: Effect.die })
      )

      const taskCounts = Effect.fn("BatchCallsRepo.taskCounts")(
        function*(orgId: string, batchCallId: string) {
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

      const purgeExpired = Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const keys = yield* sql`
          DELETE FROM batch_call_idempotency_keys WHERE created_timestamp <= ${now - IDEMPOTENCY_KEY_TTL_MS}
          RETURNING 1 AS deleted`
        const recent = yield* sql`
          DELETE FROM batch_call_recent_requests WHERE seen_timestamp <= ${now - RETRY_WINDOW_MS}
          RETURNING 1 AS deleted`
        return keys.length + recent.length
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("BatchCallsRepo.purgeExpired"))

      return BatchCallsRepo.of({ create, createFrom, get, taskCounts, purgeExpired })
    })
  )
}
