/**
 * `GET /get-batch-call/{batch_call_id}`, `POST /cancel-batch-call/{batch_call_id}`, `POST /pause-batch-call/{id}` and
 * `POST /resume-batch-call/{id}` (decisions 0532, 0533, 0549; svc extensions). Org-scoped: a batch of another org is a 404, exactly as one that does not exist, so ids cannot be
 * probed across orgs. The time is the server's clock (the window's next opening, the completion estimate, the
 * cancel's timestamp). The repository answers the progress as stored; its legal hours are explained here, by the
 * domain (`progressOf`: a compliance decision the store does not run, dependency rule 3).
 */
import { Api } from "@svc/api/Api.ts"
import { CurrentOrg } from "@svc/api/Authorization.ts"
import { conflict, notFound } from "@svc/api/Errors.ts"
import { progressOf } from "@svc/domain/compliance/BatchProgressLegalHours.ts"
import type { BatchCallId } from "@svc/domain/models/Ids.ts"
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
    // decision 0549: pausing or resuming a completed or cancelled batch is a 409 naming its status
    const finished = (error: { readonly message: string }) => Effect.fail(conflict(error.message))
    // The path's batch_call_id is a plain Schema.String (the OpenAPI stays as it is): branded here by a cast, not
    // BatchCallId.make, whose length check would turn the 404 of an over-long id into a defect.
    const batchCallIdOf = (id: string) => id as BatchCallId
    return handlers
      .handle("getBatchCall", ({ params }) =>
        Effect.gen(function*() {
          const { orgId } = yield* CurrentOrg
          const now = yield* Clock.currentTimeMillis
          return yield* repo.get(orgId, batchCallIdOf(params.batch_call_id), now).pipe(
            Effect.map(progressOf),
            Effect.catchTag("BatchCallNotFound", missing)
          )
        }))
      .handle("cancelBatchCall", ({ params }) =>
        Effect.gen(function*() {
          const { orgId } = yield* CurrentOrg
          const now = yield* Clock.currentTimeMillis
          return yield* repo.cancel(orgId, batchCallIdOf(params.batch_call_id), now).pipe(
            Effect.map(progressOf),
            Effect.catchTag("BatchCallNotFound", missing)
          )
        }))
      .handle("pauseBatchCall", ({ params }) =>
        Effect.gen(function*() {
          const { orgId } = yield* CurrentOrg
          const now = yield* Clock.currentTimeMillis
          const progress = yield* repo.pause(orgId, batchCallIdOf(params.batch_call_id), now).pipe(
            Effect.map(progressOf),
            Effect.catchTag("BatchCallNotFound", missing),
            Effect.catchTag("BatchCallNotRunning", finished)
          )
          // operators follow campaign control in the logs (decision 0549); the route's request counter counts them
          yield* Effect.logInfo("batch call paused").pipe(
            Effect.annotateLogs({ org_id: orgId, batch_call_id: params.batch_call_id, status: progress.status })
          )
          return progress
        }))
      .handle("resumeBatchCall", ({ params }) =>
        Effect.gen(function*() {
          const { orgId } = yield* CurrentOrg
          const now = yield* Clock.currentTimeMillis
          const progress = yield* repo.resume(orgId, batchCallIdOf(params.batch_call_id), now).pipe(
            Effect.map(progressOf),
            Effect.catchTag("BatchCallNotFound", missing),
            Effect.catchTag("BatchCallNotRunning", finished)
          )
          // operators follow campaign control in the logs (decision 0549); the route's request counter counts them
          yield* Effect.logInfo("batch call resumed").pipe(
            Effect.annotateLogs({ org_id: orgId, batch_call_id: params.batch_call_id, status: progress.status })
          )
          return progress
        }))
  })
)
