// Issue 27, item 1 and "also seen": a 9 KB request nested ~4,500 levels deep answered 500 (recursive walkers ran out
// of stack), 4,000 levels were stored and broke list-calls, large integers in metadata were stored rounded, and a body
// without a Content-Type (or with a byte-order mark) skipped the body rules. The rules (decision 0106): objects and
// arrays nest at most 64 levels in a request body, the body's own object being the first; numbers within
// ±(2^53 - 1) (I-JSON, RFC 7493 §2.2); a body says Content-Type: application/json; one leading byte-order mark is
// skipped (RFC 8259 §8.1) and the rules apply after it. Each refusal is a 400 in the error shape naming the field.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as TestServer from "../support/TestServer.ts"

let server: TestServer.TestServer
let org: { orgId: string; key: string }
const FROM = "+14155550100"
const CALL = "call_limits_1"

/** JSON text of `levels` objects `{"a": ...}` around `inner`. */
const nestedText = (levels: number, inner = "0") => "{\"a\":".repeat(levels) + inner + "}".repeat(levels)

beforeAll(async () => {
  server = await TestServer.start()
  org = await server.org()
  await server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${org.orgId}, ${FROM}, 0)`
    yield* sql`INSERT INTO calls (org_id, call_id, from_number, to_number, call_status, recorded_timestamp)
      VALUES (${org.orgId}, ${CALL}, ${FROM}, '+14155550101', 'ended', 1)`
  }))
})
afterAll(() => server.close())

const batch = (metadata: string) =>
  `{"from_number":"${FROM}","tasks":[{"to_number":"+14155550102"},{"to_number":"+14155550103","metadata":${metadata}}]}`

const refused = async (method: string, path: string, raw: string, message: string | RegExp) => {
  const response = await server.request(method, path, { raw })
  assert.strictEqual(response.status, 400, `${method} ${path}: ${response.text.slice(0, 300)}`)
  assert.deepStrictEqual(Object.keys(response.json as object).sort(), ["message", "status"])
  const text = (response.json as { message: string }).message
  if (typeof message === "string") assert.strictEqual(text, message)
  else assert.match(text, message)
  assert.isNotNull(response.headers.get("x-request-id"))
}

const DEPTH_RULE = "is nested too deep: objects and arrays may nest at most 64 levels in a request body"

describe("nesting", () => {
  it("a 9 KB metadata nested 5,000 deep: 400 naming the field on create-batch-call and update-call (was 500)", async () => {
    const deep = nestedText(5_000)
    assert.isAtLeast(Buffer.byteLength(deep), 9_000)
    await refused("POST", "/create-batch-call", batch(deep), `tasks[1].metadata.a… ${DEPTH_RULE}`)
    await refused("PATCH", `/v2/update-call/${CALL}`, `{"metadata":${deep}}`, `metadata.a.a.a… ${DEPTH_RULE}`)
    // and list-calls still answers, the call's metadata unchanged
    const list = await server.request("POST", "/v3/list-calls", { body: {} })
    assert.strictEqual(list.status, 200, list.text.slice(0, 300))
  })

  it("counts 64 levels from the body's own object: the deepest metadata each endpoint takes, and one more", async () => {
    // update-call: the body, then metadata's 63 levels
    const update = await server.request("PATCH", `/v2/update-call/${CALL}`, { raw: `{"metadata":${nestedText(63)}}` })
    assert.strictEqual(update.status, 200, update.text.slice(0, 300))
    await refused("PATCH", `/v2/update-call/${CALL}`, `{"metadata":${nestedText(64)}}`, /^metadata\.a\.a\.a… /)
    // create-batch-call: the body, tasks, the task, then metadata's 61 levels
    const created = await server.request("POST", "/create-batch-call", { raw: batch(nestedText(61)) })
    assert.strictEqual(created.status, 200, created.text.slice(0, 300))
    await refused("POST", "/create-batch-call", batch(nestedText(62)), /^tasks\[1\]\.metadata\.a… /)
    // and what was accepted reads back whole
    const got = await server.request("GET", `/v2/get-call/${CALL}`)
    assert.strictEqual(got.status, 200)
    assert.deepStrictEqual((got.json as { metadata: unknown }).metadata, JSON.parse(nestedText(63)))
  })

  it("a whole body nested 50,000 deep answers 400 on every endpoint that takes a body, never 500", async () => {
    const contact = await server.request("POST", "/create-contact", { body: { phone_number: "+14155550150" } })
    const contactId = (contact.json as { contact_id: string }).contact_id
    const routes: ReadonlyArray<readonly [string, string]> = [
      ["POST", "/list-contacts"],
      ["POST", "/create-contact"],
      ["PATCH", `/update-contact/${contactId}`],
      ["POST", "/backfill-contact-analysis-data"],
      ["POST", "/create-batch-call"],
      ["POST", "/v3/list-calls"],
      ["PATCH", `/v2/update-call/${CALL}`]
    ]
    const bodies = [
      ["objects", nestedText(50_000)],
      ["arrays", "[".repeat(50_000) + "]".repeat(50_000)],
      ["a member", `{"name":${"[".repeat(50_000) + "]".repeat(50_000)}}`]
    ] as const
    for (const [method, path] of routes) {
      for (const [kind, raw] of bodies) {
        const response = await server.request(method, path, { raw })
        const context = `${method} ${path} ${kind}: ${response.status} ${response.text.slice(0, 200)}`
        // 400 naming the rule, or the body limit of a small endpoint (64 KiB: 50,000 levels of "{"a":" are 300 KB)
        assert.strictEqual(response.status, 400, context)
        assert.match((response.json as { message: string }).message, /nested too deep|is larger than/, context)
      }
    }
  })
})

describe("numbers", () => {
  it("an integer beyond 2^53 - 1 is refused naming the field, not stored rounded; 2^53 - 1 reads back exact", async () => {
    const big = "12345678901234567890"
    const rule = "is a number beyond ±9007199254740991 (2^53 - 1), the largest a JSON number holds exactly; " +
      "send it as a string"
    await refused("PATCH", `/v2/update-call/${CALL}`, `{"metadata":{"crm":{"id":${big}}}}`, `metadata.crm.id ${rule}`)
    await refused("POST", "/create-batch-call", batch(`{"ids":[1,${big}]}`), `tasks[1].metadata.ids[1] ${rule}`)
    await refused(
      "POST",
      "/create-contact",
      `{"phone_number":"+14155550151","custom_fields":{"crm":${big}}}`,
      `custom_fields.crm ${rule}`
    )
    await refused("PATCH", `/v2/update-call/${CALL}`, `{"metadata":{"x":1e400}}`, `metadata.x ${rule}`)
    const exact = await server.request("PATCH", `/v2/update-call/${CALL}`, {
      raw: `{"metadata":{"max":9007199254740991,"min":-9007199254740991,"f":0.1}}`
    })
    assert.strictEqual(exact.status, 200, exact.text)
    assert.include(exact.text, "9007199254740991", "written as sent")
    assert.deepStrictEqual((exact.json as { metadata: unknown }).metadata, {
      max: 9007199254740991,
      min: -9007199254740991,
      f: 0.1
    })
  })
})

describe("what a body is", () => {
  it("a body without a Content-Type is refused, not guessed to be JSON; an empty one needs none", async () => {
    const bytes = new TextEncoder().encode("{\"metadata\":{\"x\":\"a\\u0000b\"}}")
    // fetch sends no Content-Type for bytes; the test server adds one only to bodies given as text
    const response = await server.fetch(`http://svc.test/v2/update-call/${CALL}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${org.key}` },
      body: bytes
    })
    assert.strictEqual(response.status, 400)
    assert.deepStrictEqual(await response.json(), {
      status: "error",
      message: "Content-Type is missing: send the request body with Content-Type: application/json"
    })
    const batchBytes = await server.fetch("http://svc.test/create-batch-call", {
      method: "POST",
      headers: { authorization: `Bearer ${org.key}` },
      body: new TextEncoder().encode(batch("{}"))
    })
    assert.strictEqual(batchBytes.status, 400)
    assert.deepStrictEqual(await batchBytes.json(), {
      status: "error",
      message: "Content-Type is missing: send the request body with Content-Type: application/json"
    })
    const empty = await server.fetch("http://svc.test/list-contacts", {
      method: "POST",
      headers: { authorization: `Bearer ${org.key}` }
    })
    assert.strictEqual(empty.status, 200)
    const charset = await server.request("POST", "/list-contacts", {
      raw: "{\"limit\":1}",
      headers: { "content-type": "application/json; charset=utf-8" }
    })
    assert.strictEqual(charset.status, 200)
  })

  it("a leading byte-order mark is skipped, and the body's rules apply to what follows it", async () => {
    const BOM = "\ufeff"
    const ok = await server.request("POST", "/create-contact", { raw: `${BOM}{"phone_number":"+14155550152"}` })
    assert.strictEqual(ok.status, 201, ok.text)
    // the same messages as without the mark (the NUL slipped past the text rule before)
    await refused(
      "POST",
      "/create-contact",
      `${BOM}{"phone_number":"+14155550153","first_name":"a\\u0000b"}`,
      "first_name must not contain a NUL character (\\u0000) or an unpaired surrogate (\\ud800-\\udfff)"
    )
    await refused("PATCH", `/v2/update-call/${CALL}`, `${BOM}{"metadata":${nestedText(100)}}`, /^metadata\.a\.a\.a… /)
    await refused("POST", "/create-batch-call", `${BOM}${batch(nestedText(100))}`, /^tasks\[1\]\.metadata\.a… /)
  })
})
