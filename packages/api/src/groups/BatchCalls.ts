/** Batch outbound calls (spec: POST /create-batch-call). No 429: the spec does not list it here. */
import { BatchCall, CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Authorization } from "../Authorization.ts"
import { BadRequest, InternalServerError, NotFound, Unauthorized } from "../Errors.ts"
import { InputRules } from "../InputRules.ts"

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
  // first added, innermost: runs after the key check, so nothing of an unauthenticated request is read
  .middleware(InputRules)
  .middleware(Authorization)
{}
