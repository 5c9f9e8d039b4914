/**
 * Calls in the vendor's shapes (decision 0510; `shared/reference/vendor-calls-facts.md` section 1): the phone call
 * object of `GET /v2/get-call/{call_id}`, the `POST /v3/list-calls` request and response, the
 * `PATCH /v2/update-call/{call_id}` body, and contact history (`GET /list-contact-conversations/{contact_id}`).
 *
 * The call object is what the SQL function `call_json` (store migration 0012) returns for a row; the schema here
 * names every member it can hold, so encoding a response drops nothing.
 */
import { Effect, Schema, SchemaTransformation } from "effect"
import { BooleanFilter, EnumFilter, NumberFilter, PresentFilter, RangeFilter, StringFilter } from "./FilterCondition.ts"
import { jsonDepth, maxJsonDepth } from "./JsonLimits.ts"
import { cursorOrOffset, nullMeansEmpty, onlyMembers, optionalPaginationKey } from "./ListRequest.ts"
import { NonEmptyString, NonNegativeInt } from "./Primitives.ts"

/**
 * The vendor's call statuses: `registered` (id issued, not connected yet), `ongoing` (connected), `ended`,
 * `error` (failed), `not_connected` (busy, no answer, refused). Decision 0510 maps dial outcomes onto them.
 *
 * @category models
 */
export const CallStatus = Schema.Literals(["registered", "not_connected", "ongoing", "ended", "error"])
/** @category models */
export type CallStatus = typeof CallStatus.Type

/**
 * The vendor's 34 disconnection reasons (vendor-calls-facts 1.5), with `error_svc` for the vendor's own error.
 *
 * @category models
 */
export const disconnectionReasons = [
  "user_hangup",
  "agent_hangup",
  "call_transfer",
  "voicemail_reached",
  "ivr_reached",
  "inactivity",
  "max_duration_reached",
  "concurrency_limit_reached",
  "no_concurrency_fallback",
  "no_valid_payment",
  "scam_detected",
  "dial_busy",
  "dial_failed",
  "dial_no_answer",
  "invalid_destination",
  "telephony_provider_permission_denied",
  "telephony_provider_unavailable",
  "sip_routing_error",
  "marked_as_spam",
  "user_declined",
  "error_llm_websocket_open",
  "error_llm_websocket_lost_connection",
  "error_llm_websocket_runtime",
  "error_llm_websocket_corrupt_payload",
  "error_no_audio_received",
  "error_asr",
  "error_svc",
  "error_unknown",
  "error_user_not_joined",
  "registered_call_timeout",
  "transfer_bridged",
  "transfer_cancelled",
  "manual_stopped",
  "call_take_over"
] as const

/** @category models */
export type DisconnectionReason = typeof disconnectionReasons[number]

/**
 * Whether `reason` is one of the vendor's disconnection reasons.
 *
 * @category predicates
 */
export const isDisconnectionReason = (reason: string): reason is DisconnectionReason =>
  (disconnectionReasons as ReadonlyArray<string>).includes(reason)

/**
 * The user sentiment of post-call analysis.
 *
 * @category models
 */
export const UserSentiment = Schema.Literals(["Negative", "Positive", "Neutral", "Unknown"])

/**
 * Post-call analysis: the vendor's four named members when the analysis data hold them, the rest of the data
 * under `custom_analysis_data`.
 *
 * @category models
 */
export const CallAnalysis = Schema.Struct({
  call_summary: Schema.optionalKey(Schema.String),
  in_voicemail: Schema.optionalKey(Schema.Boolean),
  user_sentiment: Schema.optionalKey(UserSentiment),
  call_successful: Schema.optionalKey(Schema.Boolean),
  custom_analysis_data: Schema.optionalKey(Schema.Record(Schema.String, Schema.Json))
}).annotate({ identifier: "CallAnalysis" })

/**
 * A phone call (vendor-calls-facts 1.4) as svc has it. Every call svc places is outbound; `batch_call_id` is an svc
 * extension. `agent_id` is absent when the batch named no agent and the carrier reported none.
 *
 * @category models
 */
export const Call = Schema.Struct({
  call_id: Schema.String,
  call_type: Schema.Literal("phone_call"),
  direction: Schema.Literals(["inbound", "outbound"]),
  call_status: CallStatus,
  agent_id: Schema.optionalKey(Schema.String),
  agent_version: Schema.optionalKey(Schema.Finite),
  batch_call_id: Schema.optionalKey(Schema.String),
  from_number: Schema.String,
  to_number: Schema.String,
  metadata: Schema.optionalKey(Schema.Json),
  svc_llm_dynamic_variables: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  custom_sip_headers: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  start_timestamp: Schema.optionalKey(Schema.Finite),
  end_timestamp: Schema.optionalKey(Schema.Finite),
  duration_ms: Schema.optionalKey(Schema.Finite),
  disconnection_reason: Schema.optionalKey(Schema.String),
  call_analysis: Schema.optionalKey(CallAnalysis),
  // decision 0552: present only when the callee opted out on this call (absent, as the vendor's calls never have it)
  opt_out: Schema.optionalKey(
    Schema.Literal(true).annotate({
      description: "svc extension: the callee opted out of further calls on this call (set with update-call's " +
        "opt_out); absent otherwise."
    })
  )
}).annotate({ identifier: "Call", description: "A phone call (get-call shape)." })
/** @category models */
export type Call = typeof Call.Type

/**
 * The most bytes `metadata` may take as JSON (vendor-calls-facts 1.2: "Limit: 50 kB"; kB = 1,000 bytes).
 *
 * @category models
 */
export const maxMetadataBytes = 50_000

/**
 * `PATCH /v2/update-call/{call_id}`: `metadata` replaces the call's metadata (any JSON, at most 50 kB as UTF-8
 * JSON). The vendor's `data_storage_setting` and `custom_attributes` are refused with a 400 naming the field
 * (decision 0512: svc stores no transcripts or recordings, and defines no custom attributes, so accepting them
 * would store nothing the caller asked for). `opt_out` (svc extension, decision 0552) records an opt-out the callee
 * voiced and suppresses the call's number.
 *
 * @category models
 */
const refused = (why: string) =>
  Schema.optionalKey(Schema.Unknown.check(Schema.makeFilter(() => `is not supported by svc: ${why}`)))

export const UpdateCallBody = Schema.Struct({
  metadata: Schema.optionalKey(Schema.Json.check(
    Schema.makeFilter((value) =>
      // depth first (decision 0106): JSON.stringify recurses, and fails past ~4,400 levels; the HTTP edge has refused
      // a body nested past maxJsonDepth already, this keeps the schema safe on its own
      jsonDepth(value) > maxJsonDepth
        ? `is nested too deep: objects and arrays may nest at most ${maxJsonDepth} levels`
        : new TextEncoder().encode(JSON.stringify(value)).length <= maxMetadataBytes
        ? undefined
        : `must be at most ${maxMetadataBytes} bytes as JSON`
    )
  )),
  data_storage_setting: refused("svc stores no transcripts or recordings, so there is nothing to restrict"),
  custom_attributes: refused("svc defines no custom attributes"),
  // spec deprecation schedule row 8: deprecated on 2026-08-31 with update-call becoming ended-calls-only
  override_dynamic_variables: refused(
    "deprecated on 2026-08-31 (update-call is for ended calls only; " +
      "use PATCH /v2/update-live-call/{call_id} for ongoing calls)"
  ),
  // decision 0552 (svc extension): the agent runtime reports an opt-out, during the call or after it
  opt_out: Schema.optionalKey(Schema.Boolean.annotate({
    description: "svc extension: true when the callee asked not to be called again. Sets the call's opt_out and " +
      "puts its to_number on the org's suppression list (source opt_out) in one transaction, so no later task to " +
      "that number is dialled; accepted while the call is in progress too. false clears the call's field only: it " +
      "never removes a suppression (DELETE /delete-suppression/{phone_number} does)."
  }))
}).annotate({ identifier: "UpdateCallBody" })
/** @category models */
export type UpdateCallBody = typeof UpdateCallBody.Type

const keyed = { key: NonEmptyString.annotate({ description: "Top-level key of the object filtered." }) }

/**
 * A condition on one key of a JSON object member (metadata, dynamic variables, custom analysis data).
 *
 * @category models
 */
export const KeyedFilter = Schema.Union([
  Schema.Struct({ ...StringFilter.fields, ...keyed }),
  Schema.Struct({ ...NumberFilter.fields, ...keyed }),
  Schema.Struct({ ...BooleanFilter.fields, ...keyed }),
  Schema.Struct({ ...RangeFilter.fields, ...keyed }),
  Schema.Struct({ ...EnumFilter.fields, ...keyed }),
  Schema.Struct({ ...PresentFilter.fields, ...keyed })
]).annotate({ identifier: "KeyedFilter" })
/** @category models */
export type KeyedFilter = typeof KeyedFilter.Type

const valuesIn = (allowed: ReadonlyArray<string>, name: string) =>
  EnumFilter.check(Schema.makeFilter((f: typeof EnumFilter.Type) => {
    const bad = f.value.find((v) => !allowed.includes(v))
    return bad === undefined
      ? undefined
      : `${JSON.stringify(bad)} is not a ${name}; expected one of ${allowed.join(", ")}`
  }))

/**
 * An agent and, optionally, some of its versions (none, or `[]`: every version). Entries are ORed.
 *
 * @category models
 */
export const AgentFilter = Schema.Struct({
  agent_id: NonEmptyString,
  version: Schema.optionalKey(Schema.Array(NonNegativeInt))
})

const callFilterFields = {
  batch_call_id: Schema.optionalKey(StringFilter),
  call_id: Schema.optionalKey(Schema.Union([StringFilter, EnumFilter])),
  agent: Schema.optionalKey(Schema.Array(AgentFilter)),
  call_status: Schema.optionalKey(valuesIn(CallStatus.literals, "call status")),
  call_type: Schema.optionalKey(valuesIn(["web_call", "phone_call"], "call type")),
  direction: Schema.optionalKey(valuesIn(["inbound", "outbound"], "direction")),
  disconnection_reason: Schema.optionalKey(valuesIn(disconnectionReasons, "disconnection reason")),
  call_successful: Schema.optionalKey(BooleanFilter),
  in_voicemail: Schema.optionalKey(BooleanFilter),
  user_sentiment: Schema.optionalKey(valuesIn(UserSentiment.literals, "user sentiment")),
  from_number: Schema.optionalKey(StringFilter),
  to_number: Schema.optionalKey(StringFilter),
  start_timestamp: Schema.optionalKey(Schema.Union([NumberFilter, RangeFilter])),
  end_timestamp: Schema.optionalKey(Schema.Union([NumberFilter, RangeFilter])),
  duration_ms: Schema.optionalKey(Schema.Union([NumberFilter, RangeFilter])),
  metadata: Schema.optionalKey(Schema.Array(KeyedFilter)),
  dynamic_variables: Schema.optionalKey(Schema.Array(KeyedFilter)),
  custom_analysis_data: Schema.optionalKey(Schema.Array(KeyedFilter))
}

/**
 * The filter members `list-calls` accepts: those svc's calls have data for.
 *
 * @category models
 */
export const callFilterMembers: ReadonlyArray<string> = Object.keys(callFilterFields)

const CallFilterFields = Schema.Struct(callFilterFields)
const UnknownMember = Schema.String.check(Schema.makeFilter((key: string) => !callFilterMembers.includes(key)))

/**
 * `filter_criteria` of `list-calls`, combined with AND. A member the vendor has and svc has no data for
 * (`agent_tag`, `combined_cost`, `custom_attributes`, `data_storage_setting`, `e2e_latency_p50`, `tool_calls`), or
 * any other unknown member, is a 400 naming it, as in list-contacts: silently dropping a filter would return calls
 * the caller meant to exclude.
 *
 * @category models
 */
export const CallFilterCriteria = Schema.StructWithRest(CallFilterFields, [
  Schema.Record(UnknownMember, Schema.Unknown)
]).check(
  onlyMembers(callFilterMembers, `is not a filter member svc supports; the members are ${callFilterMembers.join(", ")}`)
).pipe(
  Schema.decodeTo(Schema.toType(CallFilterFields), SchemaTransformation.passthroughSubtype()),
  Schema.annotate({ identifier: "CallFilterCriteria", description: "Conditions on calls, combined with AND." })
)
/** @category models */
export type CallFilterCriteria = typeof CallFilterCriteria.Type

/**
 * The default page size of `list-calls` (as list-contacts: the vendor states none).
 *
 * @category models
 */
export const defaultListCallsLimit = 50

const OptionalPaginationKey = optionalPaginationKey(Schema.String, NonEmptyString)

const ListCallsFields = Schema.Struct({
  limit: Schema.Int.check(
    Schema.isBetween({ minimum: 1, maximum: 1000 }, { expected: "an integer from 1 to 1000" })
  ).pipe(Schema.withDecodingDefaultKey(Effect.succeed(defaultListCallsLimit))),
  skip: Schema.optionalKey(NonNegativeInt),
  sort_order: Schema.Literals(["ascending", "descending"]).annotate({
    description: "By start_timestamp (a call not started yet: when it was registered); default descending."
  }).pipe(Schema.withDecodingDefaultKey(Effect.succeed("descending" as const))),
  pagination_key: OptionalPaginationKey,
  include_total: Schema.Boolean.pipe(Schema.withDecodingDefaultKey(Effect.succeed(false))),
  filter_criteria: Schema.optionalKey(CallFilterCriteria)
}).check(cursorOrOffset)

/**
 * A decoded `list-calls` request, defaults applied.
 *
 * @category models
 */
export class ListCallsRequest extends Schema.Class<ListCallsRequest>("ListCallsRequest")(ListCallsFields) {}

/**
 * The `list-calls` body as it arrives: a request object, or `null`/nothing, which mean `{}`.
 *
 * @category schemas
 */
export const ListCallsBody = nullMeansEmpty(ListCallsRequest)

/**
 * One page of calls; `total` only when the request set `include_total`.
 *
 * @category models
 */
export const ListCallsResponse = Schema.Struct({
  has_more: Schema.Boolean,
  items: Schema.Array(Call),
  pagination_key: Schema.optionalKey(Schema.String),
  total: Schema.optionalKey(Schema.Number)
}).annotate({ identifier: "ListCallsResponse" })
/** @category models */
export type ListCallsResponse = typeof ListCallsResponse.Type

/**
 * One item of a contact's history (vendor-calls-facts 3): svc has calls only.
 *
 * @category models
 */
export const ContactConversation = Schema.Struct({
  type: Schema.Literal("call"),
  call_id: Schema.String,
  direction: Schema.optionalKey(Schema.Literals(["inbound", "outbound"])),
  disconnection_reason: Schema.optionalKey(Schema.String),
  duration_ms: Schema.optionalKey(Schema.Finite),
  start_timestamp: Schema.optionalKey(Schema.Finite),
  sentiment: Schema.optionalKey(UserSentiment),
  successful: Schema.optionalKey(Schema.Boolean),
  summary: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "ContactConversation" })

/**
 * `GET /list-contact-conversations/{contact_id}`: newest first, no `total`.
 *
 * @category models
 */
export const ListContactConversationsResponse = Schema.Struct({
  has_more: Schema.Boolean,
  items: Schema.Array(ContactConversation),
  pagination_key: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "ListContactConversationsResponse" })
/** @category models */
export type ListContactConversationsResponse = typeof ListContactConversationsResponse.Type
