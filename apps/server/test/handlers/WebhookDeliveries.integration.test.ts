// POST /list-webhook-deliveries over raw HTTP (issue 33: "a way to list webhook deliveries and their attempts (per org,
// failures first, filter by call_id)"; svc extension). Expectations come from the issue and from the outbox's meaning
// (decision 0524): `failed` is given up, `gone` a 410, `pending` with a last status or error is waiting for a retry
// after a failed attempt; `history` keeps the attempts `{at, status, error, ms}`. Bad input is a 400 naming field and
// rule, keys are bound to org and filters, another org's deliveries never show.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as TestServer from "../support/TestServer.ts"

type Json = Record<string, unknown>

let server: TestServer.TestServer
let a: { orgId: string; key: string }
let b: { orgId: string; key: string }

interface Event {
  readonly id: string
  readonly org: string
  readonly call: string
  readonly state: "pending" | "delivered" | "gone" | "failed"
  readonly attempts: ReadonlyArray<{ at: number; status?: number; error?: string; ms: number }>
  readonly dueAt?: number
  readonly finishedAt?: number
}

const insert = (e: Event) =>
  server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const last = e.attempts[e.attempts.length - 1]
    return sql`
      INSERT INTO webhook_events (event_id, org_id, call_id, event, url, timeout_ms, body, state, due_at,
                                  first_attempt_at, attempts, last_status, last_error, history, finished_at)
      VALUES (${e.id}, ${e.org}, ${e.call}, 'call_ended', 'https://hooks.example.com/svc', 10000, '{}', ${e.state},
              ${e.dueAt ?? 0}, ${e.attempts[0]?.at ?? null}, ${e.attempts.length}, ${last?.status ?? null},
              ${last?.error ?? null}, ${JSON.stringify(e.attempts)}::jsonb, ${e.finishedAt ?? null})`
  }))

const post = (body: unknown, key = a.key) => server.request("POST", "/list-webhook-deliveries", { key, body })

const items = (response: TestServer.Response) => {
  assert.strictEqual(response.status, 200, response.text)
  return (response.json as Json)["items"] as Array<Json>
}

const badRequest = (response: TestServer.Response, ...parts: Array<string>) => {
  assert.strictEqual(response.status, 400, response.text)
  const body = response.json as Json
  assert.deepStrictEqual(Object.keys(body).sort(), ["message", "status"])
  assert.strictEqual(body["status"], "error")
  for (const part of parts) assert.include(String(body["message"]), part)
}

const T = 1_900_000_000_000

beforeAll(async () => {
  server = await TestServer.start()
  a = await server.org("A")
  b = await server.org("B")
  // inserted oldest first: event_seq follows
  await insert({
    id: "evt_delivered_old",
    org: a.orgId,
    call: "call_1",
    state: "delivered",
    attempts: [{ at: T, status: 200, ms: 12 }],
    finishedAt: T
  })
  await insert({
    id: "evt_failed",
    org: a.orgId,
    call: "call_2",
    state: "failed",
    attempts: [{ at: T + 1000, status: 500, error: "boom", ms: 30 }, {
      at: T + 3000,
      error: "timeout after 10000 ms",
      ms: 10000
    }],
    finishedAt: T + 86_400_000
  })
  await insert({ id: "evt_fresh", org: a.orgId, call: "call_3", state: "pending", attempts: [] })
  await insert({
    id: "evt_retrying",
    org: a.orgId,
    call: "call_2",
    state: "pending",
    attempts: [{ at: T + 5000, status: 503, error: "busy", ms: 20 }],
    dueAt: T + 7000
  })
  await insert({
    id: "evt_gone",
    org: a.orgId,
    call: "call_4",
    state: "gone",
    attempts: [{ at: T + 6000, status: 410, ms: 9 }],
    finishedAt: T + 6000
  })
  await insert({
    id: "evt_delivered_new",
    org: a.orgId,
    call: "call_3",
    state: "delivered",
    attempts: [{ at: T + 8000, status: 204, ms: 5 }],
    finishedAt: T + 8000
  })
  await insert({
    id: "evt_other_org",
    org: b.orgId,
    call: "call_2",
    state: "failed",
    attempts: [{ at: T, status: 500, ms: 1 }],
    finishedAt: T
  })
})

afterAll(() => server.close())

describe("list-webhook-deliveries", () => {
  it("lists failing deliveries first (gone, retrying, failed: newest first), then the rest newest first", async () => {
    const listed = items(await post(undefined))
    assert.deepStrictEqual(listed.map((d) => d["event_id"]), [
      "evt_gone",
      "evt_retrying",
      "evt_failed",
      "evt_delivered_new",
      "evt_fresh",
      "evt_delivered_old"
    ])
    assert.deepStrictEqual(listed.map((d) => d["failing"]), [true, true, true, false, false, false])
  })

  it("shows each attempt with its status, error and time, and the next retry of a pending delivery", async () => {
    const listed = items(await post({ filter_criteria: { call_id: { type: "enum", value: ["call_2"] } } }))
    assert.deepStrictEqual(listed.map((d) => d["event_id"]), ["evt_retrying", "evt_failed"])
    const [retrying, failed] = listed as [Json, Json]
    assert.deepStrictEqual(failed["attempts"], [
      { attempted_timestamp: T + 1000, status_code: 500, error: "boom", duration_ms: 30 },
      { attempted_timestamp: T + 3000, status_code: null, error: "timeout after 10000 ms", duration_ms: 10000 }
    ])
    assert.strictEqual(failed["attempt_count"], 2)
    assert.strictEqual(failed["state"], "failed")
    assert.strictEqual(failed["next_retry_timestamp"], null)
    assert.strictEqual(failed["finished_timestamp"], T + 86_400_000)
    assert.strictEqual(failed["last_error"], "timeout after 10000 ms")
    assert.strictEqual(retrying["next_retry_timestamp"], T + 7000)
    assert.strictEqual(retrying["last_status_code"], 503)
    assert.strictEqual(retrying["url"], "https://hooks.example.com/svc")
  })

  it("filters by state", async () => {
    const listed = items(await post({ filter_criteria: { state: { type: "enum", value: ["delivered", "gone"] } } }))
    assert.deepStrictEqual(listed.map((d) => d["event_id"]), ["evt_gone", "evt_delivered_new", "evt_delivered_old"])
  })

  it("never shows another org's deliveries", async () => {
    const listed = items(await post({}, b.key))
    assert.deepStrictEqual(listed.map((d) => d["event_id"]), ["evt_other_org"])
    assert.deepStrictEqual(
      items(await post({ filter_criteria: { call_id: { type: "enum", value: ["call_1"] } } }, b.key)),
      []
    )
  })

  it("pages with keys through the failing and the other deliveries, each once", async () => {
    const seen: Array<unknown> = []
    let key: string | undefined
    for (let page = 0; page < 10; page++) {
      const response = await post({ limit: 2, ...(key === undefined ? {} : { pagination_key: key }) })
      seen.push(...items(response).map((d) => d["event_id"]))
      key = (response.json as Json)["pagination_key"] as string | undefined
      if ((response.json as Json)["has_more"] !== true) break
    }
    assert.deepStrictEqual(seen, [
      "evt_gone",
      "evt_retrying",
      "evt_failed",
      "evt_delivered_new",
      "evt_fresh",
      "evt_delivered_old"
    ])
  })

  it("refuses a key of another org or other filters, and an altered key", async () => {
    const first = await post({ limit: 1 })
    const key = String((first.json as Json)["pagination_key"])
    badRequest(await post({ limit: 1, pagination_key: key }, b.key), "pagination_key")
    badRequest(
      await post({ limit: 1, pagination_key: key, filter_criteria: { state: { type: "enum", value: ["failed"] } } }),
      "pagination_key"
    )
    badRequest(
      await post({ limit: 1, pagination_key: key.slice(0, -2) + (key.endsWith("A") ? "BB" : "AA") }),
      "pagination_key"
    )
  })

  it("answers bad input with a 400 naming the field and the rule", async () => {
    badRequest(await post({ limit: 0 }), "limit", "an integer from 1 to 100")
    badRequest(await post({ limit: 101 }), "limit", "an integer from 1 to 100")
    badRequest(await post({ skip: 1 }), "skip")
    badRequest(
      await post({ filter_criteria: { status: { type: "enum", value: ["failed"] } } }),
      "filter_criteria.status",
      "call_id, state"
    )
    badRequest(
      await post({ filter_criteria: { state: { type: "enum", value: ["lost"] } } }),
      "filter_criteria.state",
      "\"lost\" is not a delivery state; expected one of pending, delivered, gone, failed"
    )
    badRequest(await post({ filter_criteria: { state: { type: "enum", value: [] } } }), "filter_criteria.state")
    badRequest(await post({ filter_criteria: { call_id: "call_1" } }), "filter_criteria.call_id")
    badRequest(await post({ filter_criteria: { call_id: { type: "enum", value: [""] } } }), "filter_criteria.call_id")
    const unauthorized = await post({}, "key_not_a_key")
    assert.strictEqual(unauthorized.status, 401, unauthorized.text)
  })

  it("is in /openapi.json, marked x-svc-extension, with its request and response schemas", async () => {
    const doc = (await server.request("GET", "/openapi.json", { key: null })).json as {
      paths: Record<string, Record<string, Json>>
    }
    const operation = doc.paths["/list-webhook-deliveries"]?.["post"]
    assert.strictEqual(operation?.["x-svc-extension"], true)
    assert.isDefined(operation?.["requestBody"])
    assert.include(JSON.stringify(operation?.["responses"]), "ListWebhookDeliveriesResponse")
  })
})
