/**
 * `POST /list-webhook-deliveries`: the org's webhook deliveries and each one's attempts (an svc extension, decision 0800:
 * the console shows them; until then only `admin webhook-deliveries` did). Marked `x-svc-extension: true` in the
 * OpenAPI document (tag `webhookDeliveries`). The request follows the vendor's list conventions as list-batch-calls
 * does (decision 0548): `limit`, `pagination_key`, `filter_criteria` with `{type: "enum", value: [...]}` members; a
 * `null` or absent body is `{}`. Failing deliveries come first, then the rest, each newest first.
 */
import { EnumFilter } from "@svc/domain/models/FilterCondition.ts"
import { IdText } from "@svc/domain/models/Ids.ts"
import { nullMeansEmpty, onlyMembers, optionalPaginationKey } from "@svc/domain/models/ListRequest.ts"
import { EpochMillis, NonNegativeInt, PaginationKeyText } from "@svc/domain/models/Primitives.ts"
import { Effect, Schema, SchemaTransformation } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BadRequest, InternalServerError, TooManyRequests, Unauthorized } from "../Errors.ts"
import { svcExtension } from "./BatchProgress.ts"

/** A delivery's states (decision 0524): retried while `pending`; 2xx `delivered`; 410 `gone`; 24 h `failed`. */
export const deliveryStates = ["pending", "delivered", "gone", "failed"] as const

/** Page size: an item carries up to 10 attempts, so a page is held to 100 (list-batch-calls' bound). */
export const deliveriesPageLimits = { default: 50, maximum: 100 } as const

const stateFilter = EnumFilter.check(Schema.makeFilter((f: typeof EnumFilter.Type) => {
  const bad = f.value.find((v) => !(deliveryStates as ReadonlyArray<string>).includes(v))
  return bad === undefined
    ? undefined
    : `${JSON.stringify(bad)} is not a delivery state; expected one of ${deliveryStates.join(", ")}`
}))

const callIdFilter = EnumFilter.check(Schema.makeFilter((f: typeof EnumFilter.Type) => {
  if (f.value.length > 100) return `lists at most 100 call ids (got ${f.value.length})`
  const bad = f.value.find((v) => !Schema.is(IdText)(v))
  return bad === undefined ? undefined : `${JSON.stringify(bad)} is not a call id: 1 to 255 characters`
}))

const filterFields = {
  call_id: Schema.optionalKey(callIdFilter.annotate({ description: "The calls whose events are listed (1-100 ids)." })),
  state: Schema.optionalKey(stateFilter.annotate({ description: `Delivery states: ${deliveryStates.join(", ")}.` }))
}
const filterMembers = Object.keys(filterFields)
const FilterFields = Schema.Struct(filterFields)

const DeliveryFilterCriteria = Schema.StructWithRest(FilterFields, [
  Schema.Record(Schema.String.check(Schema.makeFilter((key: string) => !filterMembers.includes(key))), Schema.Unknown)
]).check(onlyMembers(filterMembers, `is not a filter member; the members are ${filterMembers.join(", ")}`)).pipe(
  Schema.decodeTo(Schema.toType(FilterFields), SchemaTransformation.passthroughSubtype()),
  Schema.annotate({
    identifier: "WebhookDeliveryFilterCriteria",
    description: "Conditions on deliveries, combined with AND."
  })
)

/** @category models */
export class ListWebhookDeliveriesRequest
  extends Schema.Class<ListWebhookDeliveriesRequest>("ListWebhookDeliveriesRequest")({
    limit: Schema.Int.check(
      Schema.isBetween({ minimum: 1, maximum: deliveriesPageLimits.maximum }, {
        expected: `an integer from 1 to ${deliveriesPageLimits.maximum}`
      })
    ).annotate({
      description:
        `Maximum items returned, 1 to ${deliveriesPageLimits.maximum}; default ${deliveriesPageLimits.default}.`
    }).pipe(Schema.withDecodingDefaultKey(Effect.succeed(deliveriesPageLimits.default))),
    pagination_key: optionalPaginationKey(
      Schema.String.annotate({ description: "The pagination_key of the previous response, unchanged." }),
      PaginationKeyText
    ),
    filter_criteria: Schema.optionalKey(DeliveryFilterCriteria)
  }, { description: "Lists the org's webhook deliveries, failing first, then newest first; cursor paged." })
{}

/** The list-webhook-deliveries body as it arrives: a request, or `null`/nothing for `{}`. @category schemas */
export const ListWebhookDeliveriesBody = nullMeansEmpty(ListWebhookDeliveriesRequest)

const NullableInt = Schema.NullOr(Schema.Int)

/** One attempt to deliver an event. @category models */
export const WebhookDeliveryAttempt = Schema.Struct({
  attempted_timestamp: EpochMillis.annotate({ description: "When the attempt ended (the worker's clock), epoch ms." }),
  status_code: NullableInt.annotate({ description: "The receiver's HTTP status; null when none came (timeout...)." }),
  error: Schema.NullOr(Schema.String).annotate({
    description: "What went wrong: the start of a non-2xx answer, a timeout, a connection error; null on success."
  }),
  duration_ms: NonNegativeInt.annotate({ description: "How long the attempt took." })
}).annotate({ identifier: "WebhookDeliveryAttempt" })

/** One event to deliver and where it stands. @category models */
export const WebhookDelivery = Schema.Struct({
  event_id: Schema.String.annotate({ description: "x-svc-event-id: the same on every attempt." }),
  call_id: Schema.String,
  event: Schema.String.annotate({ description: "call_started, call_ended or call_analyzed." }),
  url: Schema.String.annotate({ description: "The target it is sent to." }),
  state: Schema.Literals(deliveryStates),
  failing: Schema.Boolean.annotate({
    description: "Given up (failed), refused (gone: HTTP 410), or waiting to be retried after a failed attempt."
  }),
  attempt_count: NonNegativeInt.annotate({ description: "Attempts made so far." }),
  attempts: Schema.Array(WebhookDeliveryAttempt).annotate({
    description: "The last attempts (at most 10), oldest first."
  }),
  last_status_code: NullableInt,
  last_error: Schema.NullOr(Schema.String),
  next_retry_timestamp: Schema.NullOr(EpochMillis).annotate({
    description: "While pending: when the next attempt is due (or the current attempt's lease ends); else null."
  }),
  finished_timestamp: Schema.NullOr(EpochMillis).annotate({ description: "When it was delivered, gone or given up." }),
  created_timestamp: EpochMillis.annotate({ description: "When the call change raised the event (database clock)." })
}).annotate({ identifier: "WebhookDelivery" })

/** @category models */
export const ListWebhookDeliveriesResponse = Schema.Struct({
  has_more: Schema.Boolean,
  items: Schema.Array(WebhookDelivery),
  pagination_key: Schema.optionalKey(Schema.String.annotate({
    description: "Key for the next page; send it back as pagination_key."
  }))
}).annotate({ identifier: "ListWebhookDeliveriesResponse" })

export class WebhookDeliveriesGroup extends HttpApiGroup.make("webhookDeliveries")
  .add(
    HttpApiEndpoint.post("listWebhookDeliveries", "/list-webhook-deliveries", {
      payload: [ListWebhookDeliveriesBody, Schema.Null],
      success: ListWebhookDeliveriesResponse,
      error: [BadRequest, Unauthorized, TooManyRequests, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "svc extension: the org's webhook deliveries with each one's attempts, failing ones first, then newest " +
        "first; filters call_id and state; cursor paged"
    ).annotate(OpenApi.Override, svcExtension)
  )
{}
