/** Contact-analysis backfill (spec: POST /backfill-contact-analysis-data) and its status companion. */
import { BackfillContactAnalysisDataRequest, BackfillJobStatus } from "@svc/domain/models/BackfillJob.ts"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BadRequest, InternalServerError, TooManyRequests, Unauthorized } from "../Errors.ts"

export class BackfillGroup extends HttpApiGroup.make("backfill")
  .add(
    HttpApiEndpoint.post("backfillContactAnalysisData", "/backfill-contact-analysis-data", {
      payload: BackfillContactAnalysisDataRequest,
      success: BackfillJobStatus,
      error: [BadRequest, Unauthorized, TooManyRequests, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "Start the org's backfill job (queued); while one is queued or running, returns that job's status"
    ),
    HttpApiEndpoint.get("getBackfillContactJobStatus", "/get-backfill-contact-job-status", {
      success: BackfillJobStatus,
      // 400: a query parameter sent (it takes none: decision 0105)
      error: [BadRequest, Unauthorized, TooManyRequests, InternalServerError]
    })
  )
{}
