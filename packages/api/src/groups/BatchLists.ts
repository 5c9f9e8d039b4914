/**
 * Listing batch calls and a batch's tasks: svc extensions, marked `x-svc-extension: true` in the
 * OpenAPI document as get-batch-call and cancel-batch-call are (the vendor has no batch reads). Requests follow the
 * vendor's list conventions (limit, pagination_key, sort_order, filter_criteria; docs/decisions/0548).
 */
import {
  ListBatchCallsBody,
  ListBatchCallsResponse,
  ListBatchCallTasksBody,
  ListBatchCallTasksResponse
} from "@svc/domain/models/BatchCallLists.ts"
import { IdText } from "@svc/domain/models/Ids.ts"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BadRequest, InternalServerError, NotFound, TooManyRequests, Unauthorized } from "../Errors.ts"
import { svcExtension } from "./BatchProgress.ts"

export class BatchListsGroup extends HttpApiGroup.make("batchLists")
  .add(
    HttpApiEndpoint.post("listBatchCalls", "/list-batch-calls", {
      // as list-contacts: the second schema tells the builder that an empty body decodes as JSON null, which the
      // body schema reads as {}
      payload: [ListBatchCallsBody, Schema.Null],
      success: ListBatchCallsResponse,
      error: [BadRequest, Unauthorized, TooManyRequests, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "svc extension: the org's batch calls, each as get-batch-call answers it; filters status and " +
        "created_timestamp, newest first by default, cursor paged"
    ).annotate(OpenApi.Override, svcExtension),
    HttpApiEndpoint.post("listBatchCallTasks", "/list-batch-call-tasks/:batch_call_id", {
      params: { batch_call_id: IdText },
      payload: [ListBatchCallTasksBody, Schema.Null],
      success: ListBatchCallTasksResponse,
      error: [BadRequest, Unauthorized, NotFound, TooManyRequests, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "svc extension: a batch call's tasks in their order, each with its state, reason, calls, latest outcome and " +
        "next attempt; filter by state, cursor paged"
    ).annotate(OpenApi.Override, svcExtension)
  )
{}
