/**
 * `GET /get-batch-call/{batch_call_id}` and `POST /cancel-batch-call/{batch_call_id}` (decisions 0532, 0533; svc
 * extensions). Org-scoped: a batch of another org is a 404, exactly as one that does not exist, so ids cannot be
 * probed across orgs. The time is the server's clock (the window's next opening, the completion estimate, the
 * cancel's timestamp).
 */
import { Api } from "@svc/api/Api.ts"
import { CurrentOrg } from "@svc/api/Authorization.ts"
import { notFound } from "@svc/api/Errors.ts"
import { BatchProgressRepo } from "@svc/store/batches/BatchProgressRepo.ts"
import { Clock, Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"

/** @category layers */
export const layer = HttpApiBuilder.group(
  Api,
  "batchProgress",
  Effect.fn(function*(handlers) {
    const repo = yield* BatchProgressRepo
    const missing = (error: { readonly message: string }) => Effect.fail(notFound(error.message))
    return handlers
      .handle("getBatchCall", ({ params }) =>
        Effect.gen(function*() {
          const { orgId } = yield* CurrentOrg
          const now = yield* Clock.currentTimeMillis
          return yield* repo.get(orgId, params.batch_call_id, now).pipe(
            Effect.catchTag("BatchCallNotFound", missing)
          )
        }))
      .handle("cancelBatchCall", ({ params }) =>
        Effect.gen(function*() {
          const { orgId } = yield* CurrentOrg
          const now = yield* Clock.currentTimeMillis
          return yield* repo.cancel(orgId, params.batch_call_id, now).pipe(
            Effect.catchTag("BatchCallNotFound", missing)
          )
        }))
  })
)
