// POST /list-contacts answers with the page PostgreSQL wrote as JSON (decision 0640). Over HTTP it must be the
// response the schema path made before: the same bytes as the schema encoding of ContactsRepo.list's page, the
// builder's status and content type, and every middleware rule around it (request id, rate-limit headers, 401,
// 400 for unknown fields and bad keys, 429).
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { ListContactsBody, ListContactsResponse } from "@svc/domain/models/ListContacts.ts"
import { ContactsRepo } from "@svc/store/contacts/ContactsRepo.ts"
import { CursorKeys } from "@svc/store/db/CursorKeys.ts"
import { Effect, Layer, Schema } from "effect"
import * as TestServer from "../support/TestServer.ts"

let server: TestServer.TestServer
let org: { orgId: OrgId; key: string }

const encode = Schema.encodeSync(ListContactsResponse)
const decodeBody = Schema.decodeUnknownSync(ListContactsBody)

/** The page as the schema path encodes it, straight from the repository over the server's database. */
const schemaBody = (body: Record<string, unknown>) =>
  server.run(
    Effect.flatMap(ContactsRepo, (repo) => repo.list(org.orgId, decodeBody(body))).pipe(
      Effect.map((page) => JSON.stringify(encode(page))),
      Effect.provide(ContactsRepo.layer.pipe(Layer.provide(CursorKeys.layer)))
    )
  )

const NAMES = ["Zoë \"Q\" \\ O'Neil", "\u2028line\u2029", "😀 𝄞", "tab\tand\nnewline", "\u001f\u007f\u0085", "中文"]

beforeAll(async () => {
  server = await TestServer.start({ SVC_RATE_LIMIT: "1000" })
  org = await server.org("json")
  for (let i = 0; i < 23; i++) {
    const response = await server.request("POST", "/create-contact", {
      body: {
        phone_number: `+1555100${String(i).padStart(4, "0")}`,
        ...(i % 3 === 0 ? {} : { first_name: NAMES[i % NAMES.length] }),
        ...(i % 4 === 0 ? {} : { last_name: NAMES[(i + 1) % NAMES.length] }),
        ...(i % 2 === 0 ? { external_id: `crm-${i}` } : {}),
        do_not_call: i % 5 === 0,
        tags: i % 2 === 0 ? ["vip", NAMES[i % NAMES.length]!] : [],
        custom_fields: { plan: NAMES[i % NAMES.length]!, score: i * 1.25, active: i % 2 === 0, n: i }
      }
    })
    assert.strictEqual(response.status, 201, response.text)
  }
})
afterAll(() => server.close())

describe("POST /list-contacts from PostgreSQL's JSON", () => {
  it("sends the schema encoding's bytes on every page, with the builder's status and headers", async () => {
    for (const body of [{}, { limit: 5 }, { limit: 4, sort_order: "asc" }, { limit: 3, search_query: "😀" }]) {
      let key: string | undefined
      for (let page = 0; page < 10; page++) {
        const sent = key === undefined ? body : { ...body, pagination_key: key }
        const response = await server.request("POST", "/list-contacts", { body: sent })
        assert.strictEqual(response.status, 200)
        assert.strictEqual(response.text, await schemaBody(sent), JSON.stringify(sent))
        assert.strictEqual(response.headers.get("content-type"), "application/json")
        assert.strictEqual(response.headers.get("ratelimit-limit"), "1000")
        assert.match(response.headers.get("x-request-id") ?? "", /^[\w-]{8,}$/)
        const json = response.json as { has_more: boolean; pagination_key?: string }
        if (!json.has_more) break
        key = json.pagination_key
      }
    }
  })

  it("keeps the middleware's answers: 401, unknown fields, bad keys, bad queries, the request id", async () => {
    const noKey = await server.request("POST", "/list-contacts", { key: null, body: {} })
    assert.strictEqual(noKey.status, 401)
    assert.deepStrictEqual(noKey.json, {
      status: "error",
      message: "API key missing: send the header Authorization: Bearer <API_KEY>"
    })
    const unknown = await server.request("POST", "/list-contacts", { body: { limit: 5, colour: "red" } })
    assert.strictEqual(unknown.status, 400)
    assert.match(String((unknown.json as { message: string }).message), /colour/)
    const badKey = await server.request("POST", "/list-contacts", { body: { pagination_key: "AAAAAAAAAAAAAAAAAAAA" } })
    assert.strictEqual(badKey.status, 400)
    assert.match(String((badKey.json as { message: string }).message), /pagination_key/)
    const query = await server.request("POST", "/list-contacts?limit=5", { body: {} })
    assert.strictEqual(query.status, 400)
    const tagged = await server.request("POST", "/list-contacts", { body: {}, headers: { "x-request-id": "req-42" } })
    assert.strictEqual(tagged.headers.get("x-request-id"), "req-42")
  })

  it("counts against the rate limit and answers 429 past it", async () => {
    const limited = await TestServer.start({ SVC_RATE_LIMIT: "2" })
    try {
      await limited.org("limited")
      const first = await limited.request("POST", "/list-contacts", { body: {} })
      assert.strictEqual(first.status, 200)
      assert.strictEqual(first.text, "{\"has_more\":false,\"items\":[],\"total\":0}")
      assert.strictEqual(first.headers.get("ratelimit-remaining"), "1")
      assert.strictEqual((await limited.request("POST", "/list-contacts", { body: {} })).status, 200)
      const refused = await limited.request("POST", "/list-contacts", { body: {} })
      assert.strictEqual(refused.status, 429)
      assert.strictEqual(refused.headers.get("ratelimit-remaining"), "0")
    } finally {
      await limited.close()
    }
  })
})
