/**
 * A contact as the API returns it (spec, Contact). The spec does not say which fields are required in a
 * response; the service always emits the ids, the phone number, the counters, `do_not_call`,
 * `contact_tags` (`[]` when none) and `custom_fields` (`{}` when none), and emits the names, `external_id`
 * and `last_conversation_timestamp` only when they have a value: a contact never contacted has no
 * `last_conversation_timestamp` and sorts as if it were 0 (design, "never-contacted contacts").
 */
import { Schema } from "effect"
import { E164 } from "./E164.ts"
import { ContactId, OrgId } from "./Ids.ts"
import { EpochMillis, NonNegativeInt } from "./Primitives.ts"

/**
 * The value of a custom field: the org's CRM configuration types custom fields as string, number, boolean,
 * date, datetime or enum; dates and enum values travel as strings.
 *
 * @category models
 */
export const CustomFieldValue = Schema.Union([Schema.String, Schema.Finite, Schema.Boolean])
/** @category models */
export type CustomFieldValue = typeof CustomFieldValue.Type

/**
 * Custom fields of a contact, by field name.
 *
 * @category models
 */
export const CustomFields = Schema.Record(Schema.String, CustomFieldValue)
/** @category models */
export type CustomFields = typeof CustomFields.Type

/**
 * A stored contact.
 *
 * @category models
 */
export class Contact extends Schema.Class<Contact>("Contact")({
  contact_id: ContactId,
  org_id: OrgId,
  phone_number: E164,
  created_timestamp: EpochMillis,
  first_name: Schema.optionalKey(Schema.String),
  last_name: Schema.optionalKey(Schema.String),
  do_not_call: Schema.Boolean.annotate({ description: "When true the contact is never dialled." }),
  external_id: Schema.optionalKey(Schema.String.annotate({ description: "Id of the contact in the caller's CRM." })),
  contact_tags: Schema.Array(Schema.String),
  custom_fields: CustomFields,
  conversation_count: NonNegativeInt.annotate({ description: "Number of calls and chats with the contact." }),
  last_conversation_timestamp: Schema.optionalKey(EpochMillis.annotate({
    description: "Start of the latest conversation; omitted for a contact never contacted, which sorts as 0."
  })),
  user_modified_timestamp: EpochMillis
}, { description: "A stored contact." }) {}
