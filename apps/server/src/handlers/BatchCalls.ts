/**
 * POST /create-batch-call (spec). Statuses: 400, 401, 404, 500 only (no 429). A from_number the org
 * does not own, or an override agent it does not have, is the spec's 404 "not found under the
 * given key". `Idempotency-Key` and the vendor client's `X-Stainless-Retry-Count` make retries
 * return the first batch (design: retries of create-batch-call).
 *
 * The body is read as a stream (BatchCallBody.ts, decision 0303), not decoded whole by the framework: its tasks
 * are checked and stored a chunk at a time as they arrive. The endpoint's schema still describes the payload in
 * `/openapi.json`; the answers are those of decoding the whole body.
 */
import { Api } from "@svc/api/Api.ts"
import { CurrentOrg } from "@svc/api/Authorization.ts"
import { badRequest, notFound } from "@svc/api/Errors.ts"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import { Config, Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiError } from "effect/http-api"
import { BodyBudget } from "../middleware/BodyBudget.ts"
import { CurrentRequestBody, mediaType } from "../middleware/BodyLimits.ts"
import * as BatchCallBody from "./BatchCallBody.ts"

/** Maximum tasks per batch (design: configurable, default 100,000). */
export const MaxTasks = Config.withDefault(Config.Int("SVC_MAX_TASKS_PER_BATCH"), 100_000)

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/

/** @category layers */
export const layer = HttpApiBuilder.group(
  Api,
  "batchCalls",
  Effect.fn(function*(handlers) {
    const repo = yield* BatchCallsRepo
    const budget = yield* BodyBudget
    const maxTasks = yield* MaxTasks
    return handlers.handleRaw("createBatchCall", ({ request }) =>
      Effect.gen(function*() {
        const { apiKeyId, orgId } = yield* CurrentOrg
        // a body without a Content-Type is refused (BodyLimits from its headers, BatchCallBody from its bytes); an
        // empty one is read as JSON, as the framework reads it
        const declaredType = request.headers["content-type"]
        const contentType = mediaType(declaredType ?? "application/json")
        if (contentType !== "application/json") {
          // answered as the framework answers a payload it has no decoder for (ErrorResponses turns it into a 400)
          return HttpServerResponse.text(`Unsupported content-type: ${contentType}`, { status: 415 })
        }
        const idempotencyKey = request.headers["idempotency-key"]
        const retries = Number(request.headers["x-stainless-retry-count"] ?? "0")
        const allowance = yield* CurrentRequestBody
        const body = BatchCallBody.read(request.stream, {
          limit: allowance?.limit,
          // a declared length was taken from the budget whole; otherwise the bytes are taken as they arrive
          budget: allowance !== undefined && allowance.declared === undefined ? budget : undefined,
          undeclaredType: declaredType === undefined
        })
        // the header is checked once the body decoded, as when the framework decoded the body before the handler
        const head = Effect.flatMap(body.source.head, (fields) =>
          idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)
            ? Effect.fail(badRequest("Idempotency-Key must be 1 to 255 visible ASCII characters"))
            : Effect.succeed(fields))
        return yield* repo.createFrom(OrgId.make(orgId), apiKeyId, { tasks: body.source.tasks, head }, {
          idempotencyKey,
          retryCount: Number.isInteger(retries) && retries > 0 ? retries : 0,
          maxTasks,
          // the tasks' legal groups are the domain's decision, run here and fed by the create (dependency rule 3)
          legalGrouper: () =>
            new LegalGrouper()
        }).pipe(
          Effect.ensuring(Effect.suspend(() =>
            budget.release(body.taken())
          )),
          Effect.catchTags({
            FromNumberNotOwned: (error) => Effect.fail(notFound(error.message)),
            AgentNotFound: (error) => Effect.fail(notFound(error.message)),
            TooManyTasks: (error) => Effect.fail(badRequest(error.message)),
            NoTasks: (error) => Effect.fail(badRequest(error.message)),
            IdempotencyKeyReused: (error) => Effect.fail(badRequest(error.message)),
            UnstorableText: (error) => Effect.fail(badRequest(error.message)),
            BodyRefused: (error) => Effect.fail(badRequest(error.message)),
            // the framework's own failure for an undecodable payload, so ErrorResponses words it as before
            InvalidBody: (error) =>
              Effect.die(new HttpApiError.HttpApiSchemaError({ kind: "Payload", cause: error.error })),
            BodyReadFailed: (error) => Effect.die(error.cause),
            // answered by BodyLimits: 400 naming the limit, 503 with Retry-After
            RequestBodyTooLarge: Effect.die,
            RequestBodyBudgetExhausted: Effect.die
          })
        )
      }))
  })
)
