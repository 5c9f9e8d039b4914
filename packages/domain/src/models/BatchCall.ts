/**
 * A batch call: the `POST /create-batch-call` request and the resource it returns (spec, BatchCall and
 * "POST /create-batch-call").
 *
 * Request rules: `from_number` is required and E.164; `tasks` has at least one task (design, "empty
 * `tasks`": 400; the per-batch maximum is configuration, enforced by the handler); `trigger_timestamp` is
 * integer ms; `reserved_concurrency` is an integer from 0 to 2^31 - 1; `call_time_window` follows the call-window rules
 * of `CallWindow.ts`.
 *
 * Response: `name` is the given name, else `""` (design, "`name`"); `scheduled_timestamp` is ms, the
 * `trigger_timestamp` when given, else the creation time (design, "`scheduled_timestamp`");
 * `call_time_window` is present only when one was given, in canonical form (`CanonicalCallTimeWindow`:
 * time zone filled in, windows merged and sorted, days listed in week order).
 */
import { Schema } from "effect"
import { CallTimeWindow, CanonicalCallTimeWindow } from "../CallWindow.ts"
import { BatchCallTask } from "./BatchCallTask.ts"
import { E164 } from "./E164.ts"
import { BatchCallId } from "./Ids.ts"
import { EpochMillis, NonNegativeInt } from "./Primitives.ts"
import { RetryPolicy } from "./RetryPolicy.ts"

/**
 * The largest `reserved_concurrency`: any value above an org's concurrency limit already keeps every call of
 * the batch waiting.
 *
 * @category models
 */
export const maxReservedConcurrency = 2_147_483_647

/**
 * The body of `POST /create-batch-call`.
 *
 * @category models
 */
export class CreateBatchCallRequest extends Schema.Class<CreateBatchCallRequest>("CreateBatchCallRequest")({
  from_number: E164.annotate({ description: "A number the account owns (purchased or imported), in E.164 format." }),
  tasks: Schema.Array(BatchCallTask).check(
    Schema.isMinLength(1, { expected: "a list of at least one task" })
  ).annotate({ description: "One outbound call per task." }),
  name: Schema.optionalKey(Schema.String.annotate({ description: "Label for the caller's own reference." })),
  trigger_timestamp: Schema.optionalKey(EpochMillis.annotate({
    description: "When to send the batch, ms since the Unix epoch; omitted means now."
  })),
  reserved_concurrency: Schema.optionalKey(
    // decision 0105: a bound a PostgreSQL integer holds (a larger value was a failed insert, a 500)
    Schema.Int.check(
      Schema.isBetween({ minimum: 0, maximum: maxReservedConcurrency }, {
        expected: `an integer from 0 to ${maxReservedConcurrency}`
      })
    ).annotate({ description: "Concurrency kept free for calls not triggered by the batch, such as inbound ones." })
  ),
  call_time_window: Schema.optionalKey(CallTimeWindow),
  // svc extension (decision 0625)
  retry_policy: Schema.optionalKey(RetryPolicy),
  // svc extension (decision 0549): a bound a PostgreSQL integer holds, as reserved_concurrency's
  max_concurrency: Schema.optionalKey(
    Schema.Int.check(
      Schema.isBetween({ minimum: 1, maximum: maxReservedConcurrency }, {
        expected: `an integer from 1 to ${maxReservedConcurrency}`
      })
    ).annotate({
      description: "svc extension: the most calls of this batch in progress at once, across all workers, within " +
        "the org's concurrency limit and the batch's reserved_concurrency; omitted means no cap of its own."
    })
  )
}, { description: "Creates a batch of outbound calls from one owned number." }) {}

/**
 * A batch call as `POST /create-batch-call` returns it.
 *
 * @category models
 */
export class BatchCall extends Schema.Class<BatchCall>("BatchCall")({
  batch_call_id: BatchCallId,
  name: Schema.String.annotate({ description: "The name given at creation, or \"\"." }),
  from_number: E164,
  scheduled_timestamp: EpochMillis.annotate({
    description: "When the batch is sent, ms since the Unix epoch: trigger_timestamp, else the creation time."
  }),
  total_task_count: NonNegativeInt.annotate({ description: "Number of tasks in the batch." }),
  call_time_window: Schema.optionalKey(CanonicalCallTimeWindow)
}, { description: "A batch of outbound calls." }) {}
