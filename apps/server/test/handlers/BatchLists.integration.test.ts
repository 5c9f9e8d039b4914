// POST /list-batch-calls and POST /list-batch-call-tasks/{batch_call_id} over raw HTTP (issue 31 item 3; svc
// extensions, decision 0548). Expectations come from the issue and the vendor's list conventions: items of
// list-batch-calls are get-batch-call's answer, pages are keyset paged with keys bound to org and query, bad input is a
// 400 naming the field, another org's or an unknown batch a 404 in the error shape.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as TestServer from "../support/TestServer.ts"

type Json = Record<string, unknown>

const T1 = 1_900_000_000_000
const T2 = T1 + 60_000
const T3 = T1 + 120_000
const NOW = T1 + 3_600_000
const TRIGGER = 4_000_000_000_000

let server: TestServer.TestServer
let a: { orgId: string; key: string }
let b: { orgId: string; key: string }
let first: string
let second: string
let third: string

const clockAt = async (at: number) => {
  const clock = await Effect.runPromise(Effect.scoped(TestClock.make()))
  await Effect.runPromise(clock.setTime(at))
  return clock
}

const create = async (at: number, body: Json) => {
  const created = await server.request("POST", "/create-batch-call", { key: a.key, body, clock: await clockAt(at) })
  assert.strictEqual(created.status, 200, created.text)
  return String((created.json as Json)["batch_call_id"])
}

const post = async (path: string, body?: unknown, key = a.key) =>
  server.request("POST", path, { key, clock: await clockAt(NOW), ...(body === undefined ? {} : { body }) })

const ids = (response: TestServer.Response, id = "batch_call_id") =>
  ((response.json as Json)["items"] as Array<Json>).map((item) => item[id])

const badRequest = (response: TestServer.Response, ...parts: Array<string>) => {
  assert.strictEqual(response.status, 400, response.text)
  const body = response.json as Json
  assert.deepStrictEqual(Object.keys(body).sort(), ["message", "status"])
  assert.strictEqual(body["status"], "error")
  for (const part of parts) assert.include(String(body["message"]), part)
}

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
  first = await create(T1, {
    from_number: "+14155550100",
    name: "first",
    trigger_timestamp: TRIGGER,
    tasks: [
      { to_number: "+14155550101", metadata: { crm: "c1", tags: ["x"] } },
      { to_number: "+14155550102" },
      { to_number: "+14155550103" },
      { to_number: "+14155550104" },
      { to_number: "+14155550105" }
    ]
  })
  second = await create(T2, {
    from_number: "+14155550100",
    name: "second",
    trigger_timestamp: TRIGGER,
    tasks: [{ to_number: "+14155550201" }, { to_number: "+14155550202" }]
  })
  third = await create(T3, {
    from_number: "+14155550100",
    name: "third",
    tasks: [{ to_number: "+14155550301" }, { to_number: "+14155550302" }, { to_number: "+14155550303" }]
  })
  const cancelled = await post(`/cancel-batch-call/${second}`)
  assert.strictEqual(cancelled.status, 200, cancelled.text)
})
afterAll(() => server.close())

describe("POST /list-batch-calls", () => {
  it("lists the org's batches newest first, each exactly as get-batch-call answers it", async () => {
    for (const body of [undefined, null, {}]) {
      const page = await post("/list-batch-calls", body)
      assert.strictEqual(page.status, 200, page.text)
      assert.deepStrictEqual(ids(page), [third, second, first])
      assert.strictEqual((page.json as Json)["has_more"], false)
      assert.notProperty(page.json, "pagination_key")
    }
    const page = await post("/list-batch-calls")
    const items = (page.json as Json)["items"] as Array<Json>
    for (const item of items) {
      const single = await server.request("GET", `/get-batch-call/${String(item["batch_call_id"])}`, {
        key: a.key,
        clock: await clockAt(NOW)
      })
      assert.deepStrictEqual(item, single.json)
    }
    assert.deepStrictEqual(items.map((i) => i["created_timestamp"]), [T3, T2, T1])
    assert.deepStrictEqual(items.map((i) => i["status"]), ["scheduled", "cancelled", "scheduled"])
    const ascending = await post("/list-batch-calls", { sort_order: "ascending" })
    assert.deepStrictEqual(ids(ascending), [first, second, third])
  })

  it("pages with pagination_key: every batch once, in order, the last page without a key", async () => {
    const one = await post("/list-batch-calls", { limit: 2 })
    assert.deepStrictEqual(ids(one), [third, second])
    assert.strictEqual((one.json as Json)["has_more"], true)
    const key = String((one.json as Json)["pagination_key"])
    const two = await post("/list-batch-calls", { limit: 2, pagination_key: key })
    assert.deepStrictEqual(ids(two), [first])
    assert.strictEqual((two.json as Json)["has_more"], false)
    assert.notProperty(two.json, "pagination_key")
    // limit may change between pages (decision 0102)
    assert.deepStrictEqual(ids(await post("/list-batch-calls", { limit: 1, pagination_key: key })), [first])
    // the key is bound to the query and to the org
    badRequest(
      await post("/list-batch-calls", { limit: 2, pagination_key: key, sort_order: "ascending" }),
      "pagination_key",
      "different query"
    )
    badRequest(await post("/list-batch-calls", { pagination_key: key }, b.key), "pagination_key", "organization")
    badRequest(await post("/list-batch-calls", { pagination_key: key.slice(0, -2) + "AA" }), "pagination_key")
    badRequest(await post("/list-batch-calls", { pagination_key: "not a key" }), "pagination_key")
  })

  it("filters by status and by creation time (epoch ms, number or range), ANDed", async () => {
    const byStatus = (value: Array<string>) =>
      post("/list-batch-calls", { filter_criteria: { status: { type: "enum", value } } })
    assert.deepStrictEqual(ids(await byStatus(["cancelled"])), [second])
    assert.deepStrictEqual(ids(await byStatus(["scheduled", "completed"])), [third, first])
    assert.deepStrictEqual(ids(await byStatus(["completed"])), [])
    const created = (filter: Json) => post("/list-batch-calls", { filter_criteria: { created_timestamp: filter } })
    assert.deepStrictEqual(ids(await created({ type: "range", op: "bt", value: [T1, T2] })), [second, first])
    assert.deepStrictEqual(ids(await created({ type: "number", op: "gt", value: T2 })), [third])
    assert.deepStrictEqual(ids(await created({ type: "number", op: "ge", value: T2 })), [third, second])
    assert.deepStrictEqual(ids(await created({ type: "number", op: "lt", value: T2 + 0.5 })), [second, first])
    assert.deepStrictEqual(ids(await created({ type: "number", value: T1 })), [first])
    assert.deepStrictEqual(ids(await created({ type: "number", op: "ne", value: T1 })), [third, second])
    const both = await post("/list-batch-calls", {
      filter_criteria: {
        status: { type: "enum", value: ["scheduled"] },
        created_timestamp: { type: "range", value: [T2, T3] }
      }
    })
    assert.deepStrictEqual(ids(both), [third])
  })

  it("never shows another org's batches", async () => {
    const page = await post("/list-batch-calls", {}, b.key)
    assert.strictEqual(page.status, 200, page.text)
    assert.deepStrictEqual(page.json, { has_more: false, items: [] })
  })

  it("answers 400 naming the field and the rule for bad input", async () => {
    badRequest(await post("/list-batch-calls", { skip: 1 }), "skip", "not a known field")
    badRequest(await post("/list-batch-calls", { limit: 101 }), "limit", "1 to 100")
    badRequest(await post("/list-batch-calls", { limit: 0 }), "limit")
    badRequest(await post("/list-batch-calls", { sort_order: "desc" }), "sort_order")
    badRequest(
      await post("/list-batch-calls", { filter_criteria: { status: { type: "enum", value: ["running"] } } }),
      "filter_criteria.status",
      "\"running\" is not a batch call status"
    )
    badRequest(
      await post("/list-batch-calls", {
        filter_criteria: { created_timestamp: { type: "number", value: "yesterday" } }
      }),
      "filter_criteria.created_timestamp"
    )
    badRequest(
      await post("/list-batch-calls", { filter_criteria: { created_timestamp: { type: "range", value: [T1] } } }),
      "filter_criteria.created_timestamp"
    )
    badRequest(
      await post("/list-batch-calls", { filter_criteria: { name: { type: "string", value: "first" } } }),
      "filter_criteria.name",
      "is not a filter member; the members are status, created_timestamp"
    )
    const noKey = await server.request("POST", "/list-batch-calls", { key: null })
    assert.strictEqual(noKey.status, 401)
  })
})

describe("POST /list-batch-call-tasks/{batch_call_id}", () => {
  beforeAll(async () => {
    // the third batch as after some dialling (no scheduler runs here): its first task's call ended unanswered and a
    // retry waits; its second task is dialling; its third was answered
    await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const tasks = yield* sql<{ task_id: string; task_index: number }>`
        SELECT task_id::text AS task_id, task_index FROM batch_call_tasks WHERE batch_call_id = ${third}
        ORDER BY task_index`
      const [t0, t1, t2] = tasks.map((t) => t.task_id)
      yield* sql`
        INSERT INTO calls (org_id, call_id, task_id, batch_call_id, from_number, to_number, call_status, outcome,
          disconnection_reason, start_timestamp, end_timestamp, duration_ms, recorded_timestamp)
        VALUES
          (${a.orgId}, 'call_t0', ${t0}::int8, ${third}, '+14155550100', '+14155550301', 'not_connected', 'no_answer',
            'dial_no_answer', ${T3 + 1000}, ${T3 + 31_000}, 30000, ${T3 + 31_000}),
          (${a.orgId}, 'call_t1', ${t1}::int8, ${third}, '+14155550100', '+14155550302', 'registered', NULL,
            NULL, NULL, NULL, NULL, ${T3 + 2000}),
          (${a.orgId}, 'call_t2', ${t2}::int8, ${third}, '+14155550100', '+14155550303', 'ended', 'answered',
            'user_hangup', ${T3 + 3000}, ${T3 + 63_000}, 60000, ${T3 + 63_000})`
      yield* sql`
        UPDATE batch_call_tasks SET state = 'pending', retry_attempt = 2, attempts = 0, call_id = 'call_t0',
          not_before = ${NOW + 600_000}, state_reason = 'retry: no_answer, call 2 of 3'
        WHERE task_id = ${t0}::int8`
      yield* sql`
        UPDATE batch_call_tasks SET state = 'dialling', attempts = 1, call_id = 'call_t1', lease_owner = 'w',
          lease_expires_at = ${NOW + 60_000}
        WHERE task_id = ${t1}::int8`
      yield* sql`
        UPDATE batch_call_tasks SET state = 'completed', attempts = 1, call_id = 'call_t2', state_reason = 'answered'
        WHERE task_id = ${t2}::int8`
      yield* sql`UPDATE batch_calls SET status = 'in_progress' WHERE batch_call_id = ${third}`
    }))
  })

  it("lists a batch's tasks in their order, with state, reason, calls, outcome, next attempt and metadata", async () => {
    const page = await post(`/list-batch-call-tasks/${first}`)
    assert.strictEqual(page.status, 200, page.text)
    const body = page.json as Json
    assert.strictEqual(body["has_more"], false)
    const items = body["items"] as Array<Json>
    assert.deepStrictEqual(items.map((i) => i["to_number"]), [
      "+14155550101",
      "+14155550102",
      "+14155550103",
      "+14155550104",
      "+14155550105"
    ])
    // never dialled: no call, no outcome, dialled no earlier than the batch's trigger time
    assert.deepStrictEqual(items[0], {
      task_id: items[0]!["task_id"],
      to_number: "+14155550101",
      state: "pending",
      state_reason: null,
      attempts: 0,
      last_call_id: null,
      last_outcome: null,
      next_attempt_timestamp: TRIGGER,
      metadata: { crm: "c1", tags: ["x"] }
    })
    assert.isString(items[0]!["task_id"])
    assert.notProperty(items[1], "metadata")
    assert.strictEqual(new Set(items.map((i) => i["task_id"])).size, 5)
  })

  it("shows dialled tasks: calls started, the latest call, its outcome once ended, the retry's time", async () => {
    const page = await post(`/list-batch-call-tasks/${third}`)
    assert.strictEqual(page.status, 200, page.text)
    const items = (page.json as Json)["items"] as Array<Json>
    const pick = (
      i: Json
    ) => [i["state"], i["attempts"], i["last_call_id"], i["last_outcome"], i["next_attempt_timestamp"]]
    assert.deepStrictEqual(items.map(pick), [
      ["pending", 1, "call_t0", "dial_no_answer", NOW + 600_000],
      ["dialling", 1, "call_t1", null, null],
      ["completed", 1, "call_t2", "user_hangup", null]
    ])
    assert.strictEqual(items[0]!["state_reason"], "retry: no_answer, call 2 of 3")
    // a cancelled batch's tasks are never dialled again
    const cancelled = (await post(`/list-batch-call-tasks/${second}`)).json as Json
    assert.deepStrictEqual(
      (cancelled["items"] as Array<Json>).map((i) => [i["state"], i["state_reason"], i["next_attempt_timestamp"]]),
      [["cancelled", "batch_cancelled", null], ["cancelled", "batch_cancelled", null]]
    )
  })

  it("filters by state (any of several) and pages through the filtered tasks", async () => {
    const byState = (value: Array<string>, extra: Json = {}) =>
      post(`/list-batch-call-tasks/${third}`, { filter_criteria: { state: { type: "enum", value } }, ...extra })
    assert.deepStrictEqual(ids(await byState(["completed"]), "last_call_id"), ["call_t2"])
    assert.deepStrictEqual(ids(await byState(["completed", "pending"]), "last_call_id"), ["call_t0", "call_t2"])
    assert.deepStrictEqual(ids(await byState(["failed"]), "last_call_id"), [])
    const one = await byState(["completed", "pending", "dialling"], { limit: 2 })
    assert.deepStrictEqual(ids(one, "last_call_id"), ["call_t0", "call_t1"])
    const key = String((one.json as Json)["pagination_key"])
    // the same states in another order are the same query
    const two = await byState(["dialling", "pending", "completed"], { limit: 2, pagination_key: key })
    assert.deepStrictEqual(ids(two, "last_call_id"), ["call_t2"])
    assert.strictEqual((two.json as Json)["has_more"], false)
    const down = await byState(["completed", "pending", "dialling"], { sort_order: "descending" })
    assert.deepStrictEqual(ids(down, "last_call_id"), ["call_t2", "call_t1", "call_t0"])
  })

  it("pages a batch's tasks: every task once, in order", async () => {
    const seen: Array<unknown> = []
    let key: string | undefined
    for (let i = 0; i < 5; i++) {
      const page = await post(`/list-batch-call-tasks/${first}`, { limit: 2, ...(key ? { pagination_key: key } : {}) })
      assert.strictEqual(page.status, 200, page.text)
      seen.push(...ids(page, "to_number"))
      const next = (page.json as Json)["pagination_key"]
      if (next === undefined) break
      key = String(next)
    }
    assert.deepStrictEqual(seen, ["+14155550101", "+14155550102", "+14155550103", "+14155550104", "+14155550105"])
  })

  it("answers 404 in the error shape for another org's batch and an unknown one", async () => {
    const other = await post(`/list-batch-call-tasks/${first}`, {}, b.key)
    assert.strictEqual(other.status, 404)
    assert.deepStrictEqual(other.json, { status: "error", message: `batch call ${first} not found` })
    const unknown = await post("/list-batch-call-tasks/batch_call_nope")
    assert.strictEqual(unknown.status, 404)
    assert.deepStrictEqual(unknown.json, { status: "error", message: "batch call batch_call_nope not found" })
  })

  it("answers 400 naming the field for bad input, and refuses a key of another batch, list or org", async () => {
    const path = `/list-batch-call-tasks/${first}`
    badRequest(await post(path, { limit: 1001 }), "limit", "1 to 1000")
    badRequest(await post(path, { skip: 2 }), "skip", "not a known field")
    badRequest(
      await post(path, { filter_criteria: { state: { type: "enum", value: ["done"] } } }),
      "filter_criteria.state",
      "\"done\" is not a task state"
    )
    badRequest(
      await post(path, { filter_criteria: { status: { type: "enum", value: ["pending"] } } }),
      "filter_criteria.status",
      "the members are state"
    )
    badRequest(await post(path, { filter_criteria: { state: { type: "enum", value: [] } } }), "filter_criteria.state")
    const page = await post(path, { limit: 1 })
    const key = String((page.json as Json)["pagination_key"])
    badRequest(await post(`/list-batch-call-tasks/${third}`, { limit: 1, pagination_key: key }), "different query")
    badRequest(await post("/list-batch-calls", { limit: 1, pagination_key: key }), "different query")
    const listKey = String(((await post("/list-batch-calls", { limit: 1 })).json as Json)["pagination_key"])
    badRequest(await post(path, { pagination_key: listKey }), "different query")
    badRequest(await post(path, { pagination_key: key }, b.key), "pagination_key")
    badRequest(await post("/list-batch-call-tasks/a%00b"), "batch_call_id")
  })
})

describe("OpenAPI", () => {
  it("lists both operations marked x-svc-extension, with their request and response schemas", async () => {
    const doc = (await server.request("GET", "/openapi.json", { key: null })).json as {
      paths: Record<string, Record<string, Json>>
    }
    const calls = doc.paths["/list-batch-calls"]?.["post"]
    const tasks = doc.paths["/list-batch-call-tasks/{batch_call_id}"]?.["post"]
    assert.strictEqual(calls?.["x-svc-extension"], true)
    assert.strictEqual(tasks?.["x-svc-extension"], true)
    assert.isDefined(calls?.["requestBody"])
    assert.isDefined(tasks?.["requestBody"])
    assert.include(JSON.stringify(tasks?.["responses"]), "ListBatchCallTasksResponse")
    assert.include(JSON.stringify(calls?.["responses"]), "ListBatchCallsResponse")
  })
})
