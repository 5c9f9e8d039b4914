/**
 * The `POST /list-contacts` request and response (spec, "POST /list-contacts").
 *
 * Decoding applies the defaults, so a handler always sees `limit` (1..1000, default 50: design, "default
 * `limit`") and `sort_order` (default `desc`: spec). A `null` or absent body is the empty request (the
 * vendor's client sends `null` for `list(null)`): decode it with {@link ListContactsBody}.
 *
 * `filter_criteria` accepts the spec's three members plus the vendor's four (design, "filter members"), each
 * with the condition types listed in `FilterCondition.ts`; conditions are combined with AND. An unknown filter
 * member is rejected with a message listing the members, whatever the parse options: silently dropping a filter
 * would return contacts the caller meant to exclude (design, "filter `op`": "Unknown member, type or op: 400").
 * Other unknown fields are rejected at the HTTP edge like everywhere (RequestDecoding.ts).
 */
import { Effect, Schema, SchemaTransformation } from "effect"
import { Contact } from "./Contact.ts"
import { BooleanFilter, EnumFilter, NumberFilter, PresentFilter, RangeFilter, StringFilter } from "./FilterCondition.ts"
import { cursorOrOffset, nullMeansEmpty, onlyMembers, optionalPaginationKey } from "./ListRequest.ts"
import { NonEmptyString, NonNegativeInt, PaginationKeyText } from "./Primitives.ts"

const customFieldKey = {
  key: NonEmptyString.annotate({ description: "Name of the custom field." })
}

/**
 * A condition on one custom field: any condition type, plus the field's `key`.
 *
 * @category models
 */
export const CustomFieldFilter = Schema.Union([
  Schema.Struct({ ...StringFilter.fields, ...customFieldKey }),
  Schema.Struct({ ...NumberFilter.fields, ...customFieldKey }),
  Schema.Struct({ ...BooleanFilter.fields, ...customFieldKey }),
  Schema.Struct({ ...RangeFilter.fields, ...customFieldKey }),
  Schema.Struct({ ...EnumFilter.fields, ...customFieldKey }),
  Schema.Struct({ ...PresentFilter.fields, ...customFieldKey })
]).annotate({ identifier: "CustomFieldFilter", description: "A condition on the custom field named by `key`." })
/** @category models */
export type CustomFieldFilter = typeof CustomFieldFilter.Type

const contactFilterFields = {
  external_id: Schema.optionalKey(Schema.Union([StringFilter, PresentFilter])),
  last_conversation_timestamp: Schema.optionalKey(
    Schema.Union([NumberFilter, RangeFilter]).annotate({
      description: "Epoch ms; a contact never contacted compares as 0."
    })
  ),
  custom_fields: Schema.optionalKey(Schema.Array(CustomFieldFilter)),
  contact_id: Schema.optionalKey(StringFilter),
  phone_number: Schema.optionalKey(StringFilter.annotate({ description: "Numbers are stored in E.164 form." })),
  do_not_call: Schema.optionalKey(BooleanFilter),
  tags: Schema.optionalKey(EnumFilter.annotate({ description: "Matches contacts having any of the listed tags." }))
}

/**
 * The names of the filter members `list-contacts` accepts.
 *
 * @category models
 */
export const contactFilterMembers: ReadonlyArray<string> = Object.keys(contactFilterFields)

// Keys that are not members. The rest signature below selects only these, so the members keep their decoded
// values (an index signature over every string would also re-read the members).
const UnknownMember = Schema.String.check(
  Schema.makeFilter((key: string) => !contactFilterMembers.includes(key))
)

const ContactFilterFields = Schema.Struct(contactFilterFields)

const unknownMemberMessage = `is not a filter member; the members are ${contactFilterMembers.join(", ")}`

/**
 * `filter_criteria` of `list-contacts`: conditions combined with AND. first_name and last_name cannot be
 * filtered (spec); `search_query` is the way to match a name.
 *
 * @category models
 */
export const ContactFilterCriteria = Schema.StructWithRest(ContactFilterFields, [
  // Keeps the keys that are not members, so that the check below can see them and reject the first.
  Schema.Record(UnknownMember, Schema.Unknown)
]).check(onlyMembers(contactFilterMembers, unknownMemberMessage)).pipe(
  Schema.decodeTo(Schema.toType(ContactFilterFields), SchemaTransformation.passthroughSubtype()),
  Schema.annotate({
    identifier: "ContactFilterCriteria",
    description: "Conditions on contacts, combined with AND. first_name and last_name cannot be filtered here."
  })
)
/** @category models */
export type ContactFilterCriteria = typeof ContactFilterCriteria.Type

/**
 * The order of `list-contacts`, by `last_conversation_timestamp`.
 *
 * @category models
 */
export const ContactSortOrder = Schema.Literals(["asc", "desc"])
/** @category models */
export type ContactSortOrder = typeof ContactSortOrder.Type

/**
 * The default page size of `list-contacts` (design, "default `limit`").
 *
 * @category models
 */
export const defaultListContactsLimit = 50

// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/

const ListContactsLimit = Schema.Int.check(
  Schema.isBetween({ minimum: 1, maximum: 1000 }, { expected: "an integer from 1 to 1000" })
)

const OptionalPaginationKey = optionalPaginationKey(
  Schema.String.annotate({ description: "base64url key taken from a previous response's pagination_key." }),
  PaginationKeyText
)

const ListContactsFields = Schema.Struct({
  limit: ListContactsLimit.annotate({ description: "Maximum contacts returned, 1 to 1000; default 50." }).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed(defaultListContactsLimit))
  ),
  skip: Schema.optionalKey(NonNegativeInt.annotate({
    description: "Offset paging; slower on large sets and can repeat or miss rows when contacts change. " +
      "Prefer pagination_key."
  })),
  sort_order: ContactSortOrder.annotate({
    description: "Sort by last_conversation_timestamp; default desc (newest conversation first)."
  }).pipe(Schema.withDecodingDefaultKey(Effect.succeed("desc" as const))),
  pagination_key: OptionalPaginationKey,
  filter_criteria: Schema.optionalKey(ContactFilterCriteria),
  search_query: Schema.optionalKey(
    Schema.String.check(
      // decision 0105: refused, not stripped; the store joins the searched fields with U+001F
      Schema.makeFilter((query: string) => !CONTROL_CHARACTER.test(query), {
        message: "must not contain control characters (U+0000 to U+001F, U+007F to U+009F)"
      })
    ).annotate({
      description: "Case-insensitive substring match against phone number, first name, last name, external id " +
        "and custom field values. Control characters are refused."
    })
  )
}).check(cursorOrOffset)

/**
 * A decoded `list-contacts` request, defaults applied.
 *
 * @category models
 */
export class ListContactsRequest extends Schema.Class<ListContactsRequest>("ListContactsRequest")(
  ListContactsFields,
  { description: "Lists contacts with filtering, free-text search, sorting and cursor or offset paging." }
) {}

/**
 * The `list-contacts` body as it arrives: a request object, or `null`/nothing, which mean `{}`.
 *
 * @category schemas
 */
export const ListContactsBody = nullMeansEmpty(ListContactsRequest)

/**
 * The `list-contacts` response: one page of contacts and the total count of matches.
 *
 * @category models
 */
export class ListContactsResponse extends Schema.Class<ListContactsResponse>("ListContactsResponse")({
  has_more: Schema.Boolean,
  items: Schema.Array(Contact),
  pagination_key: Schema.optionalKey(Schema.String.annotate({
    description: "Key for the next page; send it back as pagination_key."
  })),
  total: NonNegativeInt.annotate({ description: "Number of contacts matching the request, over all pages." })
}) {}
