import { assert, layer } from "@effect/vitest"
import type { Contact } from "@svc/domain/models/Contact.ts"
import { CreateContactRequest } from "@svc/domain/models/ContactInput.ts"
import type { StringFilter } from "@svc/domain/models/FilterCondition.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import {
  type ContactFilterCriteria,
  type CustomFieldFilter,
  ListContactsBody,
  ListContactsRequest
} from "@svc/domain/models/ListContacts.ts"
import { makeCursorCodec } from "@svc/domain/Pagination.ts"
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import * as ContactSeed from "../../src/contacts/ContactSeed.ts"
import * as ContactsQuery from "../../src/contacts/ContactsQuery.ts"
import { ContactsRepo, toContact } from "../../src/contacts/ContactsRepo.ts"
import { CursorKeys } from "../../src/db/CursorKeys.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const Keys = Layer.succeed(CursorKeys, makeCursorCodec({ secret: "contacts list test secret, 32 bytes long" }))
const TestLayer = ContactsRepo.layer.pipe(Layer.provideMerge(Keys), Layer.provideMerge(TestDatabase.layer))

const decodeBody = Schema.decodeUnknownSync(ListContactsBody)

// The HTTP edge refuses control characters in search_query (decision 0105); the store still removes them for
// any other caller, so a request holding them is built here without the schema's checks.
const request = (body: Record<string, unknown> | null): ListContactsRequest => {
  const { search_query, ...rest } = body ?? {}
  const decoded = decodeBody(body === null ? null : rest)
  return typeof search_query === "string"
    ? new ListContactsRequest({ ...decoded, search_query }, { disableChecks: true })
    : decoded
}
const create = Schema.decodeUnknownSync(CreateContactRequest)

const ORG = OrgId.make("org-list")
const OTHER = OrgId.make("org-other")
const SEED_NOW = 1_750_000_000_000

// ---------------------------------------------------------------------------------------------
// The reference: the rules of list-contacts over the org's contacts in memory.

const stringMatches = (value: string | null | undefined, filter: StringFilter): boolean => {
  switch (filter.op) {
    case "eq":
      return value === filter.value
    case "ne":
      return value !== filter.value
    case "sw":
      return value != null && value.startsWith(filter.value)
    case "ew":
      return value != null && value.endsWith(filter.value)
    case "co":
      return value != null && value.includes(filter.value)
  }
}

const numberMatches = (value: number, op: "eq" | "ne" | "gt" | "ge" | "lt" | "le", bound: number): boolean => {
  switch (op) {
    case "eq":
      return value === bound
    case "ne":
      return value !== bound
    case "gt":
      return value > bound
    case "ge":
      return value >= bound
    case "lt":
      return value < bound
    case "le":
      return value <= bound
  }
}

const customMatches = (fields: Contact["custom_fields"], filter: CustomFieldFilter): boolean => {
  const value = Object.hasOwn(fields, filter.key) ? fields[filter.key] : undefined
  switch (filter.type) {
    case "string":
      if (filter.op === "ne") return !(typeof value === "string" && value === filter.value)
      return typeof value === "string" && stringMatches(value, filter)
    case "number":
      if (filter.op === "ne") return !(typeof value === "number" && value === filter.value)
      return typeof value === "number" && numberMatches(value, filter.op, filter.value)
    case "boolean":
      return value === filter.value
    case "range":
      return typeof value === "number" && value >= filter.value[0] && value <= filter.value[1]
    case "enum":
      return typeof value === "string" && filter.value.includes(value)
    case "present":
      return (value !== undefined) === (filter.op === "pr")
  }
}

const criteriaMatch = (c: Contact, criteria: ContactFilterCriteria): boolean => {
  const last = c.last_conversation_timestamp ?? 0
  if (criteria.contact_id && !stringMatches(c.contact_id, criteria.contact_id)) return false
  if (criteria.phone_number && !stringMatches(c.phone_number, criteria.phone_number)) return false
  const external = criteria.external_id
  if (external) {
    if (external.type === "present") {
      if ((c.external_id !== undefined) !== (external.op === "pr")) return false
    } else if (!stringMatches(c.external_id, external)) return false
  }
  const lct = criteria.last_conversation_timestamp
  if (lct) {
    if (
      lct.type === "range"
        ? !(last >= lct.value[0] && last <= lct.value[1])
        : !numberMatches(last, lct.op, lct.value)
    ) {
      return false
    }
  }
  if (criteria.do_not_call && c.do_not_call !== criteria.do_not_call.value) return false
  if (criteria.tags && !c.contact_tags.some((t) => criteria.tags!.value.includes(t))) return false
  return (criteria.custom_fields ?? []).every((f) => customMatches(c.custom_fields, f))
}

const searchMatches = (c: Contact, query: string | undefined): boolean => {
  const q = ContactsQuery.normalizeSearch(query)?.toLowerCase()
  if (q === undefined) return true
  const fields = [c.phone_number, c.first_name, c.last_name, c.external_id, ...Object.values(c.custom_fields)]
  return fields.some((f) => f !== undefined && String(f).toLowerCase().includes(q))
}

const expected = (all: ReadonlyArray<Contact>, req: ListContactsRequest): Array<Contact> => {
  const rows = all.filter((c) => criteriaMatch(c, req.filter_criteria ?? {}) && searchMatches(c, req.search_query))
  const sign = req.sort_order === "asc" ? 1 : -1
  return rows.sort((a, b) => {
    const ka = a.last_conversation_timestamp ?? 0
    const kb = b.last_conversation_timestamp ?? 0
    if (ka !== kb) return sign * (ka - kb)
    return sign * (a.contact_id < b.contact_id ? -1 : a.contact_id > b.contact_id ? 1 : 0)
  })
}

const allContacts = (orgId: OrgId) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<Parameters<typeof toContact>[0]>(
      `SELECT ${ContactsQuery.contactColumns} FROM contacts WHERE org_id = $1`,
      [orgId]
    ).pipe(Effect.map((rows) => rows.map(toContact))))

/** Every page of `body` through its pagination keys; checks total and has_more on each page. */
const pageThrough = (orgId: OrgId, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const repo = yield* ContactsRepo
    const seen: Array<Contact> = []
    const totals: Array<number> = []
    let key: string | undefined
    for (let page = 0; page < 1000; page++) {
      const response = yield* repo.list(
        orgId,
        request({ ...body, ...(key === undefined ? {} : { pagination_key: key }) })
      )
      seen.push(...response.items)
      totals.push(response.total)
      assert.strictEqual(response.has_more, response.pagination_key !== undefined)
      if (!response.has_more) break
      assert.strictEqual(response.items.length, (body["limit"] as number | undefined) ?? 50)
      key = response.pagination_key
    }
    return { seen, totals }
  })

const ids = (contacts: ReadonlyArray<Contact>) => contacts.map((c) => c.contact_id)

// ---------------------------------------------------------------------------------------------
// Data: 300 seeded contacts plus hand-made ones for the edges (ties, metacharacters, typed fields).

const setUp = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const repo = yield* ContactsRepo
  for (const org of [ORG, OTHER]) {
    yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${org}, ${org}, 0)`
  }
  yield* ContactSeed.load([{ orgId: ORG, contacts: 300 }, { orgId: OTHER, contacts: 120 }], { now: SEED_NOW })
  const special = [
    { phone_number: "+15550000001", first_name: "100%_Sure\\Back", last_name: "Meta", external_id: "ext_%1" },
    { phone_number: "+15550000002", first_name: "1000xSureXBack", last_name: "Decoy", external_id: "extA%1" },
    { phone_number: "+15550000003", first_name: "Qwerty", last_name: "Zxcvb", custom_fields: { score: 10 } },
    { phone_number: "+15550000004", first_name: "Tie", custom_fields: { score: "10", vip: true } },
    { phone_number: "+15550000005", first_name: "Tie", custom_fields: { score: 10.5, vip: false } },
    { phone_number: "+15550000006", first_name: "Tie", tags: ["zz-rare"], custom_fields: { city: "Zürich" } },
    { phone_number: "+15550000007", first_name: "ÉLODIE", last_name: "Ünal", do_not_call: true }
  ]
  for (const body of special) yield* repo.create(ORG, create(body))
  // Three contacts share one last-conversation time: the contact id breaks the tie.
  yield* sql`UPDATE contacts SET last_conversation_timestamp = ${SEED_NOW - 1000}, conversation_count = 2
             WHERE org_id = ${ORG} AND first_name = 'Tie'`
  // Same number in the other org: must never show up in this org's results.
  yield* repo.create(OTHER, create({ phone_number: "+15550000003", first_name: "Qwerty", last_name: "Other" }))
  return yield* allContacts(ORG)
})

const REQUESTS: ReadonlyArray<Record<string, unknown>> = [
  {},
  { sort_order: "asc" },
  { search_query: "ann" },
  { search_query: "ANN", sort_order: "asc" },
  { search_query: "+1555" },
  { search_query: "springfield" },
  { search_query: "crm_" },
  { search_query: "zürich" },
  { search_query: "élodie" },
  { search_query: "%" },
  { search_query: "_" },
  { search_query: "\\" },
  { search_query: "0%_s" },
  { search_query: "tyzx" },
  { search_query: "y\u001fz" },
  { search_query: "qwerty zxcvb" },
  { search_query: "\u0000\u001f" },
  { filter_criteria: { external_id: { type: "present", op: "pr" } } },
  { filter_criteria: { external_id: { type: "present", op: "np" } }, sort_order: "asc" },
  { filter_criteria: { external_id: { type: "present" } } },
  { filter_criteria: { external_id: { type: "string", value: "ext_%1" } } },
  { filter_criteria: { external_id: { type: "string", op: "sw", value: "ext_" } } },
  { filter_criteria: { external_id: { type: "string", op: "ne", value: "ext_%1" } } },
  { filter_criteria: { external_id: { type: "string", op: "ew", value: "%1" } } },
  { filter_criteria: { external_id: { type: "string", op: "co", value: "a" } } },
  { filter_criteria: { last_conversation_timestamp: { type: "number", op: "eq", value: 0 } } },
  {
    filter_criteria: { last_conversation_timestamp: { type: "number", op: "gt", value: SEED_NOW - 200 * 86_400_000 } }
  },
  { filter_criteria: { last_conversation_timestamp: { type: "number", op: "ge", value: SEED_NOW - 1000 } } },
  { filter_criteria: { last_conversation_timestamp: { type: "number", op: "le", value: SEED_NOW - 1000 } } },
  { filter_criteria: { last_conversation_timestamp: { type: "number", op: "lt", value: 0.5 } } },
  { filter_criteria: { last_conversation_timestamp: { type: "number", op: "ne", value: 0 } } },
  { filter_criteria: { last_conversation_timestamp: { type: "number", value: 1e300 } } },
  { filter_criteria: { last_conversation_timestamp: { type: "range", value: [SEED_NOW - 1000, SEED_NOW - 1000] } } },
  {
    filter_criteria: {
      last_conversation_timestamp: { type: "range", op: "bt", value: [SEED_NOW - 400 * 86_400_000, SEED_NOW] }
    },
    sort_order: "asc"
  },
  { filter_criteria: { do_not_call: { type: "boolean", value: true } } },
  { filter_criteria: { do_not_call: { type: "boolean", op: "eq", value: false } } },
  { filter_criteria: { tags: { type: "enum", value: ["vip", "zz-rare"] } } },
  { filter_criteria: { tags: { type: "enum", op: "in", value: ["nobody-has-this"] } } },
  { filter_criteria: { phone_number: { type: "string", op: "sw", value: "+1555" } } },
  { filter_criteria: { phone_number: { type: "string", value: "+15550000003" } } },
  { filter_criteria: { contact_id: { type: "string", op: "sw", value: "0" } } },
  { filter_criteria: { custom_fields: [{ key: "plan", type: "string", value: "enterprise" }] } },
  { filter_criteria: { custom_fields: [{ key: "plan", type: "string", op: "ne", value: "free" }] } },
  { filter_criteria: { custom_fields: [{ key: "city", type: "string", op: "sw", value: "Spring" }] } },
  { filter_criteria: { custom_fields: [{ key: "company", type: "string", op: "ew", value: "Inc" }] } },
  { filter_criteria: { custom_fields: [{ key: "account_manager", type: "string", op: "co", value: "'" }] } },
  { filter_criteria: { custom_fields: [{ key: "score", type: "number", value: 10 }] } },
  { filter_criteria: { custom_fields: [{ key: "score", type: "string", value: "10" }] } },
  { filter_criteria: { custom_fields: [{ key: "score", type: "number", op: "ne", value: 10 }] } },
  { filter_criteria: { custom_fields: [{ key: "lifetime_value", type: "number", op: "gt", value: 1000.5 }] } },
  { filter_criteria: { custom_fields: [{ key: "lifetime_value", type: "number", op: "le", value: 20 }] } },
  { filter_criteria: { custom_fields: [{ key: "lifetime_value", type: "range", value: [100, 2500.25] }] } },
  { filter_criteria: { custom_fields: [{ key: "vip", type: "boolean", value: true }] } },
  { filter_criteria: { custom_fields: [{ key: "plan", type: "enum", value: ["pro", "enterprise"] }] } },
  { filter_criteria: { custom_fields: [{ key: "language", type: "present", op: "pr" }] } },
  { filter_criteria: { custom_fields: [{ key: "language", type: "present", op: "np" }] } },
  // text PostgreSQL cannot hold matches no stored value; a negated condition matches everything
  { search_query: "\ud800" },
  { filter_criteria: { external_id: { type: "string", value: "crm_\u0000" } } },
  { filter_criteria: { external_id: { type: "string", op: "ne", value: "crm_\u0000" } } },
  { filter_criteria: { tags: { type: "enum", value: ["vip\u0000", "\udc00"] } } },
  { filter_criteria: { custom_fields: [{ key: "plan\u0000", type: "present", op: "np" }] } },
  { filter_criteria: { custom_fields: [{ key: "\ud800", type: "string", value: "free" }] } },
  { filter_criteria: { custom_fields: [{ key: "plan", type: "string", op: "co", value: "\u0000" }] } },
  { filter_criteria: { custom_fields: [{ key: "plan", type: "enum", value: ["\u0000", "pro"] }] } },
  {
    filter_criteria: {
      custom_fields: [
        { key: "plan", type: "enum", value: ["starter", "pro"] },
        { key: "source", type: "present" }
      ],
      external_id: { type: "present", op: "pr" },
      last_conversation_timestamp: { type: "number", op: "gt", value: 0 }
    },
    search_query: "a",
    sort_order: "asc"
  }
]

layer(TestLayer, { timeout: 120_000 })("ContactsRepo.list", (it) => {
  it.effect("pages through every request exactly as the rules say: matches, order, total, has_more", () =>
    Effect.gen(function*() {
      const all = yield* setUp
      assert.strictEqual(all.length, 307)
      for (const [index, body] of REQUESTS.entries()) {
        const decoded = request(body)
        const want = expected(all, decoded)
        const limit = want.length > 60 ? 41 : 7
        const { seen, totals } = yield* pageThrough(ORG, { ...body, limit })
        const label = `request ${index}: ${JSON.stringify(body)}`
        assert.deepStrictEqual(ids(seen), ids(want), label)
        assert.isTrue(totals.every((t) => t === want.length), `${label}: totals ${totals} vs ${want.length}`)
      }
    }))

  it.effect("the hand-made edges give the results a person expects", () =>
    Effect.gen(function*() {
      const repo = yield* ContactsRepo
      const names = (body: Record<string, unknown>) =>
        repo.list(ORG, request(body)).pipe(Effect.map((r) => r.items.map((c) => c.first_name)))
      // % _ \ are literal: only the contact whose name has them, not the decoy with x in their place
      assert.deepStrictEqual(yield* names({ search_query: "0%_sure\\b" }), ["100%_Sure\\Back"])
      // a match never spans two fields, and control characters cannot join them
      assert.deepStrictEqual(yield* names({ search_query: "tyzx" }), [])
      assert.deepStrictEqual(yield* names({ search_query: "qwerty\u001fzxcvb" }), [])
      assert.deepStrictEqual(yield* names({ search_query: "QWERTY" }), ["Qwerty"])
      assert.deepStrictEqual(yield* names({ search_query: "élodie" }), ["ÉLODIE"])
      // typed custom fields: the number 10 and the string "10" are different values
      assert.deepStrictEqual(
        yield* names({ filter_criteria: { custom_fields: [{ key: "score", type: "number", value: 10 }] } }),
        ["Qwerty"]
      )
      assert.deepStrictEqual(
        yield* names({ filter_criteria: { custom_fields: [{ key: "score", type: "string", value: "10" }] } }),
        ["Tie"]
      )
      // ties on the timestamp: contact id decides, in the requested direction
      const ties = yield* repo.list(ORG, request({ search_query: "tie", sort_order: "desc" }))
      const tieIds = ties.items.filter((c) => c.first_name === "Tie").map((c) => c.contact_id)
      assert.strictEqual(tieIds.length, 3)
      assert.deepStrictEqual(tieIds, [...tieIds].sort().reverse())
    }))

  it.effect("defaults: 50 newest-first contacts, never contacted last and without the field", () =>
    Effect.gen(function*() {
      const repo = yield* ContactsRepo
      const first = yield* repo.list(ORG, request(null))
      assert.strictEqual(first.items.length, 50)
      assert.strictEqual(first.total, 307)
      assert.isTrue(first.has_more)
      const asc = yield* repo.list(ORG, request({ sort_order: "asc", limit: 1000 }))
      assert.strictEqual(asc.items.length, 307)
      assert.isFalse(asc.has_more)
      assert.isFalse("pagination_key" in asc)
      const never = asc.items.filter((c) => c.last_conversation_timestamp === undefined)
      assert.isAbove(never.length, 50)
      assert.deepStrictEqual(ids(asc.items.slice(0, never.length)), ids(never), "never contacted sorts as 0")
    }))

  it.effect("skip pages are the same rows as cursor pages, with the exact total", () =>
    Effect.gen(function*() {
      const repo = yield* ContactsRepo
      const all = yield* allContacts(ORG)
      for (
        const body of [{}, { search_query: "a" }, {
          filter_criteria: { do_not_call: { type: "boolean", value: false } }
        }]
      ) {
        const want = expected(all, request(body))
        for (const skip of [0, 10, want.length - 3, want.length, want.length + 5]) {
          const page = yield* repo.list(ORG, request({ ...body, skip, limit: 7 }))
          assert.deepStrictEqual(
            ids(page.items),
            ids(want.slice(skip, skip + 7)),
            `${JSON.stringify(body)} skip ${skip}`
          )
          assert.strictEqual(page.total, want.length)
          assert.strictEqual(page.has_more, skip + 7 < want.length)
          if (page.has_more) {
            const next = yield* repo.list(ORG, request({ ...body, limit: 7, pagination_key: page.pagination_key }))
            assert.deepStrictEqual(ids(next.items), ids(want.slice(skip + 7, skip + 14)))
          }
        }
      }
    }))

  it.effect("refuses a key from another org, another query, or altered, as InvalidPaginationKey", () =>
    Effect.gen(function*() {
      const repo = yield* ContactsRepo
      const mine = yield* repo.list(ORG, request({ limit: 5, search_query: "a" }))
      const key = mine.pagination_key!
      const foreign = yield* Effect.flip(
        repo.list(OTHER, request({ limit: 5, search_query: "a", pagination_key: key }))
      )
      assert.strictEqual(foreign._tag, "InvalidPaginationKey")
      assert.include(foreign.message, "different organization")
      const otherQuery = yield* Effect.flip(
        repo.list(ORG, request({ limit: 5, search_query: "b", pagination_key: key }))
      )
      assert.include(otherQuery.message, "different query")
      const otherOrder = yield* Effect.flip(
        repo.list(ORG, request({ limit: 5, search_query: "a", sort_order: "asc", pagination_key: key }))
      )
      assert.include(otherOrder.message, "different query")
      const altered = key.slice(0, 20) + (key[20] === "A" ? "B" : "A") + key.slice(21)
      const tampered = yield* Effect.flip(repo.list(ORG, request({ search_query: "a", pagination_key: altered })))
      assert.strictEqual(tampered._tag, "InvalidPaginationKey")
      const garbage = yield* Effect.flip(repo.list(ORG, request({ pagination_key: "not-a-key" })))
      assert.strictEqual(garbage._tag, "InvalidPaginationKey")
      // limit is not part of the query: a client may change its page size between pages
      const bigger = yield* repo.list(ORG, request({ limit: 9, search_query: "a", pagination_key: key }))
      assert.strictEqual(bigger.items.length, 9)
    }))

  it.effect("the unfiltered total is live; a filtered total is counted with the first page and carried", () =>
    Effect.gen(function*() {
      const repo = yield* ContactsRepo
      const plain = yield* repo.list(ORG, request({ limit: 3 }))
      const searched = yield* repo.list(ORG, request({ limit: 1, search_query: "zzcarried" }))
      assert.strictEqual(searched.total, 0)
      yield* repo.create(ORG, create({ phone_number: "+15550000010", first_name: "zzcarried-1" }))
      yield* repo.create(ORG, create({ phone_number: "+15550000011", first_name: "zzcarried-2" }))
      const first = yield* repo.list(ORG, request({ limit: 1, search_query: "zzcarried" }))
      assert.strictEqual(first.total, 2)
      yield* repo.create(ORG, create({ phone_number: "+15550000012", first_name: "zzcarried-3" }))
      const second = yield* repo.list(
        ORG,
        request({ limit: 1, search_query: "zzcarried", pagination_key: first.pagination_key })
      )
      assert.strictEqual(second.total, 2, "the key carries the total of its listing")
      const next = yield* repo.list(ORG, request({ limit: 3, pagination_key: plain.pagination_key }))
      assert.strictEqual(next.total, plain.total + 3, "the maintained count is read on every page")
    }))

  it.effect("an org without contacts lists nothing, with total 0", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES ('org-empty', 'empty', 0)`
      const repo = yield* ContactsRepo
      for (const body of [{}, { search_query: "a" }, { skip: 10 }]) {
        const page = yield* repo.list(OrgId.make("org-empty"), request(body))
        assert.deepStrictEqual([page.items.length, page.total, page.has_more], [0, 0, false])
      }
    }))
})
