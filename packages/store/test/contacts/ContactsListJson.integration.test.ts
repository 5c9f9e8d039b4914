// ContactsRepo.listJson (decision 0641): the page as JSON text built without the schema must be, byte for byte, the
// schema encoding of ContactsRepo.list's page (what the HTTP API sent before), over randomized contacts written
// straight into the table: unicode (astral, U+2028/2029, C0/C1 controls, quotes, backslashes), NULLs in every
// optional column, custom fields of every type, numbers jsonb keeps in a form JSON.stringify does not write
// (1.50, 1e2, 1e21, 0.1 with 20 digits), integer-like keys (which JavaScript orders first), and every page shape:
// first, cursor, skip, last, empty, filtered and searched.
import { assert, layer } from "@effect/vitest"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { ListContactsBody, ListContactsResponse } from "@svc/domain/models/ListContacts.ts"
import { makeCursorCodec } from "@svc/domain/Pagination.ts"
import { Effect, Exit, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import * as ContactsQuery from "../../src/contacts/ContactsQuery.ts"
import { type ContactRow, ContactsRepo, plainContact } from "../../src/contacts/ContactsRepo.ts"
import { CursorKeys } from "../../src/db/CursorKeys.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const ORG_JSON = OrgId.make("org-json")
const ORG_AWKWARD = OrgId.make("org-awkward")

const Keys = Layer.succeed(CursorKeys, makeCursorCodec({ secret: "contacts list json test secret, 32 bytes" }))
const TestLayer = ContactsRepo.layer.pipe(Layer.provideMerge(Keys), Layer.provideMerge(TestDatabase.layer))

const decodeBody = Schema.decodeUnknownSync(ListContactsBody)
const encodeResponse = Schema.encodeSync(ListContactsResponse)

/** A small seeded generator (mulberry32): the same contacts on every run, so a failure can be replayed. */
const random = (seed: number) => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <A>(items: ReadonlyArray<A>): A => items[int(items.length)]!
  return { next, int, pick }
}

// Characters JSON writers disagree on most: every C0 control but NUL (text cannot hold it), DEL and C1, quotes,
// backslash, slash, U+2028/2029, BOM, non-characters, astral ones (surrogate pairs in JavaScript), combining marks.
const SPECIAL = [
  ...Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)),
  "\u007f",
  "\u0085",
  "\u009f",
  "\"",
  "\\",
  "/",
  "'",
  "\u2028",
  "\u2029",
  "\ufeff",
  "\uffff",
  "\ufffd",
  "😀",
  "𝄞",
  "\u{10ffff}",
  "e\u0301",
  "ß",
  "İ",
  "中文",
  "<script>",
  "%_",
  "\\u0041"
]

const text = (r: ReturnType<typeof random>, maxLength = 12): string => {
  let out = ""
  const length = r.int(maxLength + 1)
  for (let i = 0; i < length; i++) {
    out += r.next() < 0.4 ? r.pick(SPECIAL) : String.fromCharCode(0x20 + r.int(0x5f))
  }
  return out
}

// custom-field numbers as jsonb holds them: JSON.stringify forms and forms it never writes
const NUMBER_TEXTS = [
  "0",
  "-1",
  "42",
  "0.1",
  "-2.5",
  "1.5e-7",
  "123456789.125",
  "9007199254740993",
  "1e21",
  "1e2",
  "1.50",
  "0.10000000000000000555",
  "0.000001",
  "0.0001",
  "100000000000000",
  "1000000000000000",
  "-0",
  "3.141592653589793",
  "1e400"
]

// numbers both write the same way: JSON.stringify's plain range where float8 also writes plain decimals
const PLAIN_NUMBER_TEXTS = ["0", "-1", "42", "0.1", "-2.5", "123456789.125", "-0", "3.141592653589793", "0.0001"]

const customFields = (r: ReturnType<typeof random>, awkward: boolean): string => {
  const entries: Array<string> = []
  const count = r.int(6)
  for (let i = 0; i < count; i++) {
    // integer-like keys are the awkward org's (JavaScript orders them first)
    const key = awkward && r.next() < 0.2 ? r.pick(["10", "2", "0", "007", "__proto__"]) : `${text(r, 8)}k`
    const kind = r.int(4)
    const value = kind === 0
      ? JSON.stringify(text(r))
      : kind === 1
      ? r.next() < 0.5 ? "true" : "false"
      : kind === 2
      ? String(r.next() < 0.5 ? r.int(1_000_000) : Math.round((r.next() - 0.5) * 10 ** r.int(12)) / 100)
      : awkward
      ? r.pick(NUMBER_TEXTS)
      : JSON.stringify(Number(r.pick(PLAIN_NUMBER_TEXTS)))
    entries.push(`${JSON.stringify(key)}:${value}`)
  }
  return `{${entries.join(",")}}`
}

/**
 * Writes `count` random contacts of `orgId`; `awkward` adds the custom fields PostgreSQL cannot spell as the schema
 * encodes them (the page falls back to the schema's encoding). Returns the contact ids.
 */
const insertContacts = (orgId: OrgId, count: number, seed: number, awkward: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const r = random(seed)
    for (let i = 0; i < count; i++) {
      const optional = () => r.next() < 0.3 ? null : text(r)
      const contacted = r.next() < 0.7
      // ties on the sort key, so that the contact id decides the order
      const last = contacted ? 1_700_000_000_000 + r.int(20) * 1000 : null
      const tags = Array.from({ length: r.int(4) }, () => text(r, 6))
      const fields = customFields(r, awkward)
      yield* sql.unsafe(
        `INSERT INTO contacts (org_id, contact_id, phone_number, first_name, last_name, external_id, do_not_call,
           contact_tags, custom_fields, conversation_count, last_conversation_timestamp, created_timestamp,
           user_modified_timestamp, search_text)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text[], $9::jsonb, $10, $11::bigint, $12::bigint, $13::bigint, '')`,
        [
          orgId,
          // eslint-disable-next-line no-control-regex
          `c-${String(i).padStart(4, "0")}-${text(r, 5).replace(/[\u0000-\u001f]/g, "")}x`,
          `+1555${String(i).padStart(7, "0")}`,
          optional(),
          optional(),
          optional(),
          r.next() < 0.2,
          tags,
          fields,
          r.int(50),
          last,
          r.int(1_800_000_000_000),
          r.int(1_800_000_000_000)
        ]
      )
    }
    // the search text, as the trigger would have written it
    yield* sql.unsafe(
      `UPDATE contacts SET search_text = ${
        ContactsQuery.searchTextExpression({
          phoneNumber: "phone_number",
          firstName: "first_name",
          lastName: "last_name",
          externalId: "external_id",
          customFields: "custom_fields"
        })
      } WHERE org_id = $1`,
      [orgId]
    )
  })

/** Pages through `body` with both paths and compares every page's bytes; returns the number of pages. */
const comparePages = (orgId: OrgId, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const repo = yield* ContactsRepo
    let key: string | undefined
    let pages = 0
    for (; pages < 400; pages++) {
      const { skip: _skip, ...rest } = body
      const request = decodeBody(key === undefined ? body : { ...rest, pagination_key: key })
      const fastExit = yield* Effect.exit(repo.listJson(orgId, request))
      const schemaExit = yield* Effect.exit(Effect.map(repo.list(orgId, request), encodeResponse))
      // a stored value the schema refuses (a custom field of 1e400 reads back as Infinity) fails both ways
      if (Exit.isFailure(schemaExit)) {
        assert.isTrue(Exit.isFailure(fastExit), `${JSON.stringify(body)} page ${pages}: only the schema path failed`)
        return pages + 1
      }
      assert.isTrue(Exit.isSuccess(fastExit), `${JSON.stringify(body)} page ${pages}: the fast path failed`)
      const fast = (fastExit as Exit.Success<string>).value
      const schema = schemaExit.value
      const want = JSON.stringify(schema)
      if (fast !== want) {
        // the first differing place, for a readable failure
        let at = 0
        while (at < fast.length && fast[at] === want[at]) at++
        assert.fail(
          `${JSON.stringify(body)} page ${pages}: differs at ${at}: ` +
            `${JSON.stringify(fast.slice(at - 40, at + 40))} vs ${JSON.stringify(want.slice(at - 40, at + 40))}`
        )
      }
      if (!schema.has_more) break
      key = schema.pagination_key
    }
    return pages + 1
  })

const REQUESTS: ReadonlyArray<Record<string, unknown>> = [
  {},
  { limit: 1 },
  { limit: 7, sort_order: "asc" },
  { limit: 100 },
  { limit: 1000 },
  { limit: 13, skip: 20 },
  { limit: 10, skip: 100_000 },
  { limit: 9, search_query: "e" },
  { limit: 9, search_query: "😀" },
  { limit: 9, search_query: "nothing matches this" },
  { limit: 11, filter_criteria: { external_id: { type: "present", op: "np" } } },
  { limit: 11, filter_criteria: { do_not_call: { type: "boolean", value: true } }, sort_order: "asc" },
  { limit: 11, filter_criteria: { last_conversation_timestamp: { type: "number", op: "gt", value: 0 } } },
  { filter_criteria: { last_conversation_timestamp: { type: "number", op: "lt", value: 0 } } }
]

layer(TestLayer, { timeout: 180_000 })("ContactsRepo.listJson", (it) => {
  it.effect("is byte for byte the schema encoding of list's page, on every page of every request", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (const org of ["org-json", "org-awkward", "org-empty"]) {
        yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${org}, ${org}, 0)`
      }
      yield* insertContacts(ORG_JSON, 240, 17, false)
      yield* insertContacts(ORG_AWKWARD, 120, 4242, true)
      // the random org holds only values the schema accepts: none of its rows takes the schema's way
      const rows = yield* sql.unsafe<ContactRow>(
        `SELECT ${ContactsQuery.contactColumns} FROM contacts WHERE org_id = 'org-json'`
      )
      assert.strictEqual(rows.length, 240)
      assert.isTrue(rows.every((r) => plainContact(r) !== undefined))
      let pages = 0
      for (const org of [ORG_JSON, ORG_AWKWARD, OrgId.make("org-empty")]) {
        for (const body of REQUESTS) pages += yield* comparePages(org, body)
      }
      assert.isAbove(pages, 200)
    }))

  it.effect("spells custom fields as the schema encoding does, and leaves what the schema refuses to it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* ContactsRepo
      const request = decodeBody({})
      const bothWays = Effect.all([
        Effect.exit(repo.listJson(OrgId.make("org-marks"), request)),
        Effect.exit(
          Effect.map(repo.list(OrgId.make("org-marks"), request), (page) => JSON.stringify(encodeResponse(page)))
        )
      ])
      yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES ('org-marks', 'marks', 0)`
      // [custom fields as stored, their JSON in the response or undefined when the page falls back]
      const cases: ReadonlyArray<readonly [string, string | undefined]> = [
        ["{\"a\": 1.5, \"b\": \"x\\u2028\\\"\", \"c\": true}", "{\"a\":1.5,\"b\":\"x\u2028\\\"\",\"c\":true}"],
        [
          "{\"a\": 1.50, \"b\": 1e2, \"c\": 1e21, \"d\": 0.00001, \"e\": 123456789012345678}",
          "{\"a\":1.5,\"b\":100,\"c\":1e+21,\"d\":0.00001,\"e\":123456789012345680}"
        ],
        // integer-like keys first, as JavaScript orders them; the others in jsonb's order (by length)
        ["{\"b\": 1, \"10\": 2, \"aa\": 3, \"2\": 4}", "{\"2\":4,\"10\":2,\"b\":1,\"aa\":3}"],
        ["{\"__proto__\": 1}", undefined],
        ["{\"a\": 1e400}", undefined],
        ["{\"a\": null}", undefined],
        ["{\"a\": [1]}", undefined],
        ["{\"a\": {\"b\": 1}}", undefined]
      ]
      for (const [index, [fields, json]] of cases.entries()) {
        yield* sql.unsafe(
          `INSERT INTO contacts (org_id, contact_id, phone_number, custom_fields, created_timestamp,
             user_modified_timestamp, search_text) VALUES ('org-marks', $1, $2, $3::jsonb, 0, 0, '')`,
          [`m${index}`, `+1666000000${index}`, fields]
        )
        const [fast, schema] = yield* bothWays
        // which way the page went: the plain object (fast) unless the schema refuses a value
        const [row] = yield* sql.unsafe<ContactRow>(
          `SELECT ${ContactsQuery.contactColumns} FROM contacts WHERE org_id = 'org-marks'`
        )
        assert.strictEqual(plainContact(row!) === undefined, json === undefined, fields)
        if (json === undefined) {
          // the schema refuses the value: the page takes the schema's way, and fails (or not) exactly as it does
          assert.strictEqual(Exit.isSuccess(fast), Exit.isSuccess(schema), fields)
          if (Exit.isSuccess(fast)) assert.strictEqual(fast.value, (schema as Exit.Success<string>).value, fields)
        } else {
          assert.isTrue(Exit.isSuccess(fast) && Exit.isSuccess(schema), fields)
          const text = (fast as Exit.Success<string>).value
          assert.strictEqual(text, (schema as Exit.Success<string>).value, fields)
          assert.include(
            text,
            `{"contact_id":"m${index}","org_id":"org-marks","phone_number":` +
              `"+1666000000${index}","created_timestamp":0,"do_not_call":false,"contact_tags":[],"custom_fields":` +
              `${json},"conversation_count":0,"user_modified_timestamp":0}`,
            fields
          )
        }
        yield* sql`DELETE FROM contacts WHERE org_id = 'org-marks'`
      }
      // a tag list holding NULL is not a list of strings: the schema's way again
      yield* sql`INSERT INTO contacts (org_id, contact_id, phone_number, contact_tags, created_timestamp,
                   user_modified_timestamp, search_text) VALUES ('org-marks', 't', '+16660000100', ARRAY['a', NULL], 0, 0, '')`
      const [fast, schema] = yield* bothWays
      const [tagged] = yield* sql.unsafe<ContactRow>(
        `SELECT ${ContactsQuery.contactColumns} FROM contacts WHERE org_id = 'org-marks'`
      )
      assert.isUndefined(plainContact(tagged!))
      assert.isTrue(Exit.isFailure(schema))
      assert.isTrue(Exit.isFailure(fast))
    }))
})
