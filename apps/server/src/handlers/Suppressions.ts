/**
 * `POST /create-suppression`, `POST /list-suppressions`, `DELETE /delete-suppression/{phone_number}` (svc
 * extensions; decision 0550). Org-scoped: another org's number is not on the caller's list (a 404 on delete). The
 * creation time is the server's clock. A number already listed is answered 200 with its stored row (201 when this
 * request put it there).
 */
import { Api } from "@svc/api/Api.ts"
import { CurrentOrg } from "@svc/api/Authorization.ts"
import { badRequest, notFound } from "@svc/api/Errors.ts"
import { ListSuppressionsBody, Suppression } from "@svc/domain/models/Suppression.ts"
import { SuppressionsRepo } from "@svc/store/suppressions/SuppressionsRepo.ts"
import { Clock, Effect, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"

const emptyList = Schema.decodeUnknownSync(ListSuppressionsBody)({})
const encodeSuppression = Schema.encodeSync(Suppression)

/** @category layers */
export const layer = HttpApiBuilder.group(
  Api,
  "suppressions",
  Effect.fn(function*(handlers) {
    const repo = yield* SuppressionsRepo
    return handlers
      .handle("createSuppression", ({ payload }) =>
        Effect.gen(function*() {
          const { orgId } = yield* CurrentOrg
          const now = yield* Clock.currentTimeMillis
          const written = yield* repo.create(orgId, payload, now)
          // the success schemas differ only by status: the response is made here, with the row's own encoding
          return HttpServerResponse.jsonUnsafe(encodeSuppression(written.suppression), {
            status: written.created ? 201 : 200
          })
        }))
      .handle("listSuppressions", ({ payload }) =>
        Effect.gen(function*() {
          const { orgId } = yield* CurrentOrg
          return yield* repo.list(orgId, payload ?? emptyList).pipe(
            Effect.catchTag("SuppressionKeyInvalid", (error) => Effect.fail(badRequest(error.message)))
          )
        }))
      .handle("deleteSuppression", ({ params }) =>
        Effect.gen(function*() {
          const { orgId } = yield* CurrentOrg
          return yield* repo.delete(orgId, params.phone_number).pipe(
            Effect.catchTag("SuppressionNotFound", (error) => Effect.fail(notFound(error.message)))
          )
        }))
  })
)
