/**
 * `POST /list-webhook-deliveries` (svc extension, decision 0800): the org's deliveries, failing first, from the outbox
 * (packages/store/src/webhooks/WebhookDeliveryList.ts). A refused `pagination_key` is a 400 naming why.
 */
import { Api } from "@svc/api/Api.ts"
import { CurrentOrg } from "@svc/api/Authorization.ts"
import { badRequest } from "@svc/api/Errors.ts"
import { ListWebhookDeliveriesBody } from "@svc/api/groups/WebhookDeliveries.ts"
import { WebhookDeliveryList } from "@svc/store/webhooks/WebhookDeliveryList.ts"
import { Effect, Schema } from "effect"
import { HttpApiBuilder } from "effect/http-api"

const emptyRequest = Schema.decodeUnknownSync(ListWebhookDeliveriesBody)({})

/** @category layers */
export const layer = HttpApiBuilder.group(
  Api,
  "webhookDeliveries",
  Effect.fn(function*(handlers) {
    const deliveries = yield* WebhookDeliveryList
    return handlers.handle("listWebhookDeliveries", ({ payload }) =>
      Effect.gen(function*() {
        const { orgId } = yield* CurrentOrg
        const request = payload ?? emptyRequest
        return yield* deliveries.list(orgId, {
          limit: request.limit,
          paginationKey: request.pagination_key,
          callIds: request.filter_criteria?.call_id?.value,
          states: request.filter_criteria?.state?.value
        }).pipe(Effect.catchTag("DeliveryListKeyInvalid", (error) => Effect.fail(badRequest(error.message))))
      }))
  })
)
