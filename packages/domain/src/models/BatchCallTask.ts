/**
 * One task of a batch call: one outbound call (spec, BatchCallTask).
 *
 * `to_number` is required and must be E.164 unless the task sets `ignore_e164_validation: true`, which
 * relaxes the check on that task's `to_number` only (design, "`ignore_e164_validation`"); it must still be a
 * non-empty string. `svc_llm_dynamic_variables` values must be strings (design, "`svc_llm_dynamic_variables`":
 * 400 otherwise); `custom_sip_headers` maps header names to string values; `metadata` is any JSON object,
 * stored and never interpreted.
 */
import { Schema, SchemaIssue } from "effect"
import { AgentOverride, AgentVersionRef } from "./AgentOverride.ts"
import { E164Expected, isE164 } from "./E164.ts"
import { AgentId } from "./Ids.ts"
import { NonEmptyString } from "./Primitives.ts"

const BatchCallTaskFields = Schema.Struct({
  to_number: NonEmptyString.annotate({
    description: "The number to call, in E.164 format unless ignore_e164_validation is true."
  }),
  ignore_e164_validation: Schema.optionalKey(Schema.Boolean.annotate({
    description: "When true, to_number is not checked for E.164 format (for pseudo numbers on custom telephony)."
  })),
  override_agent_id: Schema.optionalKey(AgentId.annotate({ description: "Agent to use for this call only." })),
  override_agent_version: Schema.optionalKey(AgentVersionRef),
  agent_override: Schema.optionalKey(AgentOverride),
  svc_llm_dynamic_variables: Schema.optionalKey(
    Schema.Record(Schema.String, Schema.String).annotate({
      description: "Variable name to string value, injected into the response engine's prompts."
    })
  ),
  metadata: Schema.optionalKey(Schema.JsonObject.annotate({ description: "Free-form; stored, not processed." })),
  custom_sip_headers: Schema.optionalKey(
    Schema.Record(Schema.String, Schema.String).annotate({ description: "SIP header name to value." })
  )
}).check(
  Schema.makeFilter((task, _ast, options) =>
    // spec: to_number is E.164; design: ignore_e164_validation relaxes this task's to_number only
    task.ignore_e164_validation === true || isE164(task.to_number)
      ? undefined
      : new SchemaIssue.Pointer(
        ["to_number"],
        new SchemaIssue.InvalidValue({ expected: E164Expected }, task.to_number, options)
      )
  )
)

/**
 * A batch call task.
 *
 * @category models
 */
export class BatchCallTask extends Schema.Class<BatchCallTask>("BatchCallTask")(BatchCallTaskFields, {
  description: "One outbound call of a batch."
}) {}
