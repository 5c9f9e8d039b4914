/**
 * The five error responses of the spec (Errors): every one is `{"status":"error","message":...}`
 * on the wire, distinguished only by the HTTP status. Each endpoint declares exactly the statuses
 * the spec lists for it (create-batch-call has no 429).
 */
import { Schema } from "effect"

const fields = {
  status: Schema.Literal("error"),
  message: Schema.String
}

/** 400: the request format is invalid; the message names the field and the rule. @category errors */
export class BadRequest extends Schema.Error<BadRequest>("BadRequest")(fields, {
  httpApiStatus: 400,
  description: "The request format is invalid; the message names the field and the rule"
}) {}

/** 401: the API key is missing or invalid. @category errors */
export class Unauthorized extends Schema.Error<Unauthorized>("Unauthorized")(fields, {
  httpApiStatus: 401,
  description: "The API key is missing or invalid"
}) {}

/** 404: the referenced resource is not found (create-batch-call: the asset under the key). @category errors */
export class NotFound extends Schema.Error<NotFound>("NotFound")(fields, {
  httpApiStatus: 404,
  description: "The referenced resource was not found under this API key"
}) {}

/**
 * 409: the resource is in a state that does not allow the operation (svc extensions only, e.g. pausing a cancelled
 * batch: decision 0549). No endpoint of the vendor's spec answers it: its clients retry a 409, which
 * create-batch-call's conflicts must not invite (they are 400s, design "never 408/409").
 * @category errors
 */
export class Conflict extends Schema.Error<Conflict>("Conflict")(fields, {
  httpApiStatus: 409,
  description: "The resource's state does not allow the operation; the message says which state and why"
}) {}

/** 429: the account is rate limited; `Retry-After` says when to retry. @category errors */
export class TooManyRequests extends Schema.Error<TooManyRequests>("TooManyRequests")(fields, {
  httpApiStatus: 429,
  description: "The account is rate limited; retry after the Retry-After header's seconds"
}) {}

/** 500: unexpected server failure; the message carries a request id found in the logs. @category errors */
export class InternalServerError extends Schema.Error<InternalServerError>("InternalServerError")(fields, {
  httpApiStatus: 500,
  description: "Unexpected server error; the message carries a request id for the logs"
}) {}

/** @category constructors */
export const badRequest = (message: string) => new BadRequest({ status: "error", message })
/** @category constructors */
export const unauthorized = (message: string) => new Unauthorized({ status: "error", message })
/** @category constructors */
export const notFound = (message: string) => new NotFound({ status: "error", message })
/** @category constructors */
export const conflict = (message: string) => new Conflict({ status: "error", message })
/** @category constructors */
export const internal = (message: string) => new InternalServerError({ status: "error", message })
