/**
 * `POST /retry-batch-call/{batch_call_id}` (decision 0551; svc extension). Org-scoped: another org's batch is a 404,
 * exactly as one that does not exist; a cancelled batch is a 409. The answer carries the batch's progress read after
 * the retry committed (as get-batch-call answers it, its legal hours explained here: `progressOf`, dependency rule 3).
 * The time is the server's clock.
 */
import { Api } from "@svc/api/Api.ts"
import { CurrentOrg } from "@svc/api/Authorization.ts"
import { conflict, notFound } from "@svc/api/Errors.ts"
import { progressOf } from "@svc/domain/compliance/BatchProgressLegalHours.ts"
import { retryOutcomes } from "@svc/domain/models/BatchRetry.ts"
import { BatchCallId } from "@svc/domain/models/Ids.ts"
import { BatchProgressRepo } from "@svc/store/batches/BatchProgressRepo.ts"
import { BatchRetry } from "@svc/store/batches/BatchRetry.ts"
import { Clock, Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"

/** @category layers */
export const layer = HttpApiBuilder.group(
  Api,
  "batchRetry",
  Effect.fn(function*(handlers) {
    const retry = yield* BatchRetry
    const progress = yield* BatchProgressRepo
    const missing = (error: { readonly message: string }) => Effect.fail(notFound(error.message))
    return handlers.handle("retryBatchCall", ({ params, payload }) =>
      Effect.gen(function*() {
        const { orgId } = yield* CurrentOrg
        const now = yield* Clock.currentTimeMillis
        const outcomes = payload?.outcomes ?? retryOutcomes
        // The path's batch_call_id is decoded as unbranded IdText (the OpenAPI stays as it is), so it is branded here.
        const batchCallId = BatchCallId.make(params.batch_call_id)
        const result = yield* retry.retry(orgId, batchCallId, outcomes, now).pipe(
          Effect.catchTags({
            BatchCallNotFound: missing,
            BatchCallCancelled: (error) => Effect.fail(conflict(error.message))
          })
        )
        const batch = yield* progress.get(orgId, batchCallId, now).pipe(
          Effect.map(progressOf),
          Effect.catchTag("BatchCallNotFound", missing)
        )
        return {
          batch_call_id: BatchCallId.make(params.batch_call_id),
          outcomes: [...new Set(outcomes)],
          requeued_task_count: result.requeued,
          not_requeued: {
            suppressed: result.suppressed,
            do_not_call: result.doNotCall,
            attempt_cap: result.attemptCap
          },
          batch
        }
      }))
  })
)
