import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { ContactImportLine, decodePlainLine } from "../../src/models/ContactImportLine.ts"

const decode = Schema.decodeUnknownExit(ContactImportLine, { onExcessProperty: "error" })

const valid: ReadonlyArray<Record<string, unknown>> = [
  { phone_number: "+14155550100" },
  {
    contact_id: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
    org_id: "org_1",
    phone_number: "+442071838750",
    first_name: "Zoë",
    last_name: "Ødegaard",
    external_id: "crm_1",
    do_not_call: false,
    contact_tags: ["vip", "lead"],
    custom_fields: { plan: "pro", seats: 3, ltv: 12.5, trial: false, gone: null },
    conversation_count: 12,
    last_conversation_timestamp: 1_700_000_000_000,
    created_timestamp: 1_600_000_000_000,
    user_modified_timestamp: 1_650_000_000_000
  },
  { phone_number: "+1", tags: [], last_conversation_timestamp: null, conversation_count: 0 }
]

// every field set to each of these values, one at a time, on every valid line
const values: ReadonlyArray<unknown> = [
  undefined,
  null,
  true,
  0,
  -1,
  1.5,
  2_147_483_647,
  2_147_483_648,
  2 ** 53,
  Number.MAX_VALUE,
  "",
  "text",
  "+14155550199",
  "+0123",
  "a\u0000b",
  "\ud800",
  "a\u001fb",
  "tab\there",
  "x".repeat(100),
  "x".repeat(101),
  [],
  ["a"],
  ["a\u001fb"],
  ["\u0000"],
  [1],
  {},
  { k: "v" },
  { k: 1, b: true, n: null },
  { k: { nested: 1 } },
  { k: [1] },
  { "k\u0000": "v" },
  { k: "v\u0000" }
]
const fields = [
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
  "org_id",
  "unknown_field"
]

describe("ContactImportLine.decodePlainLine", () => {
  it("accepts the plainly valid lines, returning what the schema decodes", () => {
    for (const line of valid) {
      const fast = decodePlainLine(line)
      const exit = decode(line)
      assert.strictEqual(exit._tag, "Success")
      assert.isDefined(fast, JSON.stringify(line))
      if (exit._tag === "Success") assert.deepStrictEqual({ ...fast }, { ...exit.value })
    }
  })

  it("never accepts a line the schema refuses, and agrees with it on every line it accepts", () => {
    let accepted = 0
    let refused = 0
    for (const base of valid) {
      for (const field of fields) {
        for (const value of values) {
          const line: Record<string, unknown> = { ...base }
          if (value === undefined) delete line[field]
          else line[field] = value
          const json = JSON.parse(JSON.stringify(line)) as unknown
          const fast = decodePlainLine(json)
          const exit = decode(json)
          if (fast === undefined) continue
          assert.strictEqual(exit._tag, "Success", `fast path accepted ${JSON.stringify(json)}`)
          if (exit._tag === "Success") assert.deepStrictEqual({ ...fast }, { ...exit.value })
          accepted++
        }
      }
    }
    for (const json of [null, [], "x", 1, { phone_number: "+1", tags: [], contact_tags: [] }]) {
      assert.isUndefined(decodePlainLine(json))
      refused++
    }
    // the grid exercises both sides
    assert.isAbove(accepted, 100)
    assert.strictEqual(refused, 5)
  })
})
