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
 *
 * One concept a file, composed here into the service: CreateBatchCall (checks and inserts), TaskPreparer (task
 * columns and the request hash), CanonicalJson, Idempotency (retries and the purge), BatchCallReads, and the
 * errors and models the callers use (BatchCallErrors, BatchCallModels).
 */
import type { BatchCall, CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import type { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { BatchCallNotFound, CreateBatchCallError } from "./BatchCallErrors.ts"
import type { CreateBatchCallSource, CreateOptions, StoredBatchCall, TaskState } from "./BatchCallModels.ts"
import * as BatchCallReads from "./BatchCallReads.ts"
import * as CreateBatchCall from "./CreateBatchCall.ts"
import * as Idempotency from "./Idempotency.ts"

// the errors, models and constants callers have always imported from here
export * from "./BatchCallErrors.ts"
export * from "./BatchCallModels.ts"
export { IDEMPOTENCY_KEY_TTL_MS, RETRY_WINDOW_MS } from "./Idempotency.ts"

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
    orgId: OrgId,
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
    orgId: OrgId,
    apiKeyId: string,
    source: CreateBatchCallSource<E>,
    options: CreateOptions
  ) => Effect.Effect<BatchCall, CreateBatchCallError | E>
  /** The org's batch with this id. */
  readonly get: (orgId: OrgId, batchCallId: BatchCallId) => Effect.Effect<StoredBatchCall, BatchCallNotFound>
  /** Number of the batch's tasks in each state (every state present, 0 when none). */
  readonly taskCounts: (
    orgId: OrgId,
    batchCallId: BatchCallId
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
      const reads = BatchCallReads.make(sql)
      const idempotency = Idempotency.make(sql)
      const { create, createFrom } = CreateBatchCall.make(sql, idempotency, reads)

      return BatchCallsRepo.of({
        create,
        createFrom,
        get: reads.get,
        taskCounts: reads.taskCounts,
        purgeExpired: idempotency.purgeExpired
      })
    })
  )
}
