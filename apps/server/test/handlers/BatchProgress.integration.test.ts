// GET /get-batch-call/{id} and POST /cancel-batch-call/{id} over raw HTTP (issue 13, part 3; svc extensions):
// shapes, org isolation, the error body, idempotent cancel, and their mark in the OpenAPI document.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as TestServer from "../support/TestServer.ts"

let server: TestServer.TestServer
let a: { orgId: string; key: string }
let b: { orgId: string; key: string }
let batchCallId: string

type Json = Record<string, unknown>

beforeAll(async () => {
  server = await TestServer.start()
  a = await server.org("A")
  b = await server.org("B")
  await server.run(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) =>
        sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${a.orgId}, '+14155550100', 0)`
    )
  )
  const created = await server.request("POST", "/create-batch-call", {
    key: a.key,
    body: {
      from_number: "+14155550100",
      name: "spring",
      trigger_timestamp: 4_000_000_000_000,
      tasks: [{ to_number: "+14155550101" }, { to_number: "+14155550102" }, { to_number: "+14155550103" }]
    }
  })
  assert.strictEqual(created.status, 200, created.text)
  batchCallId = String((created.json as Json)["batch_call_id"])
})
afterAll(() => server.close())

describe("GET /get-batch-call/{batch_call_id}", () => {
  it("answers the batch's progress", async () => {
    const response = await server.request("GET", `/get-batch-call/${batchCallId}`, { key: a.key })
    assert.strictEqual(response.status, 200, response.text)
    const body = response.json as Json
    assert.deepInclude(body, {
      batch_call_id: batchCallId,
      name: "spring",
      from_number: "+14155550100",
      status: "scheduled",
      total_task_count: 3,
      tasks: { pending: 3, dialling: 0, unknown: 0, completed: 0, failed: 0, skipped: 0, cancelled: 0 },
      calls_placed: 0,
      calls_in_flight: 0,
      scheduled_timestamp: 4_000_000_000_000,
      window_open_now: true,
      // not before its trigger time
      next_window_opening_timestamp: 4_000_000_000_000,
      completed_timestamp: null,
      cancelled_timestamp: null
    })
    assert.isNumber(body["estimated_completion_timestamp"])
    // legal hours of its pending tasks (issue 15, svc extension): three San Francisco numbers, one zone set under
    // the default policy (California has no row: the federal rule), dialable now or held back, depending on the hour
    const legal = body["legal_hours"] as Json
    assert.strictEqual(legal["policy_version"], 0)
    assert.strictEqual(legal["unconstrained_tasks"], 0)
    const sets = legal["zone_sets"] as Array<Json>
    assert.deepStrictEqual(sets.map((z) => [z["zones"], z["rules"], z["pending_tasks"]]), [[
      ["America/Los_Angeles"],
      ["US"],
      3
    ]])
    const held = (legal["held_back"] as Array<Json>).reduce((n, h) => n + Number(h["tasks"]), 0)
    assert.strictEqual(Number(legal["dialable_now_tasks"]) + held, 3)
    assert.strictEqual(sets[0]!["blocked_by"] === null, legal["dialable_now_tasks"] === 3)
  })

  it("answers 404 with the error body for another org's batch and an unknown id, 400 for a NUL id", async () => {
    const other = await server.request("GET", `/get-batch-call/${batchCallId}`, { key: b.key })
    assert.strictEqual(other.status, 404)
    assert.deepStrictEqual(other.json, { status: "error", message: `batch call ${batchCallId} not found` })
    assert.strictEqual((await server.request("GET", "/get-batch-call/nope", { key: a.key })).status, 404)
    const nul = await server.request("GET", "/get-batch-call/a%00b", { key: a.key })
    assert.strictEqual(nul.status, 400)
    assert.include(String((nul.json as Json)["message"]), "batch_call_id")
    assert.strictEqual((await server.request("GET", `/get-batch-call/${batchCallId}`, { key: null })).status, 401)
  })
})

describe("POST /cancel-batch-call/{batch_call_id}", () => {
  it("refuses another org (404, nothing cancelled), then cancels, and answers the same again", async () => {
    const other = await server.request("POST", `/cancel-batch-call/${batchCallId}`, { key: b.key })
    assert.strictEqual(other.status, 404)
    assert.strictEqual(other.json && (other.json as Json)["status"], "error")
    const first = await server.request("POST", `/cancel-batch-call/${batchCallId}`, { key: a.key })
    assert.strictEqual(first.status, 200, first.text)
    const body = first.json as Json
    assert.strictEqual(body["status"], "cancelled")
    assert.deepInclude(body["tasks"] as Json, { pending: 0, cancelled: 3 })
    assert.isNumber(body["cancelled_timestamp"])
    assert.isNull(body["next_window_opening_timestamp"])
    const again = await server.request("POST", `/cancel-batch-call/${batchCallId}`, { key: a.key })
    assert.strictEqual(again.status, 200)
    assert.deepStrictEqual(again.json, first.json)
    const read = await server.request("GET", `/get-batch-call/${batchCallId}`, { key: a.key })
    assert.strictEqual((read.json as Json)["status"], "cancelled")
  })
})

// issue 31 item 1 (decision 0549): pause answers the progress with status paused, resume the status it paused from;
// both idempotent; a cancelled batch is a 409 in the error shape; another org's batch a 404
describe("POST /pause-batch-call/{id} and /resume-batch-call/{id}", () => {
  it("pauses and resumes a batch, idempotently; another org's is a 404; a cancelled one a 409", async () => {
    const created = await server.request("POST", "/create-batch-call", {
      key: a.key,
      body: {
        from_number: "+14155550100",
        trigger_timestamp: 4_000_000_000_000,
        max_concurrency: 2,
        tasks: [{ to_number: "+14155550104" }, { to_number: "+14155550105" }]
      }
    })
    assert.strictEqual(created.status, 200, created.text)
    const id = String((created.json as Json)["batch_call_id"])
    const other = await server.request("POST", `/pause-batch-call/${id}`, { key: b.key })
    assert.strictEqual(other.status, 404)
    assert.deepStrictEqual(other.json, { status: "error", message: `batch call ${id} not found` })

    const paused = await server.request("POST", `/pause-batch-call/${id}`, { key: a.key })
    assert.strictEqual(paused.status, 200, paused.text)
    assert.deepInclude(paused.json as Json, { batch_call_id: id, status: "paused", max_concurrency: 2 })
    assert.deepInclude((paused.json as Json)["tasks"] as Json, { pending: 2 })
    // no estimate while paused: nothing is dialled until it is resumed
    assert.isNull((paused.json as Json)["estimated_completion_timestamp"])
    const again = await server.request("POST", `/pause-batch-call/${id}`, { key: a.key })
    assert.strictEqual(again.status, 200)
    assert.strictEqual((again.json as Json)["status"], "paused")
    assert.strictEqual(
      ((await server.request("GET", `/get-batch-call/${id}`, { key: a.key })).json as Json)["status"],
      "paused"
    )

    const resumed = await server.request("POST", `/resume-batch-call/${id}`, { key: a.key })
    assert.strictEqual(resumed.status, 200, resumed.text)
    assert.strictEqual((resumed.json as Json)["status"], "scheduled")
    assert.isNumber((resumed.json as Json)["estimated_completion_timestamp"])
    const resumedAgain = await server.request("POST", `/resume-batch-call/${id}`, { key: a.key })
    assert.strictEqual((resumedAgain.json as Json)["status"], "scheduled")

    await server.request("POST", `/cancel-batch-call/${id}`, { key: a.key })
    for (const verb of ["pause", "resume"]) {
      const refused = await server.request("POST", `/${verb}-batch-call/${id}`, { key: a.key })
      assert.strictEqual(refused.status, 409, refused.text)
      assert.deepStrictEqual(refused.json, {
        status: "error",
        message: `batch call ${id} is cancelled: only a scheduled, in-progress or paused batch can be ${verb}d`
      })
    }
    assert.strictEqual((await server.request("POST", `/pause-batch-call/${id}`, { key: null })).status, 401)
  })

  it("max_concurrency below 1 or not an integer is a 400 naming the field", async () => {
    for (const bad of [0, -1, 1.5, "2"]) {
      const response = await server.request("POST", "/create-batch-call", {
        key: a.key,
        body: { from_number: "+14155550100", max_concurrency: bad, tasks: [{ to_number: "+14155550104" }] }
      })
      assert.strictEqual(response.status, 400, `${JSON.stringify(bad)}: ${response.text}`)
      assert.include(String((response.json as Json)["message"]), "max_concurrency")
    }
  })
})

describe("OpenAPI", () => {
  it("lists both operations marked x-svc-extension, and the vendor's create-batch-call unmarked", async () => {
    const doc = (await server.request("GET", "/openapi.json", { key: null })).json as {
      paths: Record<string, Record<string, Json>>
    }
    assert.strictEqual(doc.paths["/get-batch-call/{batch_call_id}"]?.["get"]?.["x-svc-extension"], true)
    assert.strictEqual(doc.paths["/cancel-batch-call/{batch_call_id}"]?.["post"]?.["x-svc-extension"], true)
    assert.strictEqual(doc.paths["/pause-batch-call/{batch_call_id}"]?.["post"]?.["x-svc-extension"], true)
    assert.strictEqual(doc.paths["/resume-batch-call/{batch_call_id}"]?.["post"]?.["x-svc-extension"], true)
    assert.isUndefined(doc.paths["/create-batch-call"]?.["post"]?.["x-svc-extension"])
  })
})
