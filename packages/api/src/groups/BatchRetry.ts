/**
 * Retrying a batch's unanswered, busy, voicemail and failed recipients on demand (decision 0551): an svc extension,
 * marked `x-svc-extension: true` in the OpenAPI document like the other batch controls, in its own group (tag
 * `batchRetry`) so its handler stays apart from progress and control (handlers/BatchRetry.ts).
 */
import { BatchCallRetried, RetryBatchCallBody } from "@svc/domain/models/BatchRetry.ts"
import { IdText } from "@svc/domain/models/Ids.ts"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BadRequest, Conflict, InternalServerError, NotFound, TooManyRequests, Unauthorized } from "../Errors.ts"
import { svcExtension } from "./BatchProgress.ts"

export class BatchRetryGroup extends HttpApiGroup.make("batchRetry")
  .add(
    HttpApiEndpoint.post("retryBatchCall", "/retry-batch-call/:batch_call_id", {
      params: { batch_call_id: IdText },
      // as list-contacts: an empty body decodes as JSON null, which the body schema reads as {} (every outcome)
      payload: [RetryBatchCallBody, Schema.Null],
      success: BatchCallRetried,
      error: [BadRequest, Unauthorized, NotFound, Conflict, TooManyRequests, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "svc extension: re-queue the batch's tasks whose last call ended with one of outcomes (default: no_answer, " +
        "busy, voicemail, failed), except suppressed numbers, do_not_call contacts and tasks at their call cap; each " +
        "is dialled once more as a new call (its own call id and idempotency key) under the window, legal hours and " +
        "attempt caps. A completed batch runs again; a paused one stays paused; a cancelled one answers 409"
    ).annotate(OpenApi.Override, svcExtension)
  )
{}
