/**
 * The calls API and a contact's history. The org always comes from the API key; another
 * org's call or contact is not found. Shapes: vendor-calls-facts sections 1 and 3; choices: decisions 0510-0512.
 */
import { Api } from "@svc/api/Api.ts"
import { CurrentOrg } from "@svc/api/Authorization.ts"
import { badRequest, notFound } from "@svc/api/Errors.ts"
import { type Call, ListCallsBody } from "@svc/domain/models/Call.ts"
import { listCallsJson, readableCall } from "@svc/domain/models/CallJson.ts"
import type { CallId, ContactId } from "@svc/domain/models/Ids.ts"
import * as Pagination from "@svc/domain/Pagination.ts"
import { CallsApiRepo } from "@svc/store/calls/CallsApiRepo.ts"
import { ContactsRepo } from "@svc/store/contacts/ContactsRepo.ts"
import { CursorKeys } from "@svc/store/db/CursorKeys.ts"
import { Clock, Effect, Result, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"

const emptyListRequest = Schema.decodeUnknownSync(ListCallsBody)({})

const missing = (id: string) => notFound(`call_id ${id} not found`)

// call_json (migration 0012) returns exactly the Call shape; the response schema encodes it on the way out. A free-form
// member stored nested deeper than the request bodies' limit (before it existed) is shown as a marked error value
// instead of failing the answer (decision 0106)
const asCall = (json: unknown) => readableCall(json) as Call

const conversationLimit = (raw: string | undefined): number | string => {
  if (raw === undefined) return 50
  const n = Number(raw)
  return /^\d+$/.test(raw) && n >= 1 && n <= 1000 ? n : "limit must be an integer from 1 to 1000"
}

/** @category layers */
export const layer = HttpApiBuilder.group(
  Api,
  "calls",
  Effect.fn(function*(handlers) {
    const repo = yield* CallsApiRepo
    const contacts = yield* ContactsRepo
    const cursors = yield* CursorKeys
    // The paths' call_id and contact_id are plain Schema.String (the OpenAPI stays as it is): branded here by a cast,
    // not make, whose length check would turn the 404 of an over-long id into a defect.
    const callIdOf = (id: string) => id as CallId
    const contactIdOf = (id: string) => id as ContactId
    return handlers
      .handle(
        "getCall",
        ({ params }) =>
          Effect.flatMap(CurrentOrg, ({ orgId }) =>
            repo.get(orgId, callIdOf(params.call_id)).pipe(
              Effect.map(asCall),
              Effect.catchTag("CallNotFound", () => Effect.fail(missing(params.call_id)))
            ))
      )
      .handle(
        "listCalls",
        ({ payload }) =>
          Effect.flatMap(CurrentOrg, ({ orgId }) =>
            repo.list(orgId, payload ?? emptyListRequest).pipe(
              Effect.map((page) => {
                // The page's JSON as the success schema would encode it, without running the encoder over every
                // call (decision 0644), returned as the response the builder would make of it; a page holding a
                // value the fast path does not vouch for is encoded by the schema as before.
                const body = listCallsJson(page)
                return body === undefined
                  ? { ...page, items: page.items.map(asCall) }
                  : HttpServerResponse.text(body, { contentType: "application/json" })
              }),
              Effect.catchTag("CallsPaginationKeyInvalid", (error) => Effect.fail(badRequest(error.message)))
            ))
      )
      .handle(
        "updateCall",
        ({ params, payload }) =>
          Effect.gen(function*() {
            const { orgId } = yield* CurrentOrg
            const now = yield* Clock.currentTimeMillis
            return yield* repo.update(orgId, callIdOf(params.call_id), payload, now).pipe(
              Effect.map(asCall),
              Effect.catchTags({
                CallNotFound: () => Effect.fail(missing(params.call_id)),
                // decision 0552: the suppression list holds E.164 numbers only; nothing was written
                OptOutNotE164: (error) =>
                  Effect.fail(
                    badRequest(
                      `opt_out: call_id ${params.call_id} was placed to ${JSON.stringify(error.to_number)}, not an ` +
                        "E.164 number, and the suppression list holds E.164 numbers only; nothing was changed"
                    )
                  ),
                // spec deprecation schedule row 8: update-call became ended-calls-only on 2026-08-31
                CallInFlight: () =>
                  Effect.fail(
                    badRequest(
                      `call_id ${params.call_id} is in progress (registered or ongoing): update-call is for ended ` +
                        "calls only since 2026-08-31; use PATCH /v2/update-live-call/{call_id} for ongoing calls " +
                        "(not served by svc), or update this call after it has ended"
                    )
                  )
              })
            )
          })
      )
      .handle(
        "deleteCall",
        ({ params }) =>
          Effect.flatMap(CurrentOrg, ({ orgId }) =>
            repo.remove(orgId, callIdOf(params.call_id)).pipe(
              Effect.catchTags({
                CallNotFound: () => Effect.fail(missing(params.call_id)),
                CallInFlight: () =>
                  Effect.fail(
                    badRequest(
                      `call_id ${params.call_id} is in progress (registered or ongoing); delete it after it has ended`
                    )
                  )
              })
            ))
      )
      .handle(
        "getContactByPhone",
        ({ params }) =>
          Effect.flatMap(CurrentOrg, ({ orgId }) =>
            contacts.getByPhone(orgId, params.phone_number).pipe(
              Effect.catchTag(
                "ContactNotFound",
                () => Effect.fail(notFound(`no contact has phone_number ${params.phone_number}`))
              )
            ))
      )
      .handle("listContactConversations", ({ params, query }) =>
        Effect.gen(function*() {
          const { orgId } = yield* CurrentOrg
          const limit = conversationLimit(query.limit)
          if (typeof limit === "string") return yield* Effect.fail(badRequest(limit))
          const contact = yield* contacts.get(orgId, contactIdOf(params.contact_id)).pipe(
            Effect.catchTag("ContactNotFound", () => Effect.fail(notFound(`contact_id ${params.contact_id} not found`)))
          )
          // keys bound to the org and the contact (decision 0102)
          const context: Pagination.CursorContext = {
            orgId,
            queryFingerprint: Pagination.queryFingerprint({
              resource: "contact-conversations",
              contact: contact.contact_id
            })
          }
          let after: { sortValue: number; callId: string } | undefined
          if (query.pagination_key !== undefined && query.pagination_key !== "") {
            const decoded = cursors.decode(query.pagination_key, context)
            if (Result.isFailure(decoded)) return yield* Effect.fail(badRequest(decoded.failure.message))
            if (typeof decoded.success.sortValue !== "number") {
              return yield* Effect.fail(badRequest("pagination_key is not a list-contact-conversations key"))
            }
            after = { sortValue: decoded.success.sortValue, callId: decoded.success.id }
          }
          const page = yield* repo.conversations(orgId, contact.phone_number, limit, after)
          return {
            has_more: page.hasMore,
            items: page.items as never,
            ...(page.hasMore && page.last !== undefined
              ? { pagination_key: cursors.encode({ sortValue: page.last.sortValue, id: page.last.callId }, context) }
              : {})
          }
        }))
  })
)
