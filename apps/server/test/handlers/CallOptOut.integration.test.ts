// update-call's opt_out over raw HTTP (issue 31 item 6, decision 0552): the call shows it (and the vendor's SDK still
// reads the call), the number goes on the org's suppression list in the same transaction, and a later batch task to
// that number is skipped by the scheduler's claim as `suppressed (opt_out)` (decision 0550), while other numbers of the
// batch are dialled. Bad input is a 400 naming the field; another org's call a 404.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { DispatchRepo } from "@svc/store/dispatch/DispatchRepo.ts"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import Retell from "retell-sdk"
import * as TestServer from "../support/TestServer.ts"

let server: TestServer.TestServer
let a: { orgId: OrgId; key: string }
let b: { orgId: OrgId; key: string }

type Json = Record<string, unknown>

const FROM = "+14155550100"
const OPTED = "+14155550101"
const RINGING = "+14155550102"
const OTHER = "+14155550103"

beforeAll(async () => {
  server = await TestServer.start()
  a = await server.org("a")
  b = await server.org("b")
  await server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${a.orgId}, ${FROM}, 0)`
    yield* sql`
      INSERT INTO calls (org_id, call_id, from_number, to_number, call_status, outcome, disconnection_reason,
        start_timestamp, end_timestamp, duration_ms, metadata, recorded_timestamp)
      VALUES (${a.orgId}, 'call_opt', ${FROM}, ${OPTED}, 'ended', 'answered', 'user_hangup', 1000, 61000, 60000,
        '{"crm":"c1"}'::jsonb, 1000)`
    yield* sql`
      INSERT INTO calls (org_id, call_id, from_number, to_number, call_status, recorded_timestamp)
      VALUES (${a.orgId}, 'call_ringing', ${FROM}, ${RINGING}, 'registered', 2000)`
  }))
})
afterAll(() => server.close())

const suppressionsOf = (orgId: string) =>
  server.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ phone_number: string; source: string }>`
      SELECT phone_number, source FROM suppressions WHERE org_id = ${orgId} ORDER BY phone_number`.pipe(
      Effect.map((rows) => rows.map((r) => ({ ...r })))
    )))

describe("PATCH /v2/update-call/{call_id} with opt_out", () => {
  it("refuses a non-boolean opt_out naming the field, and another org's call with a 404; nothing written", async () => {
    const bad = await server.request("PATCH", "/v2/update-call/call_opt", { key: a.key, raw: "{\"opt_out\":\"yes\"}" })
    assert.strictEqual(bad.status, 400, bad.text)
    assert.strictEqual((bad.json as Json)["status"], "error")
    assert.include(String((bad.json as Json)["message"]), "opt_out")
    const foreign = await server.request("PATCH", "/v2/update-call/call_opt", { key: b.key, body: { opt_out: true } })
    assert.strictEqual(foreign.status, 404)
    assert.deepStrictEqual(foreign.json, { status: "error", message: "call_id call_opt not found" })
    assert.deepStrictEqual(await suppressionsOf(a.orgId), [])
    assert.deepStrictEqual(await suppressionsOf(b.orgId), [])
  })

  it("records the opt-out on the call and suppresses the number; get-call, list-calls and the SDK show it", async () => {
    const updated = await server.request("PATCH", "/v2/update-call/call_opt", { key: a.key, body: { opt_out: true } })
    assert.strictEqual(updated.status, 200, updated.text)
    const call = updated.json as Json
    assert.strictEqual(call["opt_out"], true)
    assert.deepStrictEqual(call["metadata"], { crm: "c1" })
    assert.deepStrictEqual(await suppressionsOf(a.orgId), [{ phone_number: OPTED, source: "opt_out" }])
    const got = await server.request("GET", "/v2/get-call/call_opt", { key: a.key })
    assert.deepStrictEqual(got.json, call)
    // list-calls' fast path (decision 0644) writes the same object
    const listed = await server.request("POST", "/v3/list-calls", {
      key: a.key,
      body: { filter_criteria: { call_id: { type: "string", op: "eq", value: "call_opt" } } }
    })
    assert.deepStrictEqual((listed.json as { items: Array<Json> }).items, [call])
    // the vendor's SDK parses the call (an unknown member is passed through, not refused)
    const sdk = new Retell({ apiKey: a.key, baseURL: "http://svc.test", fetch: server.fetch, maxRetries: 0 })
    const retrieved = await sdk.call.retrieve("call_opt")
    assert.strictEqual(retrieved.call_id, "call_opt")
    assert.deepStrictEqual(retrieved as unknown, call)
  })

  it("takes opt_out alone during the call (the ended-calls rule binds the vendor's members)", async () => {
    const live = await server.request("PATCH", "/v2/update-call/call_ringing", {
      key: a.key,
      body: { opt_out: true, metadata: { late: true } }
    })
    assert.strictEqual(live.status, 400)
    assert.match((live.json as { message: string }).message, /in progress.*ended calls only/s)
    assert.deepStrictEqual((await suppressionsOf(a.orgId)).map((s) => s.phone_number), [OPTED])
    const alone = await server.request("PATCH", "/v2/update-call/call_ringing", {
      key: a.key,
      body: { opt_out: true }
    })
    assert.strictEqual(alone.status, 200, alone.text)
    assert.strictEqual((alone.json as Json)["call_status"], "registered")
    assert.strictEqual((alone.json as Json)["opt_out"], true)
    assert.deepStrictEqual((await suppressionsOf(a.orgId)).map((s) => s.phone_number), [OPTED, RINGING])
  })

  it("a later batch task to an opted-out number is skipped by the claim as suppressed (opt_out)", async () => {
    const created = await server.request("POST", "/create-batch-call", {
      key: a.key,
      body: { from_number: FROM, tasks: [{ to_number: OPTED }, { to_number: OTHER }, { to_number: RINGING }] }
    })
    assert.strictEqual(created.status, 200, created.text)
    const batchCallId = String((created.json as Json)["batch_call_id"])
    const tasks = await server.run(
      Effect.gen(function*() {
        const dispatch = yield* DispatchRepo
        const sql = yield* SqlClient.SqlClient
        const due = (yield* dispatch.findDue(10_000_000_000_000, 100)).due.filter((d) => d.batchCallId === batchCallId)
        assert.strictEqual(due.length, 1)
        const result = yield* dispatch.claim(a.orgId, due, {
          owner: "worker-opt-out",
          now: Date.now(),
          leaseMs: 60_000,
          maxPerBatch: 10
        })
        assert.deepStrictEqual([result.skipped, result.suppressed], [2, 2])
        assert.deepStrictEqual(result.claimed.map((c) => c.request.to_number), [OTHER])
        return yield* sql<{ to_number: string; state: string; state_reason: string | null }>`
        SELECT to_number, state, state_reason FROM batch_call_tasks
        WHERE batch_call_id = ${batchCallId} ORDER BY task_index`
      }).pipe(Effect.provide(DispatchRepo.layer))
    )
    assert.deepStrictEqual(tasks.map((t) => [t.to_number, t.state, t.state_reason]), [
      [OPTED, "skipped", "suppressed (opt_out)"],
      [OTHER, "dialling", null],
      [RINGING, "skipped", "suppressed (opt_out)"]
    ])
  })

  it("opt_out false clears the call's field and leaves the number suppressed", async () => {
    const back = await server.request("PATCH", "/v2/update-call/call_opt", { key: a.key, body: { opt_out: false } })
    assert.strictEqual(back.status, 200, back.text)
    assert.notProperty(back.json as Json, "opt_out")
    assert.deepStrictEqual((await suppressionsOf(a.orgId)).map((s) => s.phone_number), [OPTED, RINGING])
  })
})
