/**
 * One line of `admin import --kind contacts` (decision 0530): the
 * create-contact request's fields plus the history and identity a CRM export or another svc carries, which
 * the API's create cannot set: `conversation_count`, `last_conversation_timestamp`, `contact_id`,
 * `created_timestamp`, `user_modified_timestamp`, and `org_id` (a contact read back from the API names its org).
 *
 * Every value is kept as given, or the line is refused (docs/decisions/0530-imports-keep-or-refuse.md):
 * - a field that is not listed here is an error naming it (decoded with `onExcessProperty: "error"`), never
 *   dropped;
 * - a value the store cannot hold is an error: text with U+0000 or an unpaired surrogate (PostgreSQL `text`), a
 *   tag with U+001F (the bulk loader's tag separator), `conversation_count` above 2^31 - 1 (`integer`), a
 *   `contact_id` the API could not address afterwards (over 100 characters or with control characters: the
 *   request-target rule, decision 0011);
 * - `org_id`, when present, must be the org imported into: a contact never moves between orgs.
 *
 * A `null` custom field value means "no value", as in create-contact: the field is not stored.
 */
import { Schema, SchemaIssue } from "effect"
import { CustomFieldValue } from "./Contact.ts"
import { oneTagField } from "./ContactInput.ts"
import { E164 } from "./E164.ts"
import { EpochMillis, NonNegativeInt } from "./Primitives.ts"

/**
 * Whether PostgreSQL's `text` can hold a string: no U+0000 and no unpaired surrogate.
 *
 * @category guards
 */
export const isStorableText = (text: string): boolean => !text.includes("\u0000") && text.isWellFormed()

const storable = Schema.makeFilter((text: string) =>
  isStorableText(text) ? undefined : "must not contain U+0000 or an unpaired surrogate (PostgreSQL cannot store them)"
)

/** Text the store keeps as given. */
const StoredText = Schema.String.check(storable)

/** Longest `contact_id` the API can address afterwards (a path parameter, decision 0011). */
export const MAX_CONTACT_ID_LENGTH = 100

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/u

const ImportedContactId = Schema.String.check(
  Schema.makeFilter((id: string) =>
    id.length === 0
      ? "must be a non-empty string"
      : id.length > MAX_CONTACT_ID_LENGTH
      ? `must be at most ${MAX_CONTACT_ID_LENGTH} characters (the API could not address it as a path parameter)`
      : CONTROL.test(id) || !id.isWellFormed()
      ? "must not contain control characters or unpaired surrogates (the API could not address it)"
      : undefined
  )
)

const Tag = Schema.String.check(
  Schema.makeFilter((tag: string) =>
    !isStorableText(tag)
      ? "must not contain U+0000 or an unpaired surrogate (PostgreSQL cannot store them)"
      : tag.includes("\u001f")
      ? "must not contain U+001F (the unit separator)"
      : undefined
  )
)

/** Largest value of PostgreSQL's `integer`, the column of `conversation_count`. */
export const MAX_CONVERSATION_COUNT = 2_147_483_647

const storableCustomFields = Schema.makeFilter(
  (fields: Readonly<Record<string, unknown>>, _ast, options) => {
    for (const [key, value] of Object.entries(fields)) {
      if (!isStorableText(key)) {
        return new SchemaIssue.Pointer(
          [key],
          new SchemaIssue.InvalidValue(
            { message: "is a field name with U+0000 or an unpaired surrogate, which PostgreSQL cannot store" },
            key,
            options
          )
        )
      }
      if (typeof value === "string" && !isStorableText(value)) {
        return new SchemaIssue.Pointer(
          [key],
          new SchemaIssue.InvalidValue(
            { message: "must not contain U+0000 or an unpaired surrogate (PostgreSQL cannot store them)" },
            value,
            options
          )
        )
      }
    }
    return undefined
  }
)

/**
 * A contact line of an import file.
 *
 * @category models
 */
export const ContactImportLine = Schema.Struct({
  phone_number: E164,
  first_name: Schema.optionalKey(StoredText),
  last_name: Schema.optionalKey(StoredText),
  do_not_call: Schema.optionalKey(Schema.Boolean),
  external_id: Schema.optionalKey(StoredText),
  tags: Schema.optionalKey(Schema.Array(Tag)),
  contact_tags: Schema.optionalKey(Schema.Array(Tag)),
  custom_fields: Schema.optionalKey(
    Schema.Record(Schema.String, Schema.NullOr(CustomFieldValue)).check(storableCustomFields)
  ),
  conversation_count: Schema.optionalKey(
    NonNegativeInt.check(
      Schema.isLessThanOrEqualTo(MAX_CONVERSATION_COUNT, { expected: `an integer from 0 to ${MAX_CONVERSATION_COUNT}` })
    )
  ),
  last_conversation_timestamp: Schema.optionalKey(Schema.NullOr(EpochMillis)),
  contact_id: Schema.optionalKey(ImportedContactId),
  created_timestamp: Schema.optionalKey(EpochMillis),
  user_modified_timestamp: Schema.optionalKey(EpochMillis),
  org_id: Schema.optionalKey(Schema.String)
}).check(oneTagField)

/** @category models */
export type ContactImportLine = typeof ContactImportLine.Type

// ---------------------------------------------------------------------------------------------------------------
// Fast path
// ---------------------------------------------------------------------------------------------------------------

const FIELDS = new Set([
  "phone_number",
  "first_name",
  "last_name",
  "do_not_call",
  "external_id",
  "tags",
  "contact_tags",
  "custom_fields",
  "conversation_count",
  "last_conversation_timestamp",
  "contact_id",
  "created_timestamp",
  "user_modified_timestamp",
  "org_id"
])

const E164_PATTERN = /^\+[1-9]\d{0,14}$/u

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isMillis = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0

const isText = (value: unknown): boolean => typeof value === "string" && isStorableText(value)

const isTagList = (value: unknown): boolean =>
  Array.isArray(value) && value.every((tag) => isText(tag) && !(tag as string).includes("\u001f"))

const isContactId = (value: unknown): boolean => {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_CONTACT_ID_LENGTH) return false
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if (code < 0x20 || code === 0x7f) return false
  }
  return value.isWellFormed()
}

const isCustomFields = (value: unknown): boolean => {
  if (!isPlainObject(value)) return false
  for (const key in value) {
    if (!Object.hasOwn(value, key) || !isStorableText(key)) return false
    const field = value[key]
    if (
      !(field === null || typeof field === "boolean" || (typeof field === "number" && Number.isFinite(field)) ||
        isText(field))
    ) {
      return false
    }
  }
  return true
}

/**
 * The import's hot path: a JSON-parsed line that is plainly valid, checked by hand in a fraction of the schema
 * decode's time (which was 85% of an import's work in Node); `undefined` for anything else, which the caller then
 * decodes with {@link ContactImportLine} for the answer and its message. It accepts only what the schema accepts
 * (stricter where that is simpler: integers must be safe), and returns the parsed object itself, whose fields are
 * the decoded ones (the schema transforms nothing); `ContactImportLine.test.ts` checks both on generated lines.
 *
 * @category decoding
 */
export const decodePlainLine = (input: unknown): ContactImportLine | undefined => {
  if (!isPlainObject(input)) return undefined
  for (const key in input) {
    if (!Object.hasOwn(input, key) || !FIELDS.has(key)) return undefined
  }
  const line = input
  if (typeof line["phone_number"] !== "string" || !E164_PATTERN.test(line["phone_number"])) return undefined
  for (const key of ["first_name", "last_name", "external_id"]) {
    if (key in line && !isText(line[key])) return undefined
  }
  if ("do_not_call" in line && typeof line["do_not_call"] !== "boolean") return undefined
  if ("tags" in line && (!isTagList(line["tags"]) || "contact_tags" in line)) return undefined
  if ("contact_tags" in line && !isTagList(line["contact_tags"])) return undefined
  if ("custom_fields" in line && !isCustomFields(line["custom_fields"])) return undefined
  if (
    "conversation_count" in line &&
    !(isMillis(line["conversation_count"]) && (line["conversation_count"] as number) <= MAX_CONVERSATION_COUNT)
  ) {
    return undefined
  }
  if (
    "last_conversation_timestamp" in line && line["last_conversation_timestamp"] !== null &&
    !isMillis(line["last_conversation_timestamp"])
  ) {
    return undefined
  }
  if ("contact_id" in line && !isContactId(line["contact_id"])) return undefined
  if ("created_timestamp" in line && !isMillis(line["created_timestamp"])) return undefined
  if ("user_modified_timestamp" in line && !isMillis(line["user_modified_timestamp"])) return undefined
  if ("org_id" in line && typeof line["org_id"] !== "string") return undefined
  return line as unknown as ContactImportLine
}
