/** Contacts (spec: POST /list-contacts) and the vendor's contact companions. */
import { Contact } from "@svc/domain/models/Contact.ts"
import { CreateContactRequest, UpdateContactRequest } from "@svc/domain/models/ContactInput.ts"
import { IdText } from "@svc/domain/models/Ids.ts"
import { ListContactsBody, ListContactsResponse } from "@svc/domain/models/ListContacts.ts"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BadRequest, InternalServerError, NotFound, TooManyRequests, Unauthorized } from "../Errors.ts"

// decision 0105: a path id follows the id rules (1 to 255 characters)
const contactId = { contact_id: IdText }

export class ContactsGroup extends HttpApiGroup.make("contacts")
  .add(
    HttpApiEndpoint.post("listContacts", "/list-contacts", {
      // The second schema only tells the builder that an empty body decodes as JSON null, which
      // ListContactsBody already reads as {} (design: null or empty body = {}).
      payload: [ListContactsBody, Schema.Null],
      success: ListContactsResponse,
      error: [BadRequest, Unauthorized, TooManyRequests, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "List contacts: filters (AND), search, sort, cursor or offset paging, exact total"
    ),
    HttpApiEndpoint.post("createContact", "/create-contact", {
      payload: CreateContactRequest,
      success: Contact.pipe(HttpApiSchema.status(201)),
      error: [BadRequest, Unauthorized, TooManyRequests, InternalServerError]
    }),
    HttpApiEndpoint.get("getContact", "/get-contact/:contact_id", {
      params: contactId,
      success: Contact,
      error: [BadRequest, Unauthorized, NotFound, TooManyRequests, InternalServerError]
    }),
    HttpApiEndpoint.patch("updateContact", "/update-contact/:contact_id", {
      params: contactId,
      payload: UpdateContactRequest,
      success: Contact,
      error: [BadRequest, Unauthorized, NotFound, TooManyRequests, InternalServerError]
    }),
    HttpApiEndpoint.delete("deleteContact", "/delete-contact/:contact_id", {
      params: contactId,
      success: HttpApiSchema.NoContent,
      error: [BadRequest, Unauthorized, NotFound, TooManyRequests, InternalServerError]
    })
  )
{}
