/**
 * POST /list-contacts (spec) and the contact companions in the vendor's shapes: create (one contact
 * per phone number per org; a duplicate is a 400), get, update, delete. The org always comes from
 * the API key; an id of another org's contact is simply not found.
 */
import { Api } from "@svc/api/Api.ts"
import { CurrentOrg } from "@svc/api/Authorization.ts"
import { badRequest, notFound } from "@svc/api/Errors.ts"
import { ContactId } from "@svc/domain/models/Ids.ts"
import { ListContactsBody } from "@svc/domain/models/ListContacts.ts"
import { ContactsRepo } from "@svc/store/contacts/ContactsRepo.ts"
import { Effect, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"

const emptyListRequest = Schema.decodeUnknownSync(ListContactsBody)({})

const missing = (id: string) => notFound(`contact_id ${id} not found`)

/** @category layers */
export const layer = HttpApiBuilder.group(
  Api,
  "contacts",
  Effect.fn(function*(handlers) {
    const repo = yield* ContactsRepo
    // The path's contact_id is decoded as unbranded IdText (the OpenAPI stays as it is): ContactId.make adds the brand
    // and checks what IdText has already checked.
    return handlers
      .handle(
        "listContacts",
        ({ payload }) =>
          Effect.flatMap(CurrentOrg, ({ orgId }) =>
            repo.listJson(orgId, payload ?? emptyListRequest).pipe(
              // The body is already the JSON of the success schema's encoding (decision 0641): returned as the
              // response the builder would make of it (its JSON encoding: status 200, application/json), it skips
              // the encode of every contact; every middleware still runs around it.
              Effect.map((body) => HttpServerResponse.text(body, { contentType: "application/json" })),
              Effect.catchTag("InvalidPaginationKey", (error) => Effect.fail(badRequest(error.message)))
            ))
      )
      .handle(
        "createContact",
        ({ payload }) =>
          Effect.flatMap(CurrentOrg, ({ orgId }) =>
            repo.create(orgId, payload).pipe(
              Effect.catchTags({
                DuplicatePhoneNumber: (error) => Effect.fail(badRequest(error.message)),
                UnstorableText: (error) => Effect.fail(badRequest(error.message))
              })
            ))
      )
      .handle(
        "getContact",
        ({ params }) =>
          Effect.flatMap(CurrentOrg, ({ orgId }) =>
            repo.get(orgId, ContactId.make(params.contact_id)).pipe(
              Effect.catchTag("ContactNotFound", () => Effect.fail(missing(params.contact_id)))
            ))
      )
      .handle(
        "updateContact",
        ({ params, payload }) =>
          Effect.flatMap(CurrentOrg, ({ orgId }) =>
            repo.update(orgId, ContactId.make(params.contact_id), payload).pipe(
              Effect.catchTags({
                ContactNotFound: () => Effect.fail(missing(params.contact_id)),
                UnstorableText: (error) => Effect.fail(badRequest(error.message))
              })
            ))
      )
      .handle(
        "deleteContact",
        ({ params }) =>
          Effect.flatMap(CurrentOrg, ({ orgId }) =>
            repo.delete(orgId, ContactId.make(params.contact_id)).pipe(
              Effect.catchTag("ContactNotFound", () => Effect.fail(missing(params.contact_id)))
            ))
      )
  })
)
