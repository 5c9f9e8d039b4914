/**
 * Batch calls and their tasks as the store keeps them (migrations/0004_batch_calls.ts, decision 0302), and a
 * create-batch-call request as it arrives.
 */
import type { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import type { BatchCall, CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import type { BatchCallTask } from "@svc/domain/models/BatchCallTask.ts"
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { type Effect, Schema, type Stream } from "effect"

/**
 * Lifecycle of a batch: `scheduled` until the scheduler starts it, `in_progress` while tasks are left,
 * `completed` when none is, `cancelled` when stopped; `paused` (from `scheduled` or `in_progress`, back to it on
 * resume: decision 0549) starts no call.
 *
 * @category models
 */
export const BatchCallStatus = Schema.Literals(["scheduled", "in_progress", "paused", "completed", "cancelled"])
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
  /** Branded as the row is read (BatchCallReads). */
  readonly orgId: OrgId
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
  /**
   * A new grouper of this create's tasks into legal groups (decision 0623), made once per create: the caller's
   * compliance decision (the domain's `LegalGrouper`), which the create feeds each task's number and its contact's
   * location fields as it reads them in its transaction (dependency rule 3).
   */
  readonly legalGrouper: () => TaskGrouper
}

/**
 * What the create asks of a legal grouper: a task's group (null: unconstrained) and the groups assigned so far.
 *
 * @category models
 */
export type TaskGrouper = Pick<LegalGrouper, "assign" | "groups">

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

/**
 * Channel on which a committed create is announced (payload: the batch call id), for schedulers that LISTEN.
 *
 * @category models
 */
export const CREATED_CHANNEL = "svc_batch_call_created"
