// Issue 27, item 2: update-call accepted metadata nested 4,000 levels deep, and from then on every list-calls page
// holding the call answered 500 for the whole org (the read path's encoder ran out of stack), until someone deleted or
// rewrote the call. Rows stored before the nesting limit (decision 0106) are repaired on the read path: a free-form
// member nested past 64 levels is answered as {"svc_error": "..."}, the rest of the call and the page as they are.
// The rows are written here the way they were then: directly in SQL, past what the API accepts today.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import Retell from "retell-sdk"
import * as TestServer from "../support/TestServer.ts"

let server: TestServer.TestServer
let org: { orgId: string; key: string }

const LEVELS = 5_000
const deep = "{\"a\":".repeat(LEVELS) + "1" + "}".repeat(LEVELS)

beforeAll(async () => {
  server = await TestServer.start()
  org = await server.org()
  await server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO calls (org_id, call_id, batch_call_id, from_number, to_number, call_status, outcome,
        disconnection_reason, start_timestamp, end_timestamp, duration_ms, analysis, metadata, recorded_timestamp)
      VALUES
        (${org.orgId}, 'call_deep_metadata', 'batch_old', '+14155550100', '+14155550101', 'ended', 'answered',
          'user_hangup', 3000, 4000, 1000, '{"call_successful": true}'::jsonb, ${deep}::jsonb, 3000),
        (${org.orgId}, 'call_deep_analysis', 'batch_old', '+14155550100', '+14155550102', 'ended', 'answered',
          'user_hangup', 2000, 3000, 1000, jsonb_build_object('call_successful', true, 'score', ${deep}::jsonb),
          '{"crm_id": "c2"}'::jsonb, 2000),
        (${org.orgId}, 'call_fine', 'batch_old', '+14155550100', '+14155550103', 'ended', 'answered',
          'user_hangup', 1000, 2000, 1000, '{}'::jsonb, '{"crm_id": "c3"}'::jsonb, 1000)`
  }))
})
afterAll(() => server.close())

const marker = (text: string) => ({ svc_error: text })

describe("a call stored with metadata nested past the limit", () => {
  it("list-calls answers 200 for the page, that member replaced by a marked error value", async () => {
    const response = await server.request("POST", "/v3/list-calls", { body: { sort_order: "descending" } })
    assert.strictEqual(response.status, 200, response.text.slice(0, 300))
    const items = (response.json as { items: Array<Record<string, unknown>> }).items
    assert.deepStrictEqual(items.map((c) => c["call_id"]), ["call_deep_metadata", "call_deep_analysis", "call_fine"])
    assert.deepStrictEqual(
      items[0]!["metadata"],
      marker(
        "metadata is not shown: it was stored nested more than 64 levels deep, before svc refused such values; " +
          "replace it with PATCH /v2/update-call/{call_id}"
      )
    )
    assert.deepStrictEqual(items[0]!["call_analysis"], { call_successful: true, custom_analysis_data: {} })
    assert.deepStrictEqual(items[1]!["metadata"], { crm_id: "c2" })
    assert.deepStrictEqual(items[1]!["call_analysis"], {
      call_successful: true,
      custom_analysis_data: marker(
        "custom_analysis_data is not shown: it was stored nested more than 64 levels deep, before svc refused " +
          "such values; it cannot be changed through the API"
      )
    })
    assert.deepStrictEqual(items[2]!["metadata"], { crm_id: "c3" })
    // a filter that reaches the call, and the page the schema encodes (include_total takes the same path)
    const filtered = await server.request("POST", "/v3/list-calls", {
      body: {
        include_total: true,
        filter_criteria: { call_id: { type: "string", op: "eq", value: "call_deep_metadata" } }
      }
    })
    assert.strictEqual(filtered.status, 200, filtered.text.slice(0, 300))
    assert.strictEqual((filtered.json as { total: number }).total, 1)
  })

  it("get-call answers it the same way, and the vendor's SDK reads both", async () => {
    const response = await server.request("GET", "/v2/get-call/call_deep_metadata")
    assert.strictEqual(response.status, 200, response.text.slice(0, 300))
    assert.property((response.json as { metadata: object }).metadata, "svc_error")
    const sdk = new Retell({ apiKey: org.key, baseURL: "http://svc.test", fetch: server.fetch, maxRetries: 0 })
    const page = await sdk.call.list({})
    assert.strictEqual(page.items.length, 3)
    const call = await sdk.call.retrieve("call_deep_analysis")
    assert.property(call.call_analysis?.custom_analysis_data as object, "svc_error")
  })

  it("update-call replaces it, and the call reads back whole", async () => {
    const updated = await server.request("PATCH", "/v2/update-call/call_deep_metadata", {
      body: { metadata: { crm_id: "c1", flattened: true } }
    })
    assert.strictEqual(updated.status, 200, updated.text.slice(0, 300))
    assert.deepStrictEqual((updated.json as { metadata: unknown }).metadata, { crm_id: "c1", flattened: true })
    const got = await server.request("GET", "/v2/get-call/call_deep_metadata")
    assert.deepStrictEqual((got.json as { metadata: unknown }).metadata, { crm_id: "c1", flattened: true })
  })
})
