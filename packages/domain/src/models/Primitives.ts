/**
 * Scalar schemas shared by the resource and request models: non-empty strings, non-negative integers,
 * epoch-millisecond timestamps and JSON numbers. Each carries an `expected` phrase so that a decode failure
 * reads as "`<path>` must be `<expected>`" (see `DecodeMessage.ts`).
 *
 * Numbers are `Schema.Finite` or `Schema.Int`, never `Schema.Number`: the JSON codec of `Schema.Number`
 * would accept the strings "NaN" and "Infinity", which no JSON client means as a number.
 */
import { Schema } from "effect"

/**
 * A string with at least one character.
 *
 * @category schemas
 */
export const NonEmptyString = Schema.String.check(Schema.isNonEmpty({ expected: "a non-empty string" }))

/**
 * A finite JSON number (integers and fractions).
 *
 * @category schemas
 */
export const FiniteNumber = Schema.Finite

/**
 * An integer `>= 0`: counts, versions, offsets.
 *
 * @category schemas
 */
export const NonNegativeInt = Schema.Int.check(
  Schema.isGreaterThanOrEqualTo(0, { expected: "an integer >= 0" })
)

/**
 * A finite number `>= 0`: durations in milliseconds and other magnitudes that cannot be negative.
 *
 * @category schemas
 */
export const NonNegativeNumber = Schema.Finite.check(
  Schema.isGreaterThanOrEqualTo(0, { expected: "a number >= 0" })
)

/**
 * An instant as integer milliseconds since the Unix epoch (spec, Conventions: "Timestamps are integers in
 * milliseconds since the Unix epoch").
 *
 * @category schemas
 */
export const EpochMillis = Schema.Int.check(
  Schema.isGreaterThanOrEqualTo(0, { expected: "a timestamp in milliseconds since the Unix epoch (an integer >= 0)" })
).annotate({ description: "Milliseconds since the Unix epoch." })

/**
 * A `pagination_key` as sent back: non-empty and at most 1024 characters. Keys svc issues are far shorter
 * (the sort tuple, an id of at most 255 characters, a fingerprint and a signature: decision 0102); the bound
 * keeps a query or body value from being arbitrarily large (decision 0105).
 *
 * @category schemas
 */
export const PaginationKeyText = NonEmptyString.check(
  Schema.isMaxLength(1024, { expected: "a pagination_key from a previous response (at most 1024 characters)" })
)
