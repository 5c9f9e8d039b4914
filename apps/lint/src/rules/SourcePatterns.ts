/**
 * What the source-code scan looks for, beside the schedule's endpoint templates (which come from
 * the domain's `Endpoints.ts`): request-body fields and values that the schedule removes or
 * deprecates, and the integration rules' hosts (which the spec does not name: see
 * docs/decisions/0201-svc-lint.md for where the defaults come from).
 */
import type { RuleId } from "@svc/domain/Deprecation/Rule.ts"

/** A request-body key whose use in source code is a finding of `rule`. */
export interface FieldPattern {
  readonly field: string
  readonly rule: RuleId
}

export const fieldPatterns: ReadonlyArray<FieldPattern> = [
  { field: "analysis_summary_prompt", rule: "legacy-analysis-prompts" },
  { field: "analysis_successful_prompt", rule: "legacy-analysis-prompts" },
  { field: "analysis_user_sentiment_prompt", rule: "legacy-analysis-prompts" },
  ...["inbound", "outbound", "inbound_sms", "outbound_sms"].flatMap((prefix) => [
    { field: `${prefix}_agent_id`, rule: "phone-number-single-agent-fields" as const },
    { field: `${prefix}_agent_version`, rule: "phone-number-single-agent-fields" as const }
  ])
]

/** String values whose use in source code is a finding of `rule`. */
export const valuePatterns: ReadonlyArray<{ readonly value: string; readonly rule: RuleId }> = [
  { value: "check_availability_cal", rule: "calendar-cal-tools" },
  { value: "book_appointment_cal", rule: "calendar-cal-tools" }
]

/**
 * Hosts of the legacy SIP endpoint (row 11), as host globs. The spec says only "legacy SIP
 * endpoint" and names the replacement `sip:{sip_server}`; the default is the vendor's former SIP
 * host form (an inference, overridable with `sources.legacySipHosts`).
 */
export const defaultLegacySipHosts: ReadonlyArray<string> = ["*.sip.livekit.cloud"]

/** npm packages of the browser client library (row 10) whose major version 2 is deprecated. */
export const webClientPackages: ReadonlyArray<string> = ["retell-client-js-sdk"]
