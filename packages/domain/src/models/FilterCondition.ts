/**
 * Filter conditions shared by `list-contacts` (`filter_criteria`) and the backfill job
 * (`backfill_call_filter.start_timestamp`). Each condition has a `type` and an optional `op`; an absent `op`
 * decodes to the type's default (design, "filter `op`": `eq` for string, number and boolean, `in` for enum;
 * and, by decision 0104, `bt` for range and `pr` for present), so code downstream always sees an `op`.
 *
 * | type      | ops                          | value              |
 * |-----------|------------------------------|--------------------|
 * | `string`  | `eq` `ne` `sw` `ew` `co`     | string             |
 * | `number`  | `eq` `ne` `gt` `ge` `lt` `le`| number             |
 * | `boolean` | `eq`                         | boolean            |
 * | `range`   | `bt` (inclusive both ends)   | `[lower, upper]`   |
 * | `enum`    | `in` (any of the values)     | non-empty string[] |
 * | `present` | `pr` has a value, `np` not   | none               |
 */
import { Effect, Schema, SchemaIssue } from "effect"
import { FiniteNumber } from "./Primitives.ts"

/**
 * Operators of a string condition: equal, not equal, starts with, ends with, contains.
 *
 * @category models
 */
export const StringFilterOp = Schema.Literals(["eq", "ne", "sw", "ew", "co"])
/** @category models */
export type StringFilterOp = typeof StringFilterOp.Type

/**
 * Operators of a number condition: equal, not equal, greater, greater or equal, less, less or equal.
 *
 * @category models
 */
export const NumberFilterOp = Schema.Literals(["eq", "ne", "gt", "ge", "lt", "le"])
/** @category models */
export type NumberFilterOp = typeof NumberFilterOp.Type

/**
 * Operators of a present condition: the field has a value (`pr`) or has none (`np`).
 *
 * @category models
 */
export const PresentFilterOp = Schema.Literals(["pr", "np"])
/** @category models */
export type PresentFilterOp = typeof PresentFilterOp.Type

/**
 * Compares a string field.
 *
 * @category models
 */
export const StringFilter = Schema.Struct({
  type: Schema.Literal("string"),
  op: StringFilterOp.annotate({ description: "eq (default), ne, sw (starts with), ew (ends with) or co (contains)." })
    .pipe(
      Schema.withDecodingDefaultKey(Effect.succeed("eq" as const))
    ),
  value: Schema.String
}).annotate({ identifier: "StringFilter", description: "Compares a string field." })
/** @category models */
export type StringFilter = typeof StringFilter.Type

/**
 * Compares a number field.
 *
 * @category models
 */
export const NumberFilter = Schema.Struct({
  type: Schema.Literal("number"),
  op: NumberFilterOp.annotate({ description: "eq (default), ne, gt, ge, lt or le." }).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed("eq" as const))
  ),
  value: FiniteNumber
}).annotate({ identifier: "NumberFilter", description: "Compares a number field." })
/** @category models */
export type NumberFilter = typeof NumberFilter.Type

/**
 * Compares a boolean field for equality.
 *
 * @category models
 */
export const BooleanFilter = Schema.Struct({
  type: Schema.Literal("boolean"),
  op: Schema.Literal("eq").annotate({ description: "eq (the default and only operator)." }).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed("eq" as const))
  ),
  value: Schema.Boolean
}).annotate({ identifier: "BooleanFilter", description: "Compares a boolean field for equality." })
/** @category models */
export type BooleanFilter = typeof BooleanFilter.Type

const RangeBounds = Schema.Tuple([FiniteNumber, FiniteNumber]).check(
  Schema.makeFilter(([lower, upper], _ast, options) =>
    lower <= upper
      ? undefined
      : new SchemaIssue.InvalidValue(
        { expected: "[lower, upper] with lower <= upper" },
        [lower, upper],
        options
      )
  )
)

/**
 * Matches a number field between two bounds, both inclusive.
 *
 * @category models
 */
export const RangeFilter = Schema.Struct({
  type: Schema.Literal("range"),
  op: Schema.Literal("bt").annotate({ description: "bt (between, inclusive; the default and only operator)." }).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed("bt" as const))
  ),
  value: RangeBounds.annotate({ description: "[lower, upper], both inclusive." })
}).annotate({ identifier: "RangeFilter", description: "Matches a number field between two inclusive bounds." })
/** @category models */
export type RangeFilter = typeof RangeFilter.Type

/**
 * Matches a field holding any of the listed values.
 *
 * @category models
 */
export const EnumFilter = Schema.Struct({
  type: Schema.Literal("enum"),
  op: Schema.Literal("in").annotate({ description: "in (the default and only operator)." }).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed("in" as const))
  ),
  value: Schema.Array(Schema.String).check(Schema.isMinLength(1, { expected: "a list of at least one value" }))
}).annotate({ identifier: "EnumFilter", description: "Matches a field holding any of the listed values." })
/** @category models */
export type EnumFilter = typeof EnumFilter.Type

/**
 * Matches a field that has a value (`pr`) or has none (`np`).
 *
 * @category models
 */
export const PresentFilter = Schema.Struct({
  type: Schema.Literal("present"),
  op: PresentFilterOp.annotate({ description: "pr (has a value; the default) or np (has none)." }).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed("pr" as const))
  )
}).annotate({ identifier: "PresentFilter", description: "Matches a field that has a value, or has none." })
/** @category models */
export type PresentFilter = typeof PresentFilter.Type
