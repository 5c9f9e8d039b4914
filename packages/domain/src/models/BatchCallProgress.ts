/**
 * A batch call's progress (decision 0532): what `GET /get-batch-call/{batch_call_id}` and
 * `POST /cancel-batch-call/{batch_call_id}` return. Both are svc extensions: the vendor has only create-batch-call,
 * so this shape is svc's own, in the vendor's naming style (snake_case, epoch-millisecond `*_timestamp` fields,
 * `null` for "none").
 */
import { Schema } from "effect"
import { E164 } from "./E164.ts"
import { BatchCallId } from "./Ids.ts"
import { EpochMillis, NonNegativeInt } from "./Primitives.ts"

/**
 * Tasks of the batch per state: `pending` (not dialled yet), `dialling` (a call in progress), `unknown` (a call
 * whose outcome the scheduler is confirming with the carrier), `completed` and `failed` (a call was placed and
 * recorded), `skipped` (never dialled: a `do_not_call` contact), `cancelled` (never dialled: the batch was
 * cancelled).
 *
 * @category models
 */
export const BatchTaskCounts = Schema.Struct({
  pending: NonNegativeInt,
  dialling: NonNegativeInt,
  unknown: NonNegativeInt,
  completed: NonNegativeInt,
  failed: NonNegativeInt,
  skipped: NonNegativeInt,
  cancelled: NonNegativeInt
})

/**
 * The batch's pending tasks under legal hours (decisions 0623, 0628): how many each
 * rule holds back now and when each zone set (the candidate time zones of a group of numbers) opens next, under the
 * org's calling policy. Only NANP numbers are constrained; the others are `unconstrained_tasks`.
 *
 * @category models
 */
export const BatchLegalHours = Schema.Struct({
  policy_version: NonNegativeInt.annotate({
    description: "Version of the org's calling-policy override the answer used (0: the default policy)."
  }),
  unconstrained_tasks: NonNegativeInt.annotate({ description: "Pending tasks without legal-hours constraints." }),
  dialable_now_tasks: NonNegativeInt.annotate({
    description:
      "Pending constrained tasks legal now in every zone of their number and inside the window, not waiting on an attempt cap or a retry's spacing."
  }),
  held_back: Schema.Array(Schema.Struct({
    rule: Schema.String.annotate({
      description:
        "The binding rule: a legal-hours rule (e.g. `FL 08:00-20:00`), `call_window`, `attempt_cap` (the number's attempts per 24 h) or `retry_spacing` (a retry not yet due)."
    }),
    tasks: NonNegativeInt
  })).annotate({ description: "Pending tasks held back per binding rule, largest first." }),
  never_within_horizon_tasks: NonNegativeInt.annotate({
    description: "Pending tasks with no legal instant inside the window within 14 days."
  }),
  zone_sets: Schema.Array(Schema.Struct({
    zones: Schema.Array(Schema.String).annotate({ description: "IANA time zones the numbers may be in." }),
    rules: Schema.Array(Schema.String).annotate({ description: "Jurisdictions whose rules apply (US first)." }),
    pending_tasks: NonNegativeInt,
    blocked_by: Schema.NullOr(Schema.String).annotate({ description: "The binding rule now; null when dialable." }),
    state_reason: Schema.NullOr(Schema.String).annotate({
      description: "The `state_reason` its pending tasks carry while legal hours block them."
    }),
    next_opening_timestamp: Schema.NullOr(EpochMillis).annotate({
      description: "When its tasks may next be dialled (now when dialable); null when not within 14 days."
    })
  }))
}).annotate({ description: "Legal hours of the batch's pending tasks (svc extension)." })

/**
 * A batch call's progress.
 *
 * @category models
 */
export class BatchCallProgress extends Schema.Class<BatchCallProgress>("BatchCallProgress")({
  batch_call_id: BatchCallId,
  name: Schema.String,
  from_number: E164,
  status: Schema.Literals(["scheduled", "in_progress", "paused", "completed", "cancelled"]).annotate({
    description: "scheduled until its first call, in_progress while tasks are left, then completed or cancelled; " +
      "paused (svc extension pause-batch-call) starts no call until resumed."
  }),
  total_task_count: NonNegativeInt,
  tasks: BatchTaskCounts,
  calls_placed: NonNegativeInt.annotate({
    // with a retry_policy a task may have several calls; only its last is counted here (decision 0625)
    description: "Tasks whose (last) call was placed and recorded: completed or failed. Earlier calls of a task " +
      "its batch retried are not counted; list-calls with the batch's id has every call."
  }),
  calls_in_flight: NonNegativeInt.annotate({ description: "Calls in progress (tasks dialling or unknown)." }),
  max_concurrency: Schema.optionalKey(NonNegativeInt.annotate({
    description: "svc extension: the batch's own cap on its calls in progress, when create-batch-call gave one."
  })),
  scheduled_timestamp: EpochMillis.annotate({ description: "trigger_timestamp, else when the batch was created." }),
  window_open_now: Schema.Boolean.annotate({ description: "Whether its call_time_window is open now." }),
  next_window_opening_timestamp: Schema.NullOr(EpochMillis).annotate({
    description: "When the batch may next dial (now while its window is open and its trigger time has passed); " +
      "null once it is completed or cancelled."
  }),
  estimated_completion_timestamp: Schema.NullOr(EpochMillis).annotate({
    description: "When its last pending task would end, assuming 120 s calls, the org's free lines and the " +
      "window; null once nothing is pending or when no line is free."
  }),
  completed_timestamp: Schema.NullOr(EpochMillis).annotate({ description: "When it completed; null otherwise." }),
  cancelled_timestamp: Schema.NullOr(EpochMillis).annotate({ description: "When it was cancelled; null otherwise." }),
  created_timestamp: EpochMillis,
  legal_hours: BatchLegalHours
}, { description: "Progress of a batch call (svc extension)." }) {}
