/**
 * What the list endpoints' request bodies (`POST /v3/list-calls`, `POST /list-contacts`) have in common, written
 * once: the `pagination_key` whose empty value means "no key", cursor paging refusing an offset on top of it
 * (decision 0104), `filter_criteria` refusing a member it does not know, and a `null` or absent body meaning `{}`.
 */
import { Option, Schema, SchemaGetter, SchemaIssue, SchemaTransformation } from "effect"

/**
 * An optional `pagination_key`: `encoded` as it arrives, `decoded` once present. The key of a response that has no
 * next page may come back empty: "" is read as no key.
 *
 * @category schemas
 */
export const optionalPaginationKey = <E extends Schema.Codec<string>, D extends Schema.Codec<string>>(
  encoded: E,
  decoded: D
) =>
  Schema.optionalKey(encoded).pipe(
    Schema.decodeTo(
      Schema.optionalKey(decoded),
      SchemaTransformation.transformOptional({
        decode: (key) => Option.filter(key, (value) => value !== ""),
        encode: (key) => key
      })
    )
  )

/**
 * Refuses a `skip` above 0 beside a `pagination_key` (decision 0104): a cursor already fixes the position; an offset
 * on top of it has no meaning.
 *
 * @category schemas
 */
export const cursorOrOffset = Schema.makeFilter(
  (request: { readonly pagination_key?: string; readonly skip?: number }, _ast, options) =>
    request.pagination_key !== undefined && request.skip !== undefined && request.skip > 0
      ? new SchemaIssue.Pointer(
        ["skip"],
        new SchemaIssue.InvalidValue(
          { message: "must be 0 or omitted when pagination_key is given (cursor and offset paging do not combine)" },
          request.skip,
          options
        )
      )
      : undefined
)

/**
 * Refuses the first key of a `filter_criteria` object that is not one of `members`, with `message` (which names
 * them): silently dropping a filter would return rows the caller meant to exclude.
 *
 * @category schemas
 */
export const onlyMembers = (members: ReadonlyArray<string>, message: string) =>
  Schema.makeFilter((criteria: { readonly [key: string]: unknown }, _ast, options) => {
    for (const [key, value] of Object.entries(criteria)) {
      if (!members.includes(key)) {
        return new SchemaIssue.Pointer([key], new SchemaIssue.InvalidValue({ message }, value, options))
      }
    }
    return undefined
  })

/**
 * A list request's body as it arrives: a request object, or `null`/nothing, which mean `{}` (the vendor's client
 * sends `null` for `list(null)`).
 *
 * @category schemas
 */
export const nullMeansEmpty = <S extends Schema.Codec<unknown, object>>(request: S) =>
  Schema.NullishOr(Schema.toEncoded(request)).annotate({
    expected: "an object (null or no body means {})"
  }).pipe(
    Schema.decodeTo(request, {
      // every member of a list request is optional: {} is the empty request
      decode: SchemaGetter.transform((body) => body ?? ({} as S["Encoded"])),
      encode: SchemaGetter.passthrough()
    })
  )
