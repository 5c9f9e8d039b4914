/**
 * `POST /list-batch-calls` and `POST /list-batch-call-tasks/{batch_call_id}` (decision 0548; svc extensions, the
 * vendor has no batch reads at all: vendor-calls-facts 5). Their requests follow the vendor's list conventions as
 * list-calls has them (vendor-calls-facts 1.3): `limit`, `pagination_key`, `sort_order` `ascending`/`descending`,
 * and `filter_criteria` members in the vendor's filter shapes (`{type: "enum", value: [...]}`,
 * `{type: "number", op, value}`, `{type: "range", value: [lo, hi]}`). A `null` or absent body is `{}`; an unknown
 * filter member is a 400 naming the members, as in list-calls. Choices: docs/decisions/0548-batch-call-lists.md.
 *
 * An item of list-batch-calls is get-batch-call's answer ({@link BatchCallProgress}); an item of
 * list-batch-call-tasks is {@link BatchCallTaskItem}.
 */
import { Effect, Schema, SchemaTransformation } from "effect"
import { taskStates } from "../dispatch/TaskState.ts"
import { BatchCallProgress } from "./BatchCallProgress.ts"
import { EnumFilter, NumberFilter, RangeFilter } from "./FilterCondition.ts"
import { nullMeansEmpty, onlyMembers, optionalPaginationKey } from "./ListRequest.ts"
import { EpochMillis, NonEmptyString, NonNegativeInt, PaginationKeyText } from "./Primitives.ts"

/**
 * The statuses a batch can have: get-batch-call's, read from its schema so that a status added there is
 * filterable here.
 *
 * @category models
 */
export const batchCallStatuses: ReadonlyArray<string> = BatchCallProgress.fields.status.literals

/** An enum condition whose values must all be one of `allowed` (a misspelt status would match nothing, silently). */
const enumOf = (allowed: ReadonlyArray<string>, name: string) =>
  EnumFilter.check(Schema.makeFilter((f: typeof EnumFilter.Type) => {
    const bad = f.value.find((v) => !allowed.includes(v))
    return bad === undefined
      ? undefined
      : `${JSON.stringify(bad)} is not a ${name}; expected one of ${allowed.join(", ")}`
  }))

// Keys that are not members: the rest signature selects only these, so an unknown member reaches the check below and
// is refused naming the members (as list-calls' filter_criteria does)
const unknownMemberOf = (members: ReadonlyArray<string>) =>
  Schema.String.check(Schema.makeFilter((key: string) => !members.includes(key)))
const membersMessage = (members: ReadonlyArray<string>) =>
  `is not a filter member; the members are ${members.join(", ")}`

const Limit = (maximum: number, fallback: number) =>
  Schema.Int.check(Schema.isBetween({ minimum: 1, maximum }, { expected: `an integer from 1 to ${maximum}` })).annotate(
    { description: `Maximum items returned, 1 to ${maximum}; default ${fallback}.` }
  ).pipe(Schema.withDecodingDefaultKey(Effect.succeed(fallback)))

const SortOrder = (by: string, fallback: "ascending" | "descending") =>
  Schema.Literals(["ascending", "descending"]).annotate({ description: `By ${by}; default ${fallback}.` }).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed(fallback))
  )

const PaginationKey = optionalPaginationKey(
  Schema.String.annotate({ description: "The pagination_key of the previous response, unchanged." }),
  PaginationKeyText
)

/**
 * Page sizes (decision 0548): a batch item is a whole get-batch-call answer, computed at the request (its task
 * counts and legal hours read per batch), so its page is held to 100; a task item is one indexed row, so its page
 * takes list-calls' 1,000.
 *
 * @category models
 */
export const batchCallsPageLimits = { default: 20, maximum: 100 } as const
/** @category models */
export const batchCallTasksPageLimits = { default: 50, maximum: 1000 } as const

/**
 * `filter_criteria` of list-batch-calls: `status` (enum over the batch statuses) and `created_timestamp` (epoch
 * ms, number or range, as list-calls' `start_timestamp`), combined with AND.
 *
 * @category models
 */
const batchCallFilterFields = {
  status: Schema.optionalKey(enumOf(batchCallStatuses, "batch call status")),
  created_timestamp: Schema.optionalKey(
    Schema.Union([NumberFilter, RangeFilter]).annotate({
      description: "When the batch was created, epoch ms."
    })
  )
}
const batchCallFilterMembers = Object.keys(batchCallFilterFields)
const BatchCallFilterFields = Schema.Struct(batchCallFilterFields)

export const BatchCallFilterCriteria = Schema.StructWithRest(BatchCallFilterFields, [
  Schema.Record(unknownMemberOf(batchCallFilterMembers), Schema.Unknown)
]).check(onlyMembers(batchCallFilterMembers, membersMessage(batchCallFilterMembers))).pipe(
  Schema.decodeTo(Schema.toType(BatchCallFilterFields), SchemaTransformation.passthroughSubtype()),
  Schema.annotate({
    identifier: "BatchCallFilterCriteria",
    description: "Conditions on batch calls, combined with AND."
  })
)
/** @category models */
export type BatchCallFilterCriteria = typeof BatchCallFilterCriteria.Type

/**
 * A decoded list-batch-calls request, defaults applied.
 *
 * @category models
 */
export class ListBatchCallsRequest extends Schema.Class<ListBatchCallsRequest>("ListBatchCallsRequest")({
  limit: Limit(batchCallsPageLimits.maximum, batchCallsPageLimits.default),
  sort_order: SortOrder("created_timestamp (then batch_call_id)", "descending"),
  pagination_key: PaginationKey,
  filter_criteria: Schema.optionalKey(BatchCallFilterCriteria)
}, { description: "Lists the org's batch calls, newest first by default, cursor paged." }) {}

/**
 * The list-batch-calls body as it arrives: a request object, or `null`/nothing, which mean `{}`.
 *
 * @category schemas
 */
export const ListBatchCallsBody = nullMeansEmpty(ListBatchCallsRequest)

/**
 * One page of batch calls, each as get-batch-call answers it.
 *
 * @category models
 */
export const ListBatchCallsResponse = Schema.Struct({
  has_more: Schema.Boolean,
  items: Schema.Array(BatchCallProgress),
  pagination_key: Schema.optionalKey(Schema.String.annotate({
    description: "Key for the next page; send it back as pagination_key."
  }))
}).annotate({ identifier: "ListBatchCallsResponse" })
/** @category models */
export type ListBatchCallsResponse = typeof ListBatchCallsResponse.Type

/**
 * `filter_criteria` of list-batch-call-tasks: `state` (enum over the task states get-batch-call counts).
 *
 * @category models
 */
const taskFilterFields = { state: Schema.optionalKey(enumOf(taskStates, "task state")) }
const taskFilterMembers = Object.keys(taskFilterFields)
const TaskFilterFields = Schema.Struct(taskFilterFields)

export const BatchCallTaskFilterCriteria = Schema.StructWithRest(TaskFilterFields, [
  Schema.Record(unknownMemberOf(taskFilterMembers), Schema.Unknown)
]).check(onlyMembers(taskFilterMembers, membersMessage(taskFilterMembers))).pipe(
  Schema.decodeTo(Schema.toType(TaskFilterFields), SchemaTransformation.passthroughSubtype()),
  Schema.annotate({ identifier: "BatchCallTaskFilterCriteria", description: "Conditions on a batch's tasks." })
)
/** @category models */
export type BatchCallTaskFilterCriteria = typeof BatchCallTaskFilterCriteria.Type

/**
 * A decoded list-batch-call-tasks request, defaults applied.
 *
 * @category models
 */
export class ListBatchCallTasksRequest extends Schema.Class<ListBatchCallTasksRequest>("ListBatchCallTasksRequest")({
  limit: Limit(batchCallTasksPageLimits.maximum, batchCallTasksPageLimits.default),
  sort_order: SortOrder("the task's position in create-batch-call's tasks", "ascending"),
  pagination_key: PaginationKey,
  filter_criteria: Schema.optionalKey(BatchCallTaskFilterCriteria)
}, { description: "Lists a batch's tasks in the order they were created, cursor paged." }) {}

/**
 * The list-batch-call-tasks body as it arrives: a request object, or `null`/nothing, which mean `{}`.
 *
 * @category schemas
 */
export const ListBatchCallTasksBody = nullMeansEmpty(ListBatchCallTasksRequest)

/**
 * One task of a batch call and where it stands.
 *
 * @category models
 */
export const BatchCallTaskItem = Schema.Struct({
  task_id: NonEmptyString.annotate({ description: "The task's id (its first call's idempotency key)." }),
  to_number: Schema.String,
  state: Schema.Literals(taskStates),
  state_reason: Schema.NullOr(Schema.String).annotate({
    description: "Why it waits or how it ended (docs/api.md, state_reason); null when there is nothing to say."
  }),
  attempts: NonNegativeInt.annotate({ description: "Calls started for the task, its retries included." }),
  last_call_id: Schema.NullOr(Schema.String).annotate({
    description: "Its latest call (GET /v2/get-call/{call_id}); null when it was never dialled."
  }),
  last_outcome: Schema.NullOr(Schema.String).annotate({
    description: "The latest call's disconnection_reason once it has ended; null while it runs or when never dialled."
  }),
  next_attempt_timestamp: Schema.NullOr(EpochMillis).annotate({
    description: "A pending task of a running batch: the earliest instant svc may dial it (now, or later for its " +
      "batch's trigger time or window, a retry's spacing or an attempt cap; legal hours are in state_reason); " +
      "null in every other case."
  }),
  metadata: Schema.optionalKey(Schema.Json)
}).annotate({ identifier: "BatchCallTaskItem" })
/** @category models */
export type BatchCallTaskItem = typeof BatchCallTaskItem.Type

/**
 * One page of a batch's tasks.
 *
 * @category models
 */
export const ListBatchCallTasksResponse = Schema.Struct({
  has_more: Schema.Boolean,
  items: Schema.Array(BatchCallTaskItem),
  pagination_key: Schema.optionalKey(Schema.String.annotate({
    description: "Key for the next page; send it back as pagination_key."
  }))
}).annotate({ identifier: "ListBatchCallTasksResponse" })
/** @category models */
export type ListBatchCallTasksResponse = typeof ListBatchCallTasksResponse.Type
