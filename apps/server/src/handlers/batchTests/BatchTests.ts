/** GET /get-batch-test/{id} and GET /v2/list-batch-tests (spec: Endpoints). */
import { Api } from "@svc/api/Api.ts"
import { CurrentOrg } from "@svc/api/Authorization.ts"
import { badRequest, notFound } from "@svc/api/Errors.ts"
import { BatchTestsRepo } from "@svc/store/batchTests/index.ts"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"

/** @category layers */
export const layer = HttpApiBuilder.group(
  Api,
  "batchTests",
  Effect.fn(function*(handlers) {
    const repo = yield* BatchTestsRepo
    return handlers
      .handle("getBatchTest", ({ params }) =>
        Effect.gen(function*() {
          const { orgId } = yield* CurrentOrg
          return yield* repo.get(orgId, params.test_case_batch_job_id).pipe(
            Effect.catchTag("BatchTestNotFound", () =>
              Effect.fail(notFound(`test_case_batch_job_id ${params.test_case_batch_job_id} not found`)))
          )
        }))
      .handle("listBatchTests", ({ query }) =>
        Effect.gen(function*() {
          const { orgId } = yield* CurrentOrg
          return yield* repo.list(orgId, query).pipe(
            Effect.catchTag("InvalidPaginationKey", (error) => Effect.fail(badRequest(error.message)))
          )
        }))
  })
)
