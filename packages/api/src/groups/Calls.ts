/**
 * Calls in the vendor's paths and shapes (decision 0510; vendor-calls-facts 1), and a contact's history
 * (vendor-calls-facts 3): get-contact-by-phone and list-contact-conversations.
 */
import {
  Call,
  ListCallsBody,
  ListCallsResponse,
  ListContactConversationsResponse,
  UpdateCallBody
} from "@svc/domain/models/Call.ts"
import { Contact } from "@svc/domain/models/Contact.ts"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BadRequest, InternalServerError, NotFound, TooManyRequests, Unauthorized } from "../Errors.ts"

const callId = { call_id: Schema.String }

export class CallsGroup extends HttpApiGroup.make("calls")
  .add(
    HttpApiEndpoint.get("getCall", "/v2/get-call/:call_id", {
      params: callId,
      success: Call,
      error: [BadRequest, Unauthorized, NotFound, TooManyRequests, InternalServerError]
    }).annotate(OpenApi.Description, "A call of the org, ringing (registered), ongoing or finished"),
    HttpApiEndpoint.post("listCalls", "/v3/list-calls", {
      payload: [ListCallsBody, Schema.Null],
      success: ListCallsResponse,
      error: [BadRequest, Unauthorized, TooManyRequests, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "List calls: filters (AND), sort by start_timestamp, cursor or offset paging, total with include_total"
    ),
    HttpApiEndpoint.patch("updateCall", "/v2/update-call/:call_id", {
      params: callId,
      payload: UpdateCallBody,
      success: Call,
      error: [BadRequest, Unauthorized, NotFound, TooManyRequests, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "Replace a call's metadata (at most 50 kB as JSON). svc extension: opt_out true records that the callee opted " +
        "out and puts the call's number on the org's suppression list, in one transaction (accepted during the call)"
    ),
    HttpApiEndpoint.delete("deleteCall", "/v2/delete-call/:call_id", {
      params: callId,
      success: HttpApiSchema.NoContent,
      error: [BadRequest, Unauthorized, NotFound, TooManyRequests, InternalServerError]
    }).annotate(OpenApi.Description, "Delete a finished call (a call in progress is a 400)"),
    HttpApiEndpoint.get("getContactByPhone", "/get-contact-by-phone/:phone_number", {
      params: { phone_number: Schema.String },
      success: Contact,
      error: [BadRequest, Unauthorized, NotFound, TooManyRequests, InternalServerError]
    }).annotate(OpenApi.Description, "The org's contact with this E.164 number (keep + unencoded)"),
    HttpApiEndpoint.get("listContactConversations", "/list-contact-conversations/:contact_id", {
      params: { contact_id: Schema.String },
      query: { limit: Schema.optionalKey(Schema.String), pagination_key: Schema.optionalKey(Schema.String) },
      success: ListContactConversationsResponse,
      error: [BadRequest, Unauthorized, NotFound, TooManyRequests, InternalServerError]
    }).annotate(OpenApi.Description, "The contact's calls, newest first")
  )
{}
