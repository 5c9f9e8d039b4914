/** Batch test jobs (spec: GET /get-batch-test/{id}, GET /v2/list-batch-tests). */
import { IdText } from "@svc/domain/models/Ids.ts"
import { ListBatchTestsQuery, ListBatchTestsResponse } from "@svc/domain/models/ListBatchTests.ts"
import { TestCaseBatchJob } from "@svc/domain/models/TestCaseBatchJob.ts"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { BadRequest, InternalServerError, NotFound, TooManyRequests, Unauthorized } from "../Errors.ts"

export class BatchTestsGroup extends HttpApiGroup.make("batchTests")
  .add(
    HttpApiEndpoint.get("getBatchTest", "/get-batch-test/:test_case_batch_job_id", {
      // decision 0105: a path id follows the id rules (1 to 255 characters)
      params: { test_case_batch_job_id: IdText },
      success: TestCaseBatchJob,
      error: [BadRequest, Unauthorized, NotFound, TooManyRequests, InternalServerError]
    }),
    HttpApiEndpoint.get("listBatchTests", "/v2/list-batch-tests", {
      query: ListBatchTestsQuery,
      success: ListBatchTestsResponse,
      error: [BadRequest, Unauthorized, TooManyRequests, InternalServerError]
    })
  )
{}
