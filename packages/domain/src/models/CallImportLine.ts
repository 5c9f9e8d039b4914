/**
 * One line of `admin import --kind calls` (decision 0535): a finished phone call in the get-call shape
 * (`Call`, the object `GET /v2/get-call/{call_id}` returns), as another svc or the vendor exports it. Every member
 * is kept as given, so that get-call answers the line back (docs/decisions/0535-call-imports.md), or the line is
 * refused naming the member:
 *
 * - members svc does not store (transcripts, recordings, latency, cost, `telephony_identifier`, ...) are unknown
 *   fields, an error: they are never dropped silently; strip them from the file to import the rest;
 * - `call_type` must be `phone_call` and `direction` `outbound` (svc's calls are outbound phone calls: an inbound
 *   or web call would read back as something else);
 * - `call_status` must be a finished call's (`ended`, `not_connected`, `error`): an imported `registered` or
 *   `ongoing` call has no dialer to finish it and would show as ringing for ever;
 * - `disconnection_reason` one of the vendor's 34; numbers E.164 (the contact a call belongs to is found by its
 *   `to_number`); timestamps and `duration_ms` integers >= 0; `call_id` addressable by get-call (1-100
 *   characters, no control characters); text PostgreSQL can store; `metadata` at most 50 kB (update-call's limit);
 * - `call_analysis.custom_analysis_data` must not use the four names `call_analysis` itself has (`call_summary`,
 *   `in_voicemail`, `user_sentiment`, `call_successful`): both live in one object, and the read-back would move
 *   the custom value into the named member.
 */
import { Schema, SchemaIssue } from "effect"
import { disconnectionReasons, maxMetadataBytes, UserSentiment } from "./Call.ts"
import { isStorableText, MAX_CONTACT_ID_LENGTH } from "./ContactImportLine.ts"
import { E164 } from "./E164.ts"
import { firstJsonProblem, maxJsonDepth, maxJsonMagnitude } from "./JsonLimits.ts"
import { EpochMillis, NonNegativeInt } from "./Primitives.ts"

const storableMessage = "must not contain U+0000 or an unpaired surrogate (PostgreSQL cannot store them)"

const StoredText = Schema.String.check(
  Schema.makeFilter((text: string) => isStorableText(text) ? undefined : storableMessage)
)

/**
 * A free-form JSON member of a line (`metadata`, a `custom_analysis_data` value) held to the rules of the API's
 * request bodies (JsonLimits, decision 0106), so that every imported call reads back through get-call and list-calls:
 * nested at most `maxJsonDepth` levels (the read path's bound), numbers within ±(2^53 - 1) (a larger one would be
 * imported rounded, silently), and every string, keys included, storable (PostgreSQL's jsonb refuses U+0000). The walk
 * is iterative: a line nested 50,000 levels deep is refused, not a stack overflow.
 */
const StoredJson = Schema.Json.check(
  Schema.makeFilter((value, _ast, options) => {
    const problem = firstJsonProblem(value, { text: true })
    if (problem === undefined) return undefined
    const message = problem.rule === "depth"
      ? `is nested too deep: objects and arrays may nest at most ${maxJsonDepth} levels`
      : problem.rule === "number"
      ? `is a number beyond ±${maxJsonMagnitude} (2^53 - 1), the largest a JSON number holds exactly; ` +
        "give it as a string"
      : storableMessage
    // a number at its own path; the member itself for its depth (a path past 64 levels says nothing more) and its
    // text (as before the number rule)
    const at = problem.rule === "number" ? problem.path : []
    return at.length === 0
      ? message
      : new SchemaIssue.Pointer(at, new SchemaIssue.InvalidValue({ message }, undefined, options))
  })
)

const StoredStrings = Schema.Record(StoredText, StoredText)

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/u

const ImportedCallId = Schema.String.check(
  Schema.makeFilter((id: string) =>
    id.length === 0
      ? "must be a non-empty string"
      : id.length > MAX_CONTACT_ID_LENGTH
      ? `must be at most ${MAX_CONTACT_ID_LENGTH} characters (get-call could not address it as a path parameter)`
      : CONTROL.test(id) || !id.isWellFormed()
      ? "must not contain control characters or unpaired surrogates (get-call could not address it)"
      : undefined
  )
)

const NAMED_ANALYSIS = ["call_summary", "in_voicemail", "user_sentiment", "call_successful"] as const

const customAnalysisData = Schema.Record(StoredText, StoredJson).check(
  Schema.makeFilter((data: Readonly<Record<string, unknown>>, _ast, options) => {
    const clash = NAMED_ANALYSIS.find((name) => name in data)
    return clash === undefined ? undefined : new SchemaIssue.Pointer(
      [clash],
      new SchemaIssue.InvalidValue(
        { message: `is a member of call_analysis itself; give it there, not in custom_analysis_data` },
        data[clash],
        options
      )
    )
  })
)

/**
 * A call line of an import file.
 *
 * @category models
 */
export const CallImportLine = Schema.Struct({
  call_id: ImportedCallId,
  call_type: Schema.optionalKey(
    Schema.Literal("phone_call").annotate({
      message: "must be \"phone_call\" (svc keeps phone calls only)"
    })
  ),
  direction: Schema.optionalKey(
    Schema.Literal("outbound").annotate({
      message: "must be \"outbound\" (svc keeps outbound calls only)"
    })
  ),
  call_status: Schema.Literals(["ended", "not_connected", "error"]).annotate({
    message: "must be a finished call's status: ended, not_connected or error"
  }),
  agent_id: Schema.optionalKey(StoredText),
  agent_version: Schema.optionalKey(NonNegativeInt),
  batch_call_id: Schema.optionalKey(StoredText),
  from_number: E164,
  to_number: E164,
  metadata: Schema.optionalKey(StoredJson.check(
    Schema.makeFilter((value) =>
      new TextEncoder().encode(JSON.stringify(value)).length <= maxMetadataBytes
        ? undefined
        : `must be at most ${maxMetadataBytes} bytes as JSON`
    )
  )),
  svc_llm_dynamic_variables: Schema.optionalKey(StoredStrings),
  custom_sip_headers: Schema.optionalKey(StoredStrings),
  start_timestamp: Schema.optionalKey(EpochMillis),
  end_timestamp: Schema.optionalKey(EpochMillis),
  duration_ms: Schema.optionalKey(NonNegativeInt),
  disconnection_reason: Schema.optionalKey(
    Schema.Literals(disconnectionReasons).annotate({
      message: "must be one of the vendor's disconnection reasons (e.g. user_hangup, dial_no_answer)"
    })
  ),
  call_analysis: Schema.optionalKey(Schema.Struct({
    call_summary: Schema.optionalKey(StoredText),
    in_voicemail: Schema.optionalKey(Schema.Boolean),
    user_sentiment: Schema.optionalKey(UserSentiment),
    call_successful: Schema.optionalKey(Schema.Boolean),
    custom_analysis_data: Schema.optionalKey(customAnalysisData)
  }))
})

/** @category models */
export type CallImportLine = typeof CallImportLine.Type
