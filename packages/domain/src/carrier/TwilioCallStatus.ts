/**
 * Twilio's call statuses (Programmable Voice, `CallStatus` of a call resource and of its status callbacks) and
 * their order (decision 0606). Twilio does not guarantee that callbacks arrive in order, or once;
 * the adapter's record only ever moves forward along this order, and a terminal status never changes, so a late
 * or replayed callback changes nothing (decision 0601).
 *
 * `requesting` and `rejected` are the adapter's own: a record written before the create request, and a request
 * Twilio refused before any call existed.
 */
import { Schema } from "effect"

/** @category models */
export const TwilioCallStatus = Schema.Literals([
  "queued",
  "initiated",
  "ringing",
  "in-progress",
  "completed",
  "busy",
  "no-answer",
  "failed",
  "canceled"
])
/** @category models */
export type TwilioCallStatus = typeof TwilioCallStatus.Type

/** @category models */
export type TwilioRecordStatus = TwilioCallStatus | "requesting" | "rejected"

/** The statuses after which a call is over. */
export const TERMINAL_RANK = 5

/**
 * The position of a status in a call's life: requesting 0, queued 1, initiated 2, ringing 3, in-progress 4, any
 * end 5. A record moves to a status only if its rank is higher than the record's.
 */
export const rank = (status: TwilioRecordStatus): number => {
  switch (status) {
    case "requesting":
      return 0
    case "queued":
      return 1
    case "initiated":
      return 2
    case "ringing":
      return 3
    case "in-progress":
      return 4
    case "completed":
    case "busy":
    case "no-answer":
    case "failed":
    case "canceled":
    case "rejected":
      return TERMINAL_RANK
  }
}

/** Whether the call is over. */
export const isTerminal = (status: TwilioRecordStatus): boolean => rank(status) === TERMINAL_RANK
