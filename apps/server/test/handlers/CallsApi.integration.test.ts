// The calls API and contact history through the vendor's official SDK (retell-sdk 5.66.1, `baseURL` pointed at
// svc) and raw HTTP: shapes, filters, paging, update, delete, the error shape, and isolation between orgs.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ListCallsResponse } from "@svc/domain/models/Call.ts"
import { listCallsJson } from "@svc/domain/models/CallJson.ts"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import Retell from "retell-sdk"
import * as TestServer from "../support/TestServer.ts"

let server: TestServer.TestServer
let a: { orgId: string; key: string }
let b: { orgId: string; key: string }
const T0 = 1_800_000_000_000
const BATCH = "batch_call_sdk"

const sdk = (key: string) => new Retell({ apiKey: key, baseURL: "http://svc.test", fetch: server.fetch, maxRetries: 0 })

/**
 * 30 finished calls of one batch to +1415555{i}, a minute apart (every third not connected, the rest ended; even
 * ones successful), 5 calls of another batch, and one registered call (ringing).
 */
const seed = (orgId: string) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO calls (org_id, call_id, batch_call_id, from_number, to_number, agent_id, agent_version, call_status,
        outcome, disconnection_reason, start_timestamp, end_timestamp, duration_ms, analysis, metadata,
        dynamic_variables, recorded_timestamp)
      SELECT ${orgId}, 'call_' || ${orgId} || '_' || i, CASE WHEN i < 30 THEN ${BATCH} ELSE 'batch_call_other' END,
        '+14155550100', '+1415555' || lpad(i::text, 4, '0'), 'agent_1', 2,
        CASE WHEN i % 3 = 0 THEN 'not_connected' ELSE 'ended' END,
        CASE WHEN i % 3 = 0 THEN 'busy' ELSE 'answered' END,
        CASE WHEN i % 3 = 0 THEN 'dial_busy' ELSE 'user_hangup' END,
        ${T0} + i * 60000, ${T0} + i * 60000 + 1000 * i, 1000 * i,
        CASE WHEN i % 3 = 0 THEN '{}'::jsonb ELSE jsonb_build_object('call_successful', i % 2 = 0,
          'user_sentiment', 'Positive', 'interest_level', i % 5) END,
        jsonb_build_object('crm_id', 'c' || i), jsonb_build_object('first_name', 'n' || i), ${T0}
      FROM generate_series(0, 34) AS i`
    yield* sql`
      INSERT INTO calls (org_id, call_id, batch_call_id, from_number, to_number, call_status, recorded_timestamp)
      VALUES (${orgId}, ${`call_${orgId}_ringing`}, ${BATCH}, '+14155550100', '+14155559999', 'registered',
        ${T0 + 3_600_000})`
  }))

beforeAll(async () => {
  server = await TestServer.start()
  a = await server.org("a")
  b = await server.org("b")
  await seed(a.orgId)
})
afterAll(() => server.close())

describe("calls through the vendor SDK", () => {
  it("call.retrieve returns the get-call shape, a ringing call as registered", async () => {
    const client = sdk(a.key)
    const call = await client.call.retrieve(`call_${a.orgId}_4`)
    assert.deepStrictEqual(call as unknown, {
      call_id: `call_${a.orgId}_4`,
      call_type: "phone_call",
      direction: "outbound",
      call_status: "ended",
      agent_id: "agent_1",
      agent_version: 2,
      batch_call_id: BATCH,
      from_number: "+14155550100",
      to_number: "+14155550004",
      metadata: { crm_id: "c4" },
      svc_llm_dynamic_variables: { first_name: "n4" },
      start_timestamp: T0 + 240_000,
      end_timestamp: T0 + 244_000,
      duration_ms: 4_000,
      disconnection_reason: "user_hangup",
      call_analysis: {
        user_sentiment: "Positive",
        call_successful: true,
        custom_analysis_data: { interest_level: 4 }
      }
    })
    const ringing = await client.call.retrieve(`call_${a.orgId}_ringing`)
    assert.strictEqual(ringing.call_status, "registered")
    assert.isUndefined(ringing.start_timestamp)
  })

  it("call.list pages a batch by cursor with its total, newest first, every call once", async () => {
    const client = sdk(a.key)
    const seen: Array<string> = []
    let key: string | undefined
    let pages = 0
    do {
      const page = await client.call.list({
        filter_criteria: { batch_call_id: { type: "string", op: "eq", value: BATCH } },
        include_total: true,
        limit: 7,
        ...(key === undefined ? {} : { pagination_key: key })
      })
      assert.strictEqual(page.total, 31)
      seen.push(...page.items.map((c) => c.call_id))
      key = page.has_more ? page.pagination_key : undefined
      pages++
    } while (key !== undefined)
    assert.strictEqual(pages, 5)
    assert.strictEqual(new Set(seen).size, 31)
    // the ringing call sorts by when it was registered: after every call of the batch
    assert.strictEqual(seen[0], `call_${a.orgId}_ringing`)
    assert.strictEqual(seen[1], `call_${a.orgId}_29`)
    assert.strictEqual(seen[30], `call_${a.orgId}_0`)
  })

  it("list-calls' body is, byte for byte, the schema's encoding of the page (decision 0644)", async () => {
    // unusual values straight into the table (an org of their own, beside 35 ordinary calls): unicode, JSON nulls,
    // integer-like keys, nested metadata, every member
    const c = await server.org("odd calls")
    await seed(c.orgId)
    await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`
        INSERT INTO calls (org_id, call_id, batch_call_id, from_number, to_number, agent_id, agent_version,
          call_status, outcome, disconnection_reason, start_timestamp, end_timestamp, duration_ms, analysis, metadata,
          dynamic_variables, custom_sip_headers, recorded_timestamp)
        VALUES (${c.orgId}, 'call_odd', 'batch_odd', '+14155550100', '+14155550199', 'agent_ü', 3.5, 'ended',
          'answered', 'user_hangup', ${T0}, ${T0 + 1}, 1,
          ${
        JSON.stringify({
          call_summary: "Ça va \u2028 😀 \"quoted\" \\ end",
          user_sentiment: "Neutral",
          in_voicemail: false,
          "10": null,
          "2": [1.5, "x", { z: null }]
        })
      }::jsonb,
          ${JSON.stringify({ "1": "one", nested: { deep: [true, null, 1e21] }, "": "empty key" })}::jsonb,
          ${JSON.stringify({ name: "Šimek", "0": "zero" })}::jsonb,
          ${JSON.stringify({ "X-Trace": "t" })}::jsonb, ${T0})`
    }))
    const encode = Schema.encodeSync(ListCallsResponse)
    const decode = Schema.decodeUnknownSync(ListCallsResponse)
    for (
      const body of [
        { filter_criteria: { batch_call_id: { type: "string", op: "eq", value: "batch_odd" } }, include_total: true },
        { filter_criteria: { batch_call_id: { type: "string", op: "eq", value: BATCH } }, limit: 5 },
        { limit: 1000, include_total: true }
      ]
    ) {
      const response = await server.request("POST", "/v3/list-calls", { key: c.key, body })
      assert.strictEqual(response.status, 200)
      assert.strictEqual(response.headers.get("content-type"), "application/json")
      assert.isAbove((response.json as { items: Array<unknown> }).items.length, 0)
      assert.strictEqual(response.text, JSON.stringify(encode(decode(response.json))))
      // and these calls are ones the fast path vouches for (else the schema wrote them, and nothing was gained)
      assert.isDefined(listCallsJson(response.json as Parameters<typeof listCallsJson>[0]))
    }
  })

  it("call.list filters by status, success, sentiment, time range, numbers, agent and JSON keys", async () => {
    const client = sdk(a.key)
    const ids = async (
      filter_criteria: Record<string, unknown>,
      sort_order: "ascending" | "descending" = "ascending"
    ) =>
      (await client.call.list({ filter_criteria: filter_criteria as never, sort_order, limit: 1000 })).items.map((c) =>
        Number(c.call_id.split("_").pop())
      )
    assert.deepStrictEqual(
      await ids({ call_status: { type: "enum", op: "in", value: ["not_connected"] } }),
      [0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33]
    )
    assert.deepStrictEqual(
      await ids({
        call_successful: { type: "boolean", op: "eq", value: true },
        start_timestamp: { type: "range", op: "bt", value: [T0, T0 + 10 * 60_000] }
      }),
      [2, 4, 8, 10]
    )
    assert.deepStrictEqual(await ids({ to_number: { type: "string", op: "eq", value: "+14155550007" } }), [7])
    assert.deepStrictEqual(await ids({ metadata: [{ type: "string", op: "eq", key: "crm_id", value: "c12" }] }), [12])
    assert.deepStrictEqual(
      await ids(
        { custom_analysis_data: [{ type: "number", op: "ge", key: "interest_level", value: 4 }] },
        "descending"
      ),
      [34, 29, 19, 14, 4]
    )
    assert.deepStrictEqual(
      await ids({ dynamic_variables: [{ type: "string", op: "sw", key: "first_name", value: "n3" }] }),
      [3, 30, 31, 32, 33, 34]
    )
    assert.deepStrictEqual(await ids({ agent: [{ agent_id: "agent_1", version: [3] }] }), [])
    assert.strictEqual((await ids({ agent: [{ agent_id: "agent_1", version: [2] }] })).length, 35)
    assert.deepStrictEqual(
      await ids({
        disconnection_reason: { type: "enum", op: "in", value: ["dial_busy"] },
        duration_ms: { type: "number", op: "gt", value: 30_000 }
      }),
      [33]
    )
    assert.deepStrictEqual(await ids({ user_sentiment: { type: "enum", op: "in", value: ["Negative"] } }), [])
    // skip pages by offset
    const skipped = await client.call.list({ sort_order: "ascending", skip: 34, limit: 5 })
    assert.deepStrictEqual(skipped.items.map((c) => c.call_id), [`call_${a.orgId}_34`, `call_${a.orgId}_ringing`])
  })

  it("call.update replaces metadata; call.delete removes a finished call", async () => {
    const client = sdk(a.key)
    const updated = await client.call.update(`call_${a.orgId}_5`, { metadata: { crm_id: "new", n: [1, null] } })
    assert.deepStrictEqual(updated.metadata, { crm_id: "new", n: [1, null] })
    assert.deepStrictEqual((await client.call.retrieve(`call_${a.orgId}_5`)).metadata, { crm_id: "new", n: [1, null] })
    await client.call.delete(`call_${a.orgId}_6`)
    const gone = await server.request("GET", `/v2/get-call/call_${a.orgId}_6`, { key: a.key })
    assert.strictEqual(gone.status, 404)
    assert.deepStrictEqual(gone.json, { status: "error", message: `call_id call_${a.orgId}_6 not found` })
  })
})

describe("calls over raw HTTP", () => {
  it("refuses bad input with the spec's error shape, naming the field", async () => {
    const list = (body: unknown) => server.request("POST", "/v3/list-calls", { key: a.key, body })
    const unknownMember = await list({ filter_criteria: { combined_cost: { type: "number", op: "gt", value: 1 } } })
    assert.strictEqual(unknownMember.status, 400)
    assert.match((unknownMember.json as { message: string }).message, /combined_cost/)
    const badReason = await list({ filter_criteria: { disconnection_reason: { type: "enum", value: ["nope"] } } })
    assert.strictEqual(badReason.status, 400)
    assert.match((badReason.json as { message: string }).message, /disconnection_reason.*"nope"/s)
    const limit = await list({ limit: 0 })
    assert.strictEqual(limit.status, 400)
    assert.match((limit.json as { message: string }).message, /limit/)
    const tampered = await list({ pagination_key: "AAAA" })
    assert.strictEqual(tampered.status, 400)
    const big = await server.request("PATCH", `/v2/update-call/call_${a.orgId}_7`, {
      key: a.key,
      body: { metadata: { blob: "x".repeat(50_001) } }
    })
    assert.strictEqual(big.status, 400)
    assert.match((big.json as { message: string }).message, /metadata.*50000 bytes/s)
    const storage = await server.request("PATCH", `/v2/update-call/call_${a.orgId}_7`, {
      key: a.key,
      body: { data_storage_setting: "basic_attributes_only" }
    })
    assert.strictEqual(storage.status, 400)
    assert.match((storage.json as { message: string }).message, /data_storage_setting/)
    const ringing = await server.request("DELETE", `/v2/delete-call/call_${a.orgId}_ringing`, { key: a.key })
    assert.strictEqual(ringing.status, 400)
    assert.match((ringing.json as { message: string }).message, /in progress/)
    // spec deprecation schedule row 8: update-call is for ended calls only (since 2026-08-31), with or without a body
    for (const body of [{ metadata: { late: true } }, {}]) {
      const live = await server.request("PATCH", `/v2/update-call/call_${a.orgId}_ringing`, { key: a.key, body })
      assert.strictEqual(live.status, 400, JSON.stringify(body))
      assert.match((live.json as { message: string }).message, /in progress.*ended calls only.*update-live-call/s)
    }
    assert.notProperty((await sdk(a.key).call.retrieve(`call_${a.orgId}_ringing`)).metadata ?? {}, "late")
    const dynamic = await server.request("PATCH", `/v2/update-call/call_${a.orgId}_7`, {
      key: a.key,
      body: { override_dynamic_variables: { name: "x" } }
    })
    assert.strictEqual(dynamic.status, 400)
    assert.match((dynamic.json as { message: string }).message, /override_dynamic_variables.*2026-08-31/s)
    const empty = await server.request("POST", "/v3/list-calls", { key: a.key, raw: "" })
    assert.strictEqual(empty.status, 200)
  })

  it("another org's calls do not exist for it", async () => {
    const id = `call_${a.orgId}_8`
    for (
      const [method, path, body] of [
        ["GET", `/v2/get-call/${id}`, undefined],
        ["PATCH", `/v2/update-call/${id}`, { metadata: { x: 1 } }],
        ["DELETE", `/v2/delete-call/${id}`, undefined]
      ] as const
    ) {
      const response = await server.request(method, path, { key: b.key, ...(body ? { body } : {}) })
      assert.strictEqual(response.status, 404, `${method} ${path}`)
    }
    const listed = await sdk(b.key).call.list({ include_total: true })
    assert.deepStrictEqual([listed.items.length, listed.total], [0, 0])
    // a key minted for org a is refused for org b
    const page = await sdk(a.key).call.list({ limit: 1 })
    const foreign = await server.request("POST", "/v3/list-calls", {
      key: b.key,
      body: { limit: 1, pagination_key: page.pagination_key }
    })
    assert.strictEqual(foreign.status, 400)
    assert.deepStrictEqual((await sdk(a.key).call.retrieve(id)).metadata, { crm_id: "c8" })
  })
})

describe("contact history", () => {
  it("get-contact-by-phone keeps + in the path; list-contact-conversations pages the contact's calls", async () => {
    const client = sdk(a.key)
    const created = await client.contact.create({ phone_number: "+14155550011" })
    const byPhone = await client.contact.getByPhone("+14155550011")
    assert.strictEqual(byPhone.contact_id, created.contact_id)
    const raw = await server.request("GET", "/get-contact-by-phone/+14155550011", { key: a.key })
    assert.strictEqual(raw.status, 200)
    const other = await server.request("GET", "/get-contact-by-phone/+14155550011", { key: b.key })
    assert.strictEqual(other.status, 404)
    const conversations = await client.contact.listConversations(created.contact_id, { limit: 5 })
    assert.deepStrictEqual(conversations as unknown, {
      has_more: false,
      items: [{
        type: "call",
        call_id: `call_${a.orgId}_11`,
        direction: "outbound",
        disconnection_reason: "user_hangup",
        duration_ms: 11_000,
        start_timestamp: T0 + 660_000,
        sentiment: "Positive",
        successful: false
      }]
    })
    const badLimit = await server.request("GET", `/list-contact-conversations/${created.contact_id}?limit=0`, {
      key: a.key
    })
    assert.strictEqual(badLimit.status, 400)
    const foreign = await server.request("GET", `/list-contact-conversations/${created.contact_id}`, { key: b.key })
    assert.strictEqual(foreign.status, 404)
  })
})
