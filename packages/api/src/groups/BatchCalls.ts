/** Batch outbound calls (spec: POST /create-batch-call). No 429: the spec does not list it here. */
import { BatchCall, CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BadRequest, InternalServerError, NotFound, Unauthorized } from "../Errors.ts"

/**
 * The two request headers create-batch-call reads (apps/server handlers/BatchCalls.ts; docs/api.md, "Size and
 * retries of create-batch-call"), declared in the OpenAPI document. Declared as document parameters, not as a
 * `headers` schema of the endpoint: a schema would make Effect's typed client require a `headers` object on every
 * call (a breaking change for its users), and the handler checks the key's form itself, answering 400 in the error
 * shape as the spec's statuses allow.
 */
const headerParameters = [
  {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[!-~]+$" },
    description:
      "A retry with the same key and body within 24 h answers the first batch; the same key with another body is a 400"
  },
  {
    name: "X-Stainless-Retry-Count",
    in: "header",
    required: false,
    schema: { type: "string" },
    description:
      "Sent by the vendor's generated clients: above 0 without Idempotency-Key, an identical body from the same API key within 10 minutes answers the first batch"
  }
]

export class BatchCallsGroup extends HttpApiGroup.make("batchCalls")
  .add(
    HttpApiEndpoint.post("createBatchCall", "/create-batch-call", {
      payload: CreateBatchCallRequest,
      success: BatchCall,
      error: [BadRequest, Unauthorized, NotFound, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "Create a batch of outbound calls from an owned number; honours Idempotency-Key"
    ).annotate(OpenApi.Transform, (operation) => ({
      ...operation,
      parameters: [...(operation["parameters"] ?? []), ...headerParameters]
    }))
  )
{}
