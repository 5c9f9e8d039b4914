/**
 * Batch progress and control (decisions 0532, 0533, 0549): svc extensions beyond the vendor's API, which has only
 * create-batch-call. Each operation carries `x-svc-extension: true` in the OpenAPI document, so a client generated
 * from the vendor's spec knows not to expect them there. Their own group (tag `batchProgress`) keeps the handlers
 * apart from create-batch-call's (handlers/BatchProgress.ts).
 */
import { BatchCallProgress } from "@svc/domain/models/BatchCallProgress.ts"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BadRequest, Conflict, InternalServerError, NotFound, TooManyRequests, Unauthorized } from "../Errors.ts"

const batchCallId = { batch_call_id: Schema.String }

/** The OpenAPI mark of an endpoint the vendor does not have. */
export const svcExtension = { "x-svc-extension": true } as const

export class BatchProgressGroup extends HttpApiGroup.make("batchProgress")
  .add(
    HttpApiEndpoint.get("getBatchCall", "/get-batch-call/:batch_call_id", {
      params: batchCallId,
      success: BatchCallProgress,
      error: [BadRequest, Unauthorized, NotFound, TooManyRequests, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "svc extension: a batch call's progress: tasks per state, calls placed and in flight, the next opening of " +
        "its call window, its estimated or actual completion time"
    ).annotate(OpenApi.Override, svcExtension),
    HttpApiEndpoint.post("cancelBatchCall", "/cancel-batch-call/:batch_call_id", {
      params: batchCallId,
      success: BatchCallProgress,
      error: [BadRequest, Unauthorized, NotFound, TooManyRequests, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "svc extension: cancel a batch call: its pending tasks are cancelled, calls in progress finish and are " +
        "recorded; idempotent (a cancelled or completed batch is answered as it is)"
    ).annotate(OpenApi.Override, svcExtension),
    HttpApiEndpoint.post("pauseBatchCall", "/pause-batch-call/:batch_call_id", {
      params: batchCallId,
      success: BatchCallProgress,
      error: [BadRequest, Unauthorized, NotFound, Conflict, TooManyRequests, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "svc extension: pause a batch call: once this answers (status paused), no new call of the batch starts on " +
        "any worker; calls in progress finish and are recorded; pending tasks wait. Idempotent; a completed or " +
        "cancelled batch answers 409"
    ).annotate(OpenApi.Override, svcExtension),
    HttpApiEndpoint.post("resumeBatchCall", "/resume-batch-call/:batch_call_id", {
      params: batchCallId,
      success: BatchCallProgress,
      error: [BadRequest, Unauthorized, NotFound, Conflict, TooManyRequests, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "svc extension: resume a paused batch call: back to scheduled or in_progress, its pending tasks dialled as " +
        "before (windows, legal hours, caps apply; no task is dialled twice). Idempotent on a running batch; a " +
        "completed or cancelled batch answers 409"
    ).annotate(OpenApi.Override, svcExtension)
  )
{}
