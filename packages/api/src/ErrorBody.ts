/**
 * The one error body of the API (spec: Errors): `{"status":"error","message":"..."}`, for every
 * status of every endpoint and for unknown routes. Produced here, in one place, so no handler can
 * invent another shape.
 */
import { Schema } from "effect"

/**
 * @category schemas
 */
export const ErrorBody = Schema.Struct({
  status: Schema.Literal("error"),
  message: Schema.String
}).annotate({ identifier: "ErrorBody", description: "Every error response: a sentence a person can act on" })

/** @category models */
export type ErrorBody = typeof ErrorBody.Type

/**
 * @category constructors
 */
export const make = (message: string): ErrorBody => ({ status: "error", message })
