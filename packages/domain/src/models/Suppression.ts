/**
 * An org's suppression (do-not-call) list (decision 0550; svc extensions `POST /create-suppression`,
 * `POST /list-suppressions`, `DELETE /delete-suppression/{phone_number}`). A number on the list is never dialled by a
 * claim that begins after its create answered: the task ends `skipped` with `state_reason` `suppressed (<source>)`.
 *
 * - `phone_number` is E.164, as tasks' `to_number` is stored, so the claim's check is one probe of the list's key.
 * - `source` says where a number came from: `api` (create-suppression's default), `opt_out` (update-call), or an
 *   import's `--source` (e.g. `national_dnc`). It is shown inside `state_reason`, so it is a short token: lower-case
 *   letters, digits, `_`, `.`, `-`, 1 to 64 characters, starting with a letter or digit.
 * - `reason` is free text for people, at most 500 characters; `null` when none was given.
 * - list-suppressions pages in number order; `search` is the beginning of the number in E.164 form (`+` optional),
 *   which the list's primary key answers as one range.
 */
import { Effect, Schema } from "effect"
import { E164 } from "./E164.ts"
import { nullMeansEmpty, optionalPaginationKey } from "./ListRequest.ts"
import { EpochMillis, PaginationKeyText } from "./Primitives.ts"

const sourcePattern = /^[a-z0-9][a-z0-9_.-]{0,63}$/u

/**
 * The phrase a refused `source` gets.
 *
 * @category schemas
 */
export const SuppressionSourceExpected = "a source token: 1 to 64 of a-z, 0-9, _, . and -, starting with a-z or 0-9"

/**
 * Whether `value` may be a suppression's `source`.
 *
 * @category guards
 */
export const isSuppressionSource = (value: string): boolean => sourcePattern.test(value)

/**
 * A suppression's `source`.
 *
 * @category schemas
 */
export const SuppressionSource = Schema.String.check(
  Schema.isPattern(sourcePattern, { expected: SuppressionSourceExpected })
).annotate({
  description: "Where the number came from (shown in a skipped task's state_reason as suppressed (<source>)).",
  examples: ["api", "opt_out", "national_dnc"]
})

/**
 * The longest `reason` kept (characters).
 *
 * @category models
 */
export const maxSuppressionReasonLength = 500

/**
 * A suppression's `reason`.
 *
 * @category schemas
 */
export const SuppressionReason = Schema.String.check(
  Schema.isMaxLength(maxSuppressionReasonLength, {
    expected: `a string of at most ${maxSuppressionReasonLength} characters`
  })
).annotate({ description: "Why the number is suppressed, for people; never interpreted." })

/**
 * A number on the list, as create-suppression and list-suppressions answer it.
 *
 * @category models
 */
export const Suppression = Schema.Struct({
  phone_number: E164,
  reason: Schema.NullOr(SuppressionReason),
  source: SuppressionSource,
  created_timestamp: EpochMillis.annotate({ description: "When the number was put on the list, epoch ms." })
}).annotate({ identifier: "Suppression" })
/** @category models */
export type Suppression = typeof Suppression.Type

/**
 * The body of `POST /create-suppression`, `source` defaulted to `api`.
 *
 * @category models
 */
export class CreateSuppressionRequest extends Schema.Class<CreateSuppressionRequest>("CreateSuppressionRequest")({
  phone_number: E164,
  reason: Schema.optionalKey(Schema.NullOr(SuppressionReason)),
  source: SuppressionSource.annotate({ description: "Where the number came from; default api." }).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed("api"))
  )
}, { description: "Puts a number on the org's suppression list; a number already on it is answered as stored." }) {}

/**
 * Page sizes of list-suppressions: a row is small and read off the key, as list-contacts' are.
 *
 * @category models
 */
export const suppressionsPageLimits = { default: 50, maximum: 1000 } as const

const searchPattern = /^\+?[0-9]{1,15}$/u

/**
 * The body of `POST /list-suppressions`, defaults applied.
 *
 * @category models
 */
export class ListSuppressionsRequest extends Schema.Class<ListSuppressionsRequest>("ListSuppressionsRequest")({
  limit: Schema.Int.check(
    Schema.isBetween({ minimum: 1, maximum: suppressionsPageLimits.maximum }, {
      expected: `an integer from 1 to ${suppressionsPageLimits.maximum}`
    })
  ).annotate({
    description:
      `Maximum items returned, 1 to ${suppressionsPageLimits.maximum}; default ${suppressionsPageLimits.default}.`
  }).pipe(Schema.withDecodingDefaultKey(Effect.succeed(suppressionsPageLimits.default))),
  sort_order: Schema.Literals(["ascending", "descending"]).annotate({
    description: "By phone_number; default ascending."
  }).pipe(Schema.withDecodingDefaultKey(Effect.succeed("ascending" as const))),
  pagination_key: optionalPaginationKey(
    Schema.String.annotate({ description: "The pagination_key of the previous response, unchanged." }),
    PaginationKeyText
  ),
  search: Schema.optionalKey(
    Schema.String.check(
      Schema.isPattern(searchPattern, { expected: "the beginning of an E.164 number: 1 to 15 digits, + optional" })
    ).annotate({
      description: "Only numbers that begin with these digits (E.164 form, + optional): +1415 or 1415 lists +1415...",
      examples: ["+1415555", "44"]
    })
  )
}, { description: "Lists the org's suppressed numbers in number order, cursor paged." }) {}

/**
 * The list-suppressions body as it arrives: a request object, or `null`/nothing, which mean `{}`.
 *
 * @category schemas
 */
export const ListSuppressionsBody = nullMeansEmpty(ListSuppressionsRequest)

/**
 * One page of suppressed numbers.
 *
 * @category models
 */
export const ListSuppressionsResponse = Schema.Struct({
  has_more: Schema.Boolean,
  items: Schema.Array(Suppression),
  pagination_key: Schema.optionalKey(Schema.String.annotate({
    description: "Key for the next page; send it back as pagination_key."
  }))
}).annotate({ identifier: "ListSuppressionsResponse" })
/** @category models */
export type ListSuppressionsResponse = typeof ListSuppressionsResponse.Type

/**
 * A line of a JSON Lines suppression import (`admin import --kind suppressions`, decision 0550): create-suppression's
 * body; a line's `source` wins over the command's `--source`.
 *
 * @category models
 */
export const SuppressionImportLine = Schema.Struct({
  phone_number: E164,
  reason: Schema.optionalKey(Schema.NullOr(SuppressionReason)),
  source: Schema.optionalKey(SuppressionSource)
}).annotate({ identifier: "SuppressionImportLine" })
/** @category models */
export type SuppressionImportLine = typeof SuppressionImportLine.Type
