import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { Contact } from "../../src/models/Contact.ts"
import { CreateContactRequest, requestedTags, UpdateContactRequest } from "../../src/models/ContactInput.ts"
import { formatDecodeError } from "../../src/models/DecodeMessage.ts"
import { requestParseOptions } from "../../src/models/RequestDecoding.ts"

// requests as the HTTP edge decodes them (unknown fields rejected); a Contact has no unknown fields to meet
const failure = <S extends Schema.Decoder<unknown>>(schema: S, input: unknown): string => {
  const result = Schema.decodeUnknownResult(schema)(input, { ...requestParseOptions, reportInput: true })
  if (Result.isSuccess(result)) return assert.fail("expected a decode failure")
  return formatDecodeError(result.failure)
}

const neverContacted = {
  contact_id: "contact_1",
  org_id: "org_1",
  phone_number: "+14155550123",
  created_timestamp: 1735718400000,
  do_not_call: false,
  contact_tags: [],
  custom_fields: {},
  conversation_count: 0,
  user_modified_timestamp: 1735718400000
}

const full = {
  ...neverContacted,
  first_name: "Ada",
  last_name: "Lovelace",
  external_id: "crm_42",
  contact_tags: ["vip", "newsletter"],
  custom_fields: { city: "London", score: 9.5, renewed: true, signup_date: "2026-01-05" },
  conversation_count: 3,
  last_conversation_timestamp: 1735718460000
}

describe("Contact", () => {
  it("round-trips a never-contacted contact without last_conversation_timestamp", () => {
    const contact = Schema.decodeUnknownSync(Contact)(neverContacted)
    assert.instanceOf(contact, Contact)
    assert.isUndefined(contact.last_conversation_timestamp)
    assert.deepStrictEqual<unknown>(Schema.encodeSync(Contact)(contact), neverContacted)
  })

  it("round-trips every field, custom fields of string, number and boolean type", () => {
    assert.deepStrictEqual<unknown>(Schema.encodeSync(Contact)(Schema.decodeUnknownSync(Contact)(full)), full)
  })

  it("never encodes fields the model does not have", () => {
    const contact = Schema.decodeUnknownSync(Contact)({ ...full, api_key_hash: "secret" })
    assert.deepStrictEqual<unknown>(Schema.encodeSync(Contact)(contact), full)
  })

  it("keeps its rules on counters and timestamps", () => {
    assert.strictEqual(
      failure(Contact, { ...full, conversation_count: -1 }),
      "conversation_count must be an integer >= 0 (got -1)"
    )
    assert.strictEqual(
      failure(Contact, { ...full, custom_fields: { city: ["London"] } }),
      "custom_fields.city must be a string or a number or true or false (got [\"London\"])"
    )
  })

  it.prop("keeps its wire form through decode and encode", [Contact], ([contact]) => {
    const wire = JSON.parse(JSON.stringify(Schema.encodeSync(Contact)(contact)))
    assert.deepStrictEqual<unknown>(
      JSON.parse(JSON.stringify(Schema.encodeSync(Contact)(Schema.decodeUnknownSync(Contact)(wire)))),
      wire
    )
  })
})

describe("CreateContactRequest", () => {
  it("requires an E.164 phone number", () => {
    assert.strictEqual(failure(CreateContactRequest, {}), "phone_number is required")
    assert.strictEqual(
      failure(CreateContactRequest, { phone_number: "phone_number" }),
      "phone_number must be an E.164 number like +14155550123 (got \"phone_number\")"
    )
  })

  it("takes tags as tags or contact_tags, not both", () => {
    const viaVendor = Schema.decodeUnknownSync(CreateContactRequest)({ phone_number: "+14155550123", tags: ["a"] })
    const viaSpec = Schema.decodeUnknownSync(CreateContactRequest)({
      phone_number: "+14155550123",
      contact_tags: ["b"]
    })
    assert.deepStrictEqual<unknown>(requestedTags(viaVendor), ["a"])
    assert.deepStrictEqual<unknown>(requestedTags(viaSpec), ["b"])
    assert.strictEqual(
      failure(CreateContactRequest, { phone_number: "+14155550123", tags: ["a"], contact_tags: ["b"] }),
      "tags cannot be sent together with contact_tags; send one of them (got [\"a\"])"
    )
  })

  it("refuses unknown fields, naming them (decision 0105)", () => {
    assert.strictEqual(
      failure(CreateContactRequest, { phone_number: "+14155550123", email: "a@b.c" }),
      "email is not a known field of this request (got \"a@b.c\")"
    )
  })

  it("decodes the vendor client's full example", () => {
    const body = { phone_number: "+14155550123", custom_fields: {}, do_not_call: true, first_name: "f", last_name: "l" }
    const request = Schema.decodeUnknownSync(CreateContactRequest)(body)
    assert.deepStrictEqual<unknown>(Schema.encodeSync(CreateContactRequest)(request), body)
  })
})

describe("UpdateContactRequest", () => {
  it("makes every field optional and lets null clear a custom field", () => {
    const request = Schema.decodeUnknownSync(UpdateContactRequest)({ custom_fields: { city: null } })
    assert.deepStrictEqual<unknown>(Schema.encodeSync(UpdateContactRequest)(request), { custom_fields: { city: null } })
    assert.isUndefined(requestedTags(Schema.decodeUnknownSync(UpdateContactRequest)({})))
  })

  it("refuses phone_number, which an update cannot change, and any other unknown field (decision 0105)", () => {
    assert.strictEqual(
      failure(UpdateContactRequest, { phone_number: "+14155550199", custom_fields: { city: null } }),
      "phone_number is not a known field of this request (got \"+14155550199\")"
    )
    assert.strictEqual(
      failure(UpdateContactRequest, { contact_id: "c_1" }),
      "contact_id is not a known field of this request (got \"c_1\")"
    )
  })
})
