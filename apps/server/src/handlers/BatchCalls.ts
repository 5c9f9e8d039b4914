/**
 * POST /create-batch-call (spec). Statuses: 400, 401, 404, 500 only (no 429). A from_number the org
 * does not own, or an override agent it does not have, is the spec's 404 "not found under the
 * given key". `Idempotency-Key` and the vendor client's `X-Stainless-Retry-Count` make retries
 * return the first batch (design: retries of create-batch-call).
 */
import { Api } from "@svc/api/Api.ts"
import { CurrentOrg } from "@svc/api/Authorization.ts"
import { badRequest, notFound } from "@svc/api/Errors.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { BatchCallsRepo } from "@svc/store/BatchCallsRepo.ts"
import { Config, Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"

/** Maximum tasks per batch (design: configurable, default 100,000). */
export const MaxTasks = Config.withDefault(Config.Int("SVC_MAX_TASKS_PER_BATCH"), 100_000)

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/

/** @category layers */
export const layer = HttpApiBuilder.group(
  Api,
  "batchCalls",
  Effect.fn(function*(handlers) {
    const repo = yield* BatchCallsRepo
    const maxTasks = yield* MaxTasks
    return handlers.handle("createBatchCall", ({ payload }) =>
      Effect.gen(function*() {
        const { apiKeyId, orgId } = yield* CurrentOrg
        const request = yield* HttpServerRequest.HttpServerRequest
        const idempotencyKey = request.headers["idempotency-key"]
        if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
          return yield* badRequest("Idempotency-Key must be 1 to 255 visible ASCII characters")
        }
        const retries = Number(request.headers["x-stainless-retry-count"] ?? "0")
        return yield* repo.create(OrgId.make(orgId), apiKeyId, payload, {
          idempotencyKey,
          retryCount: Number.isInteger(retries) && retries > 0 ? retries : 0,
          maxTasks
        }).pipe(
          Effect.catchTags({
            FromNumberNotOwned: (error) => Effect.fail(notFound(error.message)),
            AgentNotFound: (error) => Effect.fail(notFound(error.message)),
            TooManyTasks: (error) => Effect.fail(badRequest(error.message)),
            NoTasks: (error) => Effect.fail(badRequest(error.message)),
            IdempotencyKeyReused: (error) => Effect.fail(badRequest(error.message)),
            UnstorableText: (error) => Effect.fail(badRequest(error.message))
          })
        )
      }))
  })
)
