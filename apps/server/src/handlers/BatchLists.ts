/**
 * `POST /list-batch-calls` and `POST /list-batch-call-tasks/{batch_call_id}` (svc extensions;
 * decision 0548). Org-scoped: another org's batch is a 404, exactly as one that does not exist (as get-batch-call).
 * A refused `pagination_key` is a 400 naming it. The time (progress, next attempts) is the server's clock. Each
 * listed batch's legal hours are explained here, as get-batch-call's (`progressOf`, dependency rule 3).
 */
import { Api } from "@svc/api/Api.ts"
import { CurrentOrg } from "@svc/api/Authorization.ts"
import { badRequest, notFound } from "@svc/api/Errors.ts"
import { progressOf } from "@svc/domain/compliance/BatchProgressLegalHours.ts"
import { ListBatchCallsBody, ListBatchCallTasksBody } from "@svc/domain/models/BatchCallLists.ts"
import { BatchCallId } from "@svc/domain/models/Ids.ts"
import { BatchCallLists } from "@svc/store/batches/BatchCallLists.ts"
import { Clock, Effect, Schema } from "effect"
import { HttpApiBuilder } from "effect/http-api"

const emptyBatchCalls = Schema.decodeUnknownSync(ListBatchCallsBody)({})
const emptyTasks = Schema.decodeUnknownSync(ListBatchCallTasksBody)({})

const refusedKey = (error: { readonly message: string }) => Effect.fail(badRequest(error.message))

/** @category layers */
export const layer = HttpApiBuilder.group(
  Api,
  "batchLists",
  Effect.fn(function*(handlers) {
    const lists = yield* BatchCallLists
    return handlers
      .handle("listBatchCalls", ({ payload }) =>
        Effect.gen(function*() {
          const { orgId } = yield* CurrentOrg
          const now = yield* Clock.currentTimeMillis
          return yield* lists.batchCalls(orgId, payload ?? emptyBatchCalls, now).pipe(
            Effect.map((page) => ({ ...page, items: page.items.map(progressOf) })),
            Effect.catchTag("BatchListKeyInvalid", refusedKey)
          )
        }))
      .handle("listBatchCallTasks", ({ params, payload }) =>
        Effect.gen(function*() {
          const { orgId } = yield* CurrentOrg
          const now = yield* Clock.currentTimeMillis
          // the path is IdText (1 to 255 characters), the brand's own check: make never refuses what it decoded
          return yield* lists.tasks(orgId, BatchCallId.make(params.batch_call_id), payload ?? emptyTasks, now).pipe(
            Effect.catchTags({
              BatchListKeyInvalid: refusedKey,
              BatchCallNotFound: (error) => Effect.fail(notFound(error.message))
            })
          )
        }))
  })
)
