/**
 * Retrying a batch's unanswered, busy and failed recipients on demand (decision 0551; svc extension
 * `POST /retry-batch-call/{batch_call_id}`): the request's outcomes, the answer, and which calls may be asked for
 * again.
 *
 * Outcomes use the names of decision 0625's retry policy (`no_answer`, `busy`, `voicemail`: `retryReasonOf`), plus
 * `failed`: a task whose last dial failed (its call failed on the way, or the carrier refused the dial), which the
 * automatic policy never retries. A task is dialled at most {@link retryCallCap} times in all, whoever asks.
 */
import { Schema } from "effect"
import { BatchCallProgress } from "./BatchCallProgress.ts"
import { BatchCallId } from "./Ids.ts"
import { nullMeansEmpty } from "./ListRequest.ts"
import { NonNegativeInt } from "./Primitives.ts"
import { maxRetries } from "./RetryPolicy.ts"

/**
 * The outcomes a retry may ask for, in the retry policy's names, and `failed`.
 *
 * @category models
 */
export const retryOutcomes = ["no_answer", "busy", "voicemail", "failed"] as const

/**
 * How a task's last call ended, as the retry endpoint names it: `voicemail` (disconnection reason
 * `voicemail_reached`), `no_answer` (`dial_no_answer`), `busy` (`dial_busy`), `failed` (the task failed: its call
 * failed, or the carrier refused the dial).
 *
 * @category models
 */
export const RetryOutcome = Schema.Literals(retryOutcomes).annotate({
  expected: `one of ${retryOutcomes.map((o) => JSON.stringify(o)).join(", ")}`
})
/** @category models */
export type RetryOutcome = typeof RetryOutcome.Type

/**
 * The body of `POST /retry-batch-call/{batch_call_id}`: `outcomes` defaults to all of {@link retryOutcomes}.
 *
 * @category models
 */
export class RetryBatchCallRequest extends Schema.Class<RetryBatchCallRequest>("RetryBatchCallRequest")({
  outcomes: Schema.optionalKey(
    Schema.Array(RetryOutcome).check(
      Schema.isMinLength(1, { expected: `a list of at least one of ${retryOutcomes.join(", ")}` })
    ).annotate({
      description: "Re-queue the tasks whose last call ended so: no_answer (dial_no_answer), busy (dial_busy), " +
        "voicemail (voicemail_reached), failed (the call failed or the carrier refused the dial). Default: all four."
    })
  )
}, { description: "svc extension: which outcomes to retry (all the retryable ones when omitted)." }) {}

/**
 * The retry body as it arrives: an object, or `null`/nothing, which mean `{}` (every retryable outcome).
 *
 * @category schemas
 */
export const RetryBatchCallBody = nullMeansEmpty(RetryBatchCallRequest)

/**
 * Most calls a task may have in all, retried automatically or on demand (decision 0551): `1 + max_retries` of the
 * batch's retry policy when it has one (so the policy's bound holds whoever asks), else `1 + maxRetries` (11), the
 * most any policy allows.
 *
 * @category combinators
 */
export const retryCallCap = (policyMaxRetries: number | undefined): number => 1 + (policyMaxRetries ?? maxRetries)

/**
 * Tasks the retry did not re-queue although their last call ended with a requested outcome, by why.
 *
 * @category models
 */
export const NotRequeued = Schema.Struct({
  suppressed: NonNegativeInt.annotate({ description: "The number is on the org's suppression list." }),
  do_not_call: NonNegativeInt.annotate({ description: "The number is a do_not_call contact's." }),
  attempt_cap: NonNegativeInt.annotate({
    description: "The task has had its most calls: 1 + the retry policy's max_retries, or 11 without a policy."
  })
})

/**
 * What `POST /retry-batch-call/{batch_call_id}` answers.
 *
 * @category models
 */
export const BatchCallRetried = Schema.Struct({
  batch_call_id: BatchCallId,
  outcomes: Schema.Array(RetryOutcome).annotate({ description: "The outcomes retried." }),
  requeued_task_count: NonNegativeInt.annotate({
    description: "Tasks put back to pending, each to be dialled once more as a new call."
  }),
  not_requeued: NotRequeued,
  // the batch's progress after the retry, as get-batch-call answers it
  batch: BatchCallProgress
}).annotate({ identifier: "BatchCallRetried" })
/** @category models */
export type BatchCallRetried = typeof BatchCallRetried.Type
