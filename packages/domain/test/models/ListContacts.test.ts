import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { Contact } from "../../src/models/Contact.ts"
import { formatDecodeError } from "../../src/models/DecodeMessage.ts"
import { ListContactsBody, ListContactsRequest, ListContactsResponse } from "../../src/models/ListContacts.ts"
import { requestParseOptions } from "../../src/models/RequestDecoding.ts"

// as the HTTP edge decodes it
const decode = (input: unknown) =>
  Schema.decodeUnknownResult(ListContactsBody)(input, { ...requestParseOptions, reportInput: true })

const decoded = (input: unknown): ListContactsRequest => {
  const result = decode(input)
  if (Result.isFailure(result)) return assert.fail(formatDecodeError(result.failure))
  return result.success
}

const failure = (input: unknown): string => {
  const result = decode(input)
  if (Result.isSuccess(result)) return assert.fail("expected a decode failure")
  return formatDecodeError(result.failure)
}

const filter = (criteria: Record<string, unknown>) => decoded({ filter_criteria: criteria }).filter_criteria
const filterFailure = (criteria: Record<string, unknown>) => failure({ filter_criteria: criteria })

describe("ListContactsRequest", () => {
  it("treats null, nothing and {} alike and applies the defaults", () => {
    for (const body of [null, undefined, {}]) {
      const request = decoded(body)
      assert.instanceOf(request, ListContactsRequest)
      assert.strictEqual(request.limit, 50)
      assert.strictEqual(request.sort_order, "desc")
      assert.isUndefined(request.skip)
      assert.isUndefined(request.filter_criteria)
    }
  })

  it("decodes the vendor client's full example", () => {
    const body = {
      filter_criteria: {
        contact_id: { op: "eq", type: "string", value: "value" },
        custom_fields: [{ op: "eq", type: "string", value: "value", key: "key" }],
        do_not_call: { op: "eq", type: "boolean", value: true },
        external_id: { op: "eq", type: "string", value: "value" },
        last_conversation_timestamp: { op: "eq", type: "number", value: 0 },
        phone_number: { op: "eq", type: "string", value: "value" }
      },
      limit: 1,
      pagination_key: "pagination_key",
      search_query: "search_query",
      skip: 0,
      sort_order: "asc"
    }
    assert.deepStrictEqual<unknown>(Schema.encodeSync(ListContactsBody)(decoded(body)), body)
  })

  it("accepts limit from 1 to 1000", () => {
    assert.strictEqual(decoded({ limit: 1 }).limit, 1)
    assert.strictEqual(decoded({ limit: 1000 }).limit, 1000)
    assert.strictEqual(failure({ limit: 0 }), "limit must be an integer from 1 to 1000 (got 0)")
    assert.strictEqual(failure({ limit: 1001 }), "limit must be an integer from 1 to 1000 (got 1001)")
    assert.strictEqual(failure({ limit: 2.5 }), "limit must be an integer (got 2.5)")
    assert.strictEqual(failure({ limit: "10" }), "limit must be a number (got \"10\")")
  })

  it("accepts skip >= 0", () => {
    assert.strictEqual(decoded({ skip: 0 }).skip, 0)
    assert.strictEqual(decoded({ skip: 25 }).skip, 25)
    assert.strictEqual(failure({ skip: -1 }), "skip must be an integer >= 0 (got -1)")
  })

  it("does not combine an offset with a cursor", () => {
    assert.strictEqual(decoded({ skip: 0, pagination_key: "k" }).pagination_key, "k")
    assert.strictEqual(
      failure({ skip: 5, pagination_key: "k" }),
      "skip must be 0 or omitted when pagination_key is given (cursor and offset paging do not combine) (got 5)"
    )
  })

  it("treats an empty pagination_key as none", () => {
    assert.isUndefined(decoded({ pagination_key: "" }).pagination_key)
  })

  it("bounds pagination_key at 1024 characters (decision 0105)", () => {
    assert.strictEqual(decoded({ pagination_key: "k".repeat(1024) }).pagination_key?.length, 1024)
    assert.include(
      failure({ pagination_key: "k".repeat(1025) }),
      "pagination_key must be a pagination_key from a previous response (at most 1024 characters)"
    )
  })

  it("refuses control characters in search_query instead of stripping them (decision 0105)", () => {
    assert.strictEqual(decoded({ search_query: "Zoë O'Hara 😀" }).search_query, "Zoë O'Hara 😀")
    for (const query of ["a\u0000", "\u0001", "tab\there", "\u001f", "\u007f", "\u009f"]) {
      assert.include(
        failure({ search_query: query }),
        "search_query must not contain control characters (U+0000 to U+001F, U+007F to U+009F)"
      )
    }
  })

  it("accepts sort_order asc or desc", () => {
    assert.strictEqual(decoded({ sort_order: "asc" }).sort_order, "asc")
    assert.strictEqual(
      failure({ sort_order: "ascending" }),
      "sort_order must be one of \"asc\", \"desc\" (got \"ascending\")"
    )
  })

  it("rejects unknown fields, naming them (decision 0105)", () => {
    assert.strictEqual(
      failure({ limit: 5, channel: "voice" }),
      "channel is not a known field of this request (got \"voice\")"
    )
  })

  it("rejects a body that is not an object", () => {
    assert.strictEqual(failure([]), "request body must be an object (null or no body means {}) (got [])")
    assert.strictEqual(failure("{}"), "request body must be an object (null or no body means {}) (got \"{}\")")
  })
})

describe("filter_criteria", () => {
  const stringOps = ["eq", "ne", "sw", "ew", "co"]
  const numberOps = ["eq", "ne", "gt", "ge", "lt", "le"]

  it("accepts every string op on the string members", () => {
    for (const member of ["external_id", "contact_id", "phone_number"]) {
      for (const op of stringOps) {
        assert.deepStrictEqual<unknown>(filter({ [member]: { type: "string", op, value: "+1415" } }), {
          [member]: { type: "string", op, value: "+1415" }
        })
      }
    }
  })

  it("defaults a missing op: eq for string, number and boolean, in for enum, bt for range, pr for present", () => {
    assert.deepStrictEqual<unknown>(filter({ external_id: { type: "string", value: "crm_1" } }), {
      external_id: { type: "string", op: "eq", value: "crm_1" }
    })
    assert.deepStrictEqual<unknown>(filter({ last_conversation_timestamp: { type: "number", value: 5 } }), {
      last_conversation_timestamp: { type: "number", op: "eq", value: 5 }
    })
    assert.deepStrictEqual<unknown>(filter({ do_not_call: { type: "boolean", value: false } }), {
      do_not_call: { type: "boolean", op: "eq", value: false }
    })
    assert.deepStrictEqual<unknown>(filter({ tags: { type: "enum", value: ["vip"] } }), {
      tags: { type: "enum", op: "in", value: ["vip"] }
    })
    assert.deepStrictEqual<unknown>(filter({ last_conversation_timestamp: { type: "range", value: [1, 2] } }), {
      last_conversation_timestamp: { type: "range", op: "bt", value: [1, 2] }
    })
    assert.deepStrictEqual<unknown>(filter({ external_id: { type: "present" } }), {
      external_id: { type: "present", op: "pr" }
    })
  })

  it("accepts every number op and range on last_conversation_timestamp", () => {
    for (const op of numberOps) {
      assert.deepStrictEqual<unknown>(
        filter({ last_conversation_timestamp: { type: "number", op, value: 1735718400000 } }),
        {
          last_conversation_timestamp: { type: "number", op, value: 1735718400000 }
        }
      )
    }
    assert.deepStrictEqual<unknown>(
      filter({ last_conversation_timestamp: { type: "range", op: "bt", value: [0, 0] } }),
      {
        last_conversation_timestamp: { type: "range", op: "bt", value: [0, 0] }
      }
    )
  })

  it("accepts pr and np on external_id", () => {
    for (const op of ["pr", "np"]) {
      assert.deepStrictEqual<unknown>(filter({ external_id: { type: "present", op } }), {
        external_id: { type: "present", op }
      })
    }
  })

  it("accepts every condition type on custom fields", () => {
    const conditions = [
      ...stringOps.map((op) => ({ key: "city", type: "string", op, value: "Oslo" })),
      ...numberOps.map((op) => ({ key: "score", type: "number", op, value: 7.5 })),
      { key: "vip", type: "boolean", op: "eq", value: true },
      { key: "score", type: "range", op: "bt", value: [1, 10] },
      { key: "plan", type: "enum", op: "in", value: ["gold", "silver"] },
      { key: "city", type: "present", op: "pr" },
      { key: "city", type: "present", op: "np" }
    ]
    assert.deepStrictEqual<unknown>(filter({ custom_fields: conditions }), { custom_fields: conditions })
  })

  it("accepts the boolean and enum members", () => {
    assert.deepStrictEqual<unknown>(filter({ do_not_call: { type: "boolean", op: "eq", value: true } }), {
      do_not_call: { type: "boolean", op: "eq", value: true }
    })
    assert.deepStrictEqual<unknown>(filter({ tags: { type: "enum", op: "in", value: ["a", "b"] } }), {
      tags: { type: "enum", op: "in", value: ["a", "b"] }
    })
  })

  it("rejects an unknown member, naming the members", () => {
    assert.strictEqual(
      filterFailure({ first_name: { type: "string", value: "Ada" } }),
      "filter_criteria.first_name is not a filter member; the members are external_id, last_conversation_timestamp, " +
        "custom_fields, contact_id, phone_number, do_not_call, tags (got {\"type\":\"string\",\"value\":\"Ada\"})"
    )
    assert.match(
      filterFailure({ contact_tags: { type: "enum", value: ["a"] } }),
      /^filter_criteria\.contact_tags is not a filter member/
    )
  })

  it("rejects a type the member does not take", () => {
    assert.strictEqual(
      filterFailure({ external_id: { type: "number", value: 1 } }),
      "filter_criteria.external_id.type must be one of \"string\", \"present\" (got \"number\")"
    )
    assert.strictEqual(
      filterFailure({ last_conversation_timestamp: { type: "string", value: "1" } }),
      "filter_criteria.last_conversation_timestamp.type must be one of \"number\", \"range\" (got \"string\")"
    )
    assert.strictEqual(
      filterFailure({ do_not_call: { type: "string", value: "true" } }),
      "filter_criteria.do_not_call.type must be \"boolean\" (got \"string\")"
    )
    assert.strictEqual(
      filterFailure({ tags: { type: "string", value: "vip" } }),
      "filter_criteria.tags.type must be \"enum\" (got \"string\")"
    )
    assert.strictEqual(
      filterFailure({ custom_fields: [{ key: "a", type: "date", value: "2026-01-01" }] }),
      "filter_criteria.custom_fields[0].type must be one of \"string\", \"number\", \"boolean\", \"range\", \"enum\", " +
        "\"present\" (got \"date\")"
    )
    assert.strictEqual(
      filterFailure({ external_id: { value: "x" } }),
      "filter_criteria.external_id.type is required and must be one of \"string\", \"present\""
    )
  })

  it("rejects an op the type does not have", () => {
    assert.strictEqual(
      filterFailure({ external_id: { type: "string", op: "gt", value: "a" } }),
      "filter_criteria.external_id.op must be one of \"eq\", \"ne\", \"sw\", \"ew\", \"co\" (got \"gt\")"
    )
    assert.strictEqual(
      filterFailure({ last_conversation_timestamp: { type: "number", op: "co", value: 1 } }),
      "filter_criteria.last_conversation_timestamp.op must be one of \"eq\", \"ne\", \"gt\", \"ge\", \"lt\", \"le\" (got \"co\")"
    )
    assert.strictEqual(
      filterFailure({ do_not_call: { type: "boolean", op: "ne", value: true } }),
      "filter_criteria.do_not_call.op must be \"eq\" (got \"ne\")"
    )
    assert.strictEqual(
      filterFailure({ tags: { type: "enum", op: "eq", value: ["a"] } }),
      "filter_criteria.tags.op must be \"in\" (got \"eq\")"
    )
    assert.strictEqual(
      filterFailure({ last_conversation_timestamp: { type: "range", op: "in", value: [1, 2] } }),
      "filter_criteria.last_conversation_timestamp.op must be \"bt\" (got \"in\")"
    )
    assert.strictEqual(
      filterFailure({ external_id: { type: "present", op: "eq" } }),
      "filter_criteria.external_id.op must be one of \"pr\", \"np\" (got \"eq\")"
    )
  })

  it("checks the values", () => {
    assert.strictEqual(
      filterFailure({ external_id: { type: "string", value: 5 } }),
      "filter_criteria.external_id.value must be a string (got 5)"
    )
    assert.strictEqual(
      filterFailure({ last_conversation_timestamp: { type: "range", value: [10, 1] } }),
      "filter_criteria.last_conversation_timestamp.value must be [lower, upper] with lower <= upper (got [10,1])"
    )
    assert.strictEqual(
      filterFailure({ last_conversation_timestamp: { type: "range", value: [1] } }),
      "filter_criteria.last_conversation_timestamp.value[1] is required"
    )
    assert.strictEqual(
      filterFailure({ tags: { type: "enum", value: [] } }),
      "filter_criteria.tags.value must be a list of at least one value (got [])"
    )
    assert.strictEqual(
      filterFailure({ custom_fields: [{ type: "string", value: "x" }] }),
      "filter_criteria.custom_fields[0].key is required"
    )
  })

  it("rejects unknown fields inside a condition (decision 0105)", () => {
    assert.strictEqual(
      filterFailure({ external_id: { type: "string", value: "a", case: "insensitive" } }),
      "filter_criteria.external_id.case is not a known field of this request (got \"insensitive\")"
    )
    assert.strictEqual(
      filterFailure({ custom_fields: [{ key: "plan", type: "enum", value: ["pro"], negate: true }] }),
      "filter_criteria.custom_fields[0].negate is not a known field of this request (got true)"
    )
  })
})

describe("ListContactsRequest in JSON Schema", () => {
  it("lists the seven filter members and the limit range, for the OpenAPI document", () => {
    const document = Schema.toJsonSchemaDocument(ListContactsRequest)
    const criteria = document.definitions["ContactFilterCriteriaEncoded"] as {
      readonly properties: Record<string, unknown>
    }
    assert.deepStrictEqual<unknown>(Object.keys(criteria.properties), [
      "external_id",
      "last_conversation_timestamp",
      "custom_fields",
      "contact_id",
      "phone_number",
      "do_not_call",
      "tags"
    ])
    const request = document.definitions["ListContactsRequestEncoded"] as {
      readonly properties: Record<string, Record<string, unknown>>
    }
    assert.strictEqual(request.properties["limit"]?.["minimum"], 1)
    assert.strictEqual(request.properties["limit"]?.["maximum"], 1000)
  })
})

describe("ListContactsResponse", () => {
  it("encodes a page of contacts", () => {
    const contact = {
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
    const page = { has_more: false, items: [contact], total: 1 }
    const response = Schema.decodeUnknownSync(ListContactsResponse)(page)
    assert.instanceOf(response.items[0], Contact)
    assert.deepStrictEqual<unknown>(Schema.encodeSync(ListContactsResponse)(response), page)
  })

  it.prop("keeps its wire form through decode and encode", [ListContactsRequest], ([request]) => {
    const wire = JSON.parse(JSON.stringify(Schema.encodeSync(ListContactsRequest)(request)))
    const decodedRequest = Schema.decodeUnknownSync(ListContactsBody)(wire)
    assert.deepStrictEqual<unknown>(
      JSON.parse(JSON.stringify(Schema.encodeSync(ListContactsRequest)(decodedRequest))),
      wire
    )
  })
})
