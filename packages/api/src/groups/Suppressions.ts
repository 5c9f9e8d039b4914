/**
 * An org's suppression (do-not-call) list: svc extensions, marked `x-svc-extension: true` in the OpenAPI document
 * (the vendor has none; decision 0550). create-suppression answers 201 with the new row, or 200 with the row as
 * stored when the number was already listed (idempotent: the stored reason and source are kept); delete answers 204
 * as delete-contact does, and 404 when the number is not on the caller's list.
 */
import { E164 } from "@svc/domain/models/E164.ts"
import {
  CreateSuppressionRequest,
  ListSuppressionsBody,
  ListSuppressionsResponse,
  Suppression
} from "@svc/domain/models/Suppression.ts"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BadRequest, InternalServerError, NotFound, TooManyRequests, Unauthorized } from "../Errors.ts"
import { svcExtension } from "./BatchProgress.ts"

export class SuppressionsGroup extends HttpApiGroup.make("suppressions")
  .add(
    HttpApiEndpoint.post("createSuppression", "/create-suppression", {
      payload: CreateSuppressionRequest,
      success: [Suppression.pipe(HttpApiSchema.status(201)), Suppression.pipe(HttpApiSchema.status(200))],
      error: [BadRequest, Unauthorized, TooManyRequests, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "svc extension: puts a number on the org's suppression list (no task to it is dialled once this has " +
        "answered; it ends skipped, suppressed (<source>)). 201 with the new row; 200 with the stored row, unchanged, " +
        "when the number was already listed"
    ).annotate(OpenApi.Override, svcExtension),
    HttpApiEndpoint.post("listSuppressions", "/list-suppressions", {
      // as list-contacts: the second schema tells the builder that an empty body decodes as JSON null, which the
      // body schema reads as {}
      payload: [ListSuppressionsBody, Schema.Null],
      success: ListSuppressionsResponse,
      error: [BadRequest, Unauthorized, TooManyRequests, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "svc extension: the org's suppressed numbers in number order; search by the beginning of the number; cursor paged"
    ).annotate(OpenApi.Override, svcExtension),
    HttpApiEndpoint.delete("deleteSuppression", "/delete-suppression/:phone_number", {
      params: { phone_number: E164 },
      success: HttpApiSchema.NoContent,
      error: [BadRequest, Unauthorized, NotFound, TooManyRequests, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "svc extension: takes a number off the org's suppression list; 404 when it is not on it"
    ).annotate(OpenApi.Override, svcExtension)
  )
{}
