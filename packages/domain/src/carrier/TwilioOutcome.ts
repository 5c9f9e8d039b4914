/**
 * What a Twilio call, or a refused request to create one, means for the Dialer port (mapping Twilio's
 * statuses and error codes to the port's outcomes and to the vendor's `disconnection_reason` values; decision
 * 0603 holds the table and the choices the issue leaves open).
 *
 * Sources: Twilio Programmable Voice, the Call resource's `Status` and `AnsweredBy`, the status callback's
 * `SipResponseCode` and `ErrorCode`, and Twilio's error dictionary (https://www.twilio.com/docs/api/errors) for
 * the codes a create request is refused with.
 */
import type { DialOutcome } from "../ports/Dialer.ts"
import type { TwilioCallStatus } from "./TwilioCallStatus.ts"

/** @category models */
export type TwilioEndStatus = Extract<TwilioCallStatus, "completed" | "busy" | "no-answer" | "failed" | "canceled">

/**
 * What Twilio reported about a call that ended.
 *
 * @category models
 */
export interface TwilioFinishedCall {
  readonly status: TwilioEndStatus
  /** Answering-machine detection: `human`, `machine_start`, `machine_end_beep`, `fax`, `unknown`, ... */
  readonly answeredBy?: string | null | undefined
  readonly sipResponseCode?: number | null | undefined
  readonly errorCode?: number | null | undefined
}

/** @category models */
export interface TwilioCallEnd {
  readonly outcome: DialOutcome
  readonly disconnection_reason: string
}

/**
 * Answering-machine detection said a machine (or a fax) took the call. Twilio's values: `machine_start`,
 * `machine_end_beep`, `machine_end_silence`, `machine_end_other`, `fax` (`human` and `unknown` are not machines).
 */
export const isMachine = (answeredBy: string | null | undefined): boolean =>
  answeredBy !== null && answeredBy !== undefined && (answeredBy.startsWith("machine_") || answeredBy === "fax")

/**
 * Twilio error codes that name a destination that cannot be called (error dictionary): 13223 Dial: invalid phone
 * number format, 13224 Dial: invalid phone number, 21211 invalid 'To' phone number, 21214 'To' phone number
 * cannot be reached, 21217 phone number does not appear to be valid, 21401 invalid phone number, 21612 the 'To'
 * phone number is not currently reachable, 21614 'To' number is not a valid mobile number.
 */
const INVALID_DESTINATION: ReadonlySet<number> = new Set([13223, 13224, 21211, 21214, 21217, 21401, 21612, 21614])

/**
 * Twilio error codes that say the account may not make this call (error dictionary): 13225 Dial: forbidden phone
 * number, 13227 Dial: no international authorization, 21210 'From' phone number not verified, 21212 invalid
 * 'From' phone number, 21213 caller phone number is required, 21215 geo permission configuration does not permit
 * the call, 21216 call blocked by Twilio's blocklist, 21219 'To' phone number not verified (trial account), 21610
 * the recipient unsubscribed (replied STOP).
 */
const PERMISSION_DENIED: ReadonlySet<number> = new Set([13225, 13227, 21210, 21212, 21213, 21215, 21216, 21219, 21610])

/** The vendor's `disconnection_reason` for a Twilio error code that names the destination or a permission. */
const reasonOfErrorCode = (code: number | null | undefined): string | undefined =>
  code === null || code === undefined
    ? undefined
    : INVALID_DESTINATION.has(code)
    ? "invalid_destination"
    : PERMISSION_DENIED.has(code)
    ? "telephony_provider_permission_denied"
    : undefined

/**
 * The reason a failed call's final SIP response gives (RFC 3261 §21): the number does not exist (404, 484, 485,
 * 604), the carrier forbids it (403), the callee declined (603), busy (486, 600), nobody answered (408, 480, 487),
 * the far end is down (500, 502, 503, 504).
 */
const reasonOfSip = (code: number | null | undefined): string | undefined => {
  switch (code) {
    case 404:
    case 484:
    case 485:
    case 604:
      return "invalid_destination"
    case 403:
      return "telephony_provider_permission_denied"
    case 603:
      return "user_declined"
    case 486:
    case 600:
      return "dial_busy"
    case 408:
    case 480:
    case 487:
      return "dial_no_answer"
    case 500:
    case 502:
    case 503:
    case 504:
      return "telephony_provider_unavailable"
    default:
      return undefined
  }
}

/**
 * The port's outcome and the vendor's disconnection reason of an ended call.
 *
 * - `completed`: the call was answered. A machine answer (AnsweredBy `machine_*` or `fax`) is `answered` with
 *   `voicemail_reached`: the line was picked up and billed, and the agent runtime may have left a message, as the
 *   vendor reports a voicemail (a connected call with `in_voicemail`); the reason tells it apart (decision 0603).
 *   Otherwise `user_hangup`: Twilio's callback does not say which side hung up, and the agent's own hang-ups are
 *   reported by the agent runtime, not by the carrier.
 * - `busy` / `no-answer`: `busy`/`dial_busy`, `no_answer`/`dial_no_answer`.
 * - `failed`: `failed`, with the reason the error code or the SIP response gives, else `dial_failed`.
 * - `canceled` (ended through the API before it was answered: the batch cancel's hang-up): `failed` with
 *   `manual_stopped`.
 *
 * @category constructors
 */
export const callEnd = (call: TwilioFinishedCall): TwilioCallEnd => {
  switch (call.status) {
    case "completed":
      return {
        outcome: "answered",
        disconnection_reason: isMachine(call.answeredBy) ? "voicemail_reached" : "user_hangup"
      }
    case "busy":
      return { outcome: "busy", disconnection_reason: "dial_busy" }
    case "no-answer":
      return { outcome: "no_answer", disconnection_reason: "dial_no_answer" }
    case "canceled":
      return { outcome: "failed", disconnection_reason: "manual_stopped" }
    case "failed":
      return {
        outcome: "failed",
        disconnection_reason: reasonOfErrorCode(call.errorCode) ?? reasonOfSip(call.sipResponseCode) ?? "dial_failed"
      }
  }
}

/**
 * What a failed create request (`POST /Accounts/{sid}/Calls.json`) means for the key:
 *
 * - `Refused`: Twilio refused this call before it existed, and would refuse it again (a code of the refusal
 *   tables above, on a 4xx): the port's `DialRejected` with `reason`.
 * - `RateLimited`: 429 (error 20429): no call exists; back off and send the request again.
 * - `NotCreated`: any other 4xx (bad credentials 20003, a malformed request 21205/21218, ...): no call exists, but
 *   the fault is the deployment's, not the task's; the task must not fail for it (the adapter answers
 *   `DialerUnavailable` and frees the key).
 * - `MayExist`: a 5xx, a timeout or a broken connection: Twilio may have created the call; only the Calls list
 *   can tell (the port's `DialerUnavailable`, the key stays reserved).
 *
 * @category models
 */
export type CreateFailure =
  | { readonly _tag: "Refused"; readonly reason: string }
  | { readonly _tag: "RateLimited" }
  | { readonly _tag: "NotCreated" }
  | { readonly _tag: "MayExist" }

/**
 * Classifies a failed create request by its HTTP status (undefined when no response arrived) and Twilio error code.
 *
 * @category constructors
 */
export const createFailure = (httpStatus: number | undefined, code: number | undefined): CreateFailure => {
  if (httpStatus === undefined || httpStatus >= 500 || httpStatus < 400) return { _tag: "MayExist" }
  if (httpStatus === 429 || code === 20429) return { _tag: "RateLimited" }
  const reason = reasonOfErrorCode(code)
  return reason === undefined ? { _tag: "NotCreated" } : { _tag: "Refused", reason }
}
