/** Batch outbound calls (spec: POST /create-batch-call). No 429: the spec does not list it here. */
import { BatchCall, CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BadRequest, InternalServerError, NotFound, Unauthorized } from "../Errors.ts"

export class BatchCallsGroup extends HttpApiGroup.make("batchCalls")
  .add(
    HttpApiEndpoint.post("createBatchCall", "/create-batch-call", {
      payload: CreateBatchCallRequest,
      success: BatchCall,
      error: [BadRequest, Unauthorized, NotFound, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "Create a batch of outbound calls from an owned number; honours Idempotency-Key"
    )
  )
{}
