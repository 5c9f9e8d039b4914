/**
 * A batch's retry policy (decision 0625: "a batch-level retry policy (an svc extension field of create-batch-call):
 * retry `no_answer`/`busy`/`voicemail` outcomes up to N times with minimum spacing, each retry subject to windows,
 * legal hours and caps, never duplicating a call").
 *
 * A task is dialled at most `1 + max_retries` times. After a call whose outcome maps to one of `retry_on`
 * (`retryReasonOf`) it is due again `min_spacing_ms` after the call ended, with a new idempotency key
 * (`attemptKey`: the task id for the first attempt, as before retries existed, `<task id>:<n>` for the n-th).
 */
import { Schema } from "effect"
import type { DialOutcome } from "../ports/Dialer.ts"

/**
 * What a retry may be asked for: a call not answered, a busy line, a call answered by voicemail.
 *
 * @category models
 */
export const RetryReason = Schema.Literals(["no_answer", "busy", "voicemail"]).annotate({
  expected: "one of \"no_answer\", \"busy\", \"voicemail\""
})

/** @category models */
export type RetryReason = typeof RetryReason.Type

/** Most retries a task may have (11 calls in all). */
export const maxRetries = 10

/** Least spacing between a call's end and its retry: a minute. */
export const minSpacingMs = 60_000

/** Most spacing: 7 days (a longer wait is a new batch). */
export const maxSpacingMs = 7 * 86_400_000

/** Spacing when none is given: 10 minutes. */
export const defaultSpacingMs = 600_000

/**
 * The `retry_policy` member of `POST /create-batch-call` (svc extension).
 *
 * @category models
 */
export const RetryPolicy = Schema.Struct({
  max_retries: Schema.Int.check(
    Schema.isBetween({ minimum: 0, maximum: maxRetries }, { expected: `an integer from 0 to ${maxRetries}` })
  ).annotate({ description: "Most calls after the first, per task (0 to 10)." }),
  retry_on: Schema.Array(RetryReason).check(
    Schema.isMinLength(1, { expected: "a list of at least one of \"no_answer\", \"busy\", \"voicemail\"" })
  ).annotate({
    description: "Outcomes retried: no_answer (dial_no_answer), busy (dial_busy), voicemail (voicemail_reached)."
  }),
  min_spacing_ms: Schema.optionalKey(
    Schema.Int.check(
      Schema.isBetween({ minimum: minSpacingMs, maximum: maxSpacingMs }, {
        expected: `an integer from ${minSpacingMs} to ${maxSpacingMs} (1 minute to 7 days)`
      })
    ).annotate({ description: "Least time from a call's end to its retry, ms; default 600000 (10 minutes)." })
  )
}).annotate({
  description: "svc extension: retry tasks whose call was not answered, busy or reached voicemail; each retry is a " +
    "new call with its own idempotency key, subject to the call window, legal hours and attempt caps."
})

/** @category models */
export type RetryPolicy = typeof RetryPolicy.Type

/**
 * The retry reason a finished call gives, if any: voicemail by its disconnection reason, else busy and no answer by
 * its outcome. An answered call (not by voicemail) and a failed one give none.
 *
 * @category combinators
 */
export const retryReasonOf = (
  outcome: DialOutcome | undefined,
  disconnectionReason: string | undefined
): RetryReason | undefined => {
  if (disconnectionReason === "voicemail_reached") return "voicemail"
  if (outcome === "no_answer") return "no_answer"
  if (outcome === "busy") return "busy"
  return undefined
}

/**
 * The idempotency key of a task's `attempt`-th call: the task id for the first (unchanged from before retries: the
 * keys adapters already hold stay valid), `<task id>:<attempt>` after.
 *
 * @category combinators
 */
export const attemptKey = (taskId: string, attempt: number): string => attempt <= 1 ? taskId : `${taskId}:${attempt}`
