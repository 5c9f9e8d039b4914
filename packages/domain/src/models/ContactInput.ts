/**
 * Request bodies of the contact companion endpoints (`POST /create-contact`, `PATCH /update-contact/{id}`),
 * shaped as the vendor's API has them. Tags may be sent as the vendor's `tags` or as the spec's
 * `contact_tags` (design, "Contact tags"), not both; {@link requestedTags} reads whichever was sent. A
 * `null` custom field value clears that field.
 */
import { Schema, SchemaIssue } from "effect"
import { CustomFieldValue } from "./Contact.ts"
import { E164 } from "./E164.ts"

const editableFields = {
  first_name: Schema.optionalKey(Schema.String),
  last_name: Schema.optionalKey(Schema.String),
  do_not_call: Schema.optionalKey(Schema.Boolean),
  external_id: Schema.optionalKey(Schema.String),
  tags: Schema.optionalKey(Schema.Array(Schema.String).annotate({ description: "Same as contact_tags." })),
  contact_tags: Schema.optionalKey(
    Schema.Array(Schema.String).annotate({
      description: "Tags of the contact; replaces the stored list."
    })
  ),
  custom_fields: Schema.optionalKey(
    Schema.Record(Schema.String, Schema.NullOr(CustomFieldValue)).annotate({
      description: "Custom field values by name; null clears a field."
    })
  )
}

/**
 * Refuses a body that sends both `tags` (the vendor's name) and `contact_tags` (the spec's): one list, one name
 * (design, "Contact tags"). Shared by the request bodies here and the import line (`ContactImportLine`).
 *
 * @category schemas
 */
export const oneTagField = Schema.makeFilter(
  (input: { readonly tags?: ReadonlyArray<string>; readonly contact_tags?: ReadonlyArray<string> }, _ast, options) =>
    input.tags !== undefined && input.contact_tags !== undefined
      ? new SchemaIssue.Pointer(
        ["tags"],
        new SchemaIssue.InvalidValue(
          { message: "cannot be sent together with contact_tags; send one of them" },
          input.tags,
          options
        )
      )
      : undefined
)

/**
 * The body of `POST /create-contact`.
 *
 * @category models
 */
export class CreateContactRequest extends Schema.Class<CreateContactRequest>("CreateContactRequest")(
  Schema.Struct({ phone_number: E164, ...editableFields }).check(oneTagField),
  { description: "Creates a contact; at most one contact per phone number per org." }
) {}

/**
 * The body of `PATCH /update-contact/{contact_id}`; every field is optional and `phone_number` cannot be
 * changed.
 *
 * @category models
 */
export class UpdateContactRequest extends Schema.Class<UpdateContactRequest>("UpdateContactRequest")(
  Schema.Struct(editableFields).check(oneTagField),
  { description: "Updates a contact; omitted fields stay as they are." }
) {}

/**
 * The tags a create or update request sets, whichever of `contact_tags` and `tags` carried them; `undefined`
 * when neither was sent.
 *
 * @category combinators
 */
export const requestedTags = (
  request: CreateContactRequest | UpdateContactRequest
): ReadonlyArray<string> | undefined => request.contact_tags ?? request.tags
