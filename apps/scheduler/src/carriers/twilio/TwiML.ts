/**
 * The TwiML of a batch call (decision 0604): when the callee answers, Twilio dials the agent runtime at
 * `sip:{call_id}@{sip_server}` (the spec's dial-to-SIP form) and bridges the two. The task's overrides and its
 * `custom_sip_headers` travel as SIP URI headers (`?X-Name=value&...`, RFC 3261 §19.1.1: each value
 * percent-encoded), which Twilio sends as headers of the INVITE. Built with the SDK's `VoiceResponse`, which
 * escapes the XML; the URI's own encoding is done here (decision 0604 lists the headers):
 *
 * - `X-Svc-Override-Agent-Id`: `override_agent_id`
 * - `X-Svc-Override-Agent-Version`: `override_agent_version` (a number or a name such as `latest_published`)
 * - `X-Svc-Agent-Override`: `agent_override`, as JSON
 * - `X-Svc-Dynamic-Variables`: `dynamic_variables` (`svc_llm_dynamic_variables`), as JSON
 * - every `custom_sip_headers` entry under its own name, which must be `X-` and token characters, and must not
 *   claim the `X-Svc-` prefix (those are ours: a task cannot forge an override through its custom headers).
 *
 * `metadata` is the caller's and stays with the scheduler (rule 5 of docs/dialer.md: passed through, not
 * interpreted); it is not sent to the carrier.
 */
import type { CallId } from "@svc/domain/models/Ids.ts"
import type { DialRequest } from "@svc/domain/ports/Dialer.ts"
import { Effect, Schema } from "effect"
import twilio from "twilio"

/**
 * A header of the task cannot be carried (a name that is not an `X-` token, or one of ours), or the headers
 * exceed what Twilio passes on: nothing was sent, and sending again would fail again.
 *
 * @category errors
 */
export class InvalidSipHeaders extends Schema.TaggedError<InvalidSipHeaders>()("InvalidSipHeaders", {
  message: Schema.String
}) {}

/**
 * Twilio passes at most 1024 characters of custom SIP headers in a `<Sip>` URI (TwiML `<Sip>` docs, "Custom
 * headers"); longer headers would be dropped silently, so the request is refused instead.
 */
export const MAX_HEADERS_LENGTH = 1024

/** RFC 3261 `token` characters after `X-`. */
const HEADER_NAME = /^X-[A-Za-z0-9.!%*_+`'~-]+$/

/** The SIP URI headers for `request`, in a fixed order (ours first, then the task's by name). */
export const sipHeaders = (
  request: DialRequest
): Effect.Effect<ReadonlyArray<readonly [string, string]>, InvalidSipHeaders> =>
  Effect.gen(function*() {
    const headers: Array<readonly [string, string]> = []
    if (request.override_agent_id !== undefined) headers.push(["X-Svc-Override-Agent-Id", request.override_agent_id])
    if (request.override_agent_version !== undefined) {
      headers.push(["X-Svc-Override-Agent-Version", String(request.override_agent_version)])
    }
    if (request.agent_override !== undefined) {
      headers.push(["X-Svc-Agent-Override", JSON.stringify(request.agent_override)])
    }
    if (request.dynamic_variables !== undefined) {
      headers.push(["X-Svc-Dynamic-Variables", JSON.stringify(request.dynamic_variables)])
    }
    const custom = Object.entries(request.custom_sip_headers ?? {}).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
    for (const [name, value] of custom) {
      if (!HEADER_NAME.test(name)) {
        return yield* new InvalidSipHeaders({
          message: `custom_sip_headers: "${name}" is not a custom SIP header name (X- followed by token characters)`
        })
      }
      if (name.toLowerCase().startsWith("x-svc-")) {
        return yield* new InvalidSipHeaders({
          message: `custom_sip_headers: "${name}" uses the X-Svc- prefix, which carries svc's own overrides`
        })
      }
      headers.push([name, value])
    }
    return headers
  })

/**
 * `sip:{call_id}@{sipServer}?X-A=v&X-B=w`, every part percent-encoded (a `call_id` or a value cannot add a header,
 * a parameter or a second URI).
 */
export const sipUri = (
  callId: CallId,
  sipServer: string,
  headers: ReadonlyArray<readonly [string, string]>
): Effect.Effect<string, InvalidSipHeaders> => {
  const query = headers.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join("&")
  if (query.length > MAX_HEADERS_LENGTH) {
    return Effect.fail(
      new InvalidSipHeaders({
        message:
          `the call's SIP headers take ${query.length} characters encoded; Twilio carries at most ${MAX_HEADERS_LENGTH}`
      })
    )
  }
  return Effect.succeed(`sip:${encodeURIComponent(callId)}@${sipServer}${query === "" ? "" : `?${query}`}`)
}

/**
 * The call's TwiML document: `<Response><Dial><Sip>sip:...</Sip></Dial></Response>`.
 *
 * @category constructors
 */
export const callTwiml = (request: DialRequest, sipServer: string): Effect.Effect<string, InvalidSipHeaders> =>
  Effect.gen(function*() {
    const uri = yield* sipUri(request.call_id, sipServer, yield* sipHeaders(request))
    const response = new twilio.twiml.VoiceResponse()
    response.dial().sip(uri)
    return response.toString()
  })
