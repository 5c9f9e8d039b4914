// Each spec endpoint and companion over raw HTTP on a real database: shapes, statuses, paging,
// retries, and isolation between two orgs with interleaved data.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as TestServer from "../support/TestServer.ts"

let server: TestServer.TestServer
let a: { orgId: string; key: string }
let b: { orgId: string; key: string }

type Json = Record<string, unknown>
const message = (r: TestServer.Response) => String((r.json as Json | undefined)?.["message"])

const insertJob = (orgId: string, id: string, llmId: string, version: number, created: number) =>
  server.run(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`INSERT INTO test_case_batch_jobs (org_id, test_case_batch_job_id, status, engine_type, engine_id,
          engine_version, pass_count, fail_count, error_count, total_count, creation_timestamp, user_modified_timestamp)
        VALUES (${orgId}, ${id}, 'complete', 'svc-llm', ${llmId}, ${version}, 2, 1, 0, 3, ${created}, ${created + 1})`)
  )

beforeAll(async () => {
  server = await TestServer.start()
  a = await server.org("A")
  b = await server.org("B")
  // Interleaved jobs of both orgs on the same llm id: versions 1 and 2 for A, 1 for B.
  for (let i = 0; i < 5; i++) {
    await insertJob(a.orgId, `job_a_v2_${i}`, "llm_1", 2, 1_000 + i * 10)
    await insertJob(b.orgId, `job_b_v1_${i}`, "llm_1", 1, 1_001 + i * 10)
  }
  await insertJob(a.orgId, "job_a_v1_0", "llm_1", 1, 5_000)
})
afterAll(() => server.close())

describe("GET /get-batch-test/{id}", () => {
  it("returns the job in the spec's shape", async () => {
    const response = await server.request("GET", "/get-batch-test/job_a_v2_0", { key: a.key })
    assert.strictEqual(response.status, 200)
    assert.deepStrictEqual(response.json, {
      test_case_batch_job_id: "job_a_v2_0",
      status: "complete",
      response_engine: { type: "svc-llm", llm_id: "llm_1", version: 2 },
      pass_count: 2,
      fail_count: 1,
      error_count: 0,
      total_count: 3,
      creation_timestamp: 1000,
      user_modified_timestamp: 1001
    })
  })

  it("answers 404 for another org's job and for an unknown id, percent-encoded ids included", async () => {
    assert.strictEqual((await server.request("GET", "/get-batch-test/job_b_v1_0", { key: a.key })).status, 404)
    assert.strictEqual((await server.request("GET", "/get-batch-test/no%20such", { key: a.key })).status, 404)
  })
})

describe("GET /v2/list-batch-tests", () => {
  it("defaults to the latest version with jobs and pages newest first with keys", async () => {
    const first = await server.request("GET", "/v2/list-batch-tests?type=svc-llm&llm_id=llm_1&limit=3", { key: a.key })
    assert.strictEqual(first.status, 200)
    const page1 = first.json as { has_more: boolean; items: Array<Json>; pagination_key?: string }
    assert.deepStrictEqual(page1.items.map((j) => j["test_case_batch_job_id"]), [
      "job_a_v2_4",
      "job_a_v2_3",
      "job_a_v2_2"
    ])
    assert.isTrue(page1.has_more)
    const second = await server.request(
      "GET",
      `/v2/list-batch-tests?type=svc-llm&llm_id=llm_1&limit=3&pagination_key=${
        encodeURIComponent(page1.pagination_key ?? "")
      }`,
      { key: a.key }
    )
    const page2 = second.json as { has_more: boolean; items: Array<Json>; pagination_key?: string }
    assert.deepStrictEqual(page2.items.map((j) => j["test_case_batch_job_id"]), ["job_a_v2_1", "job_a_v2_0"])
    assert.isFalse(page2.has_more)
    assert.isUndefined(page2.pagination_key)
  })

  it("filters by an explicit version", async () => {
    const response = await server.request("GET", "/v2/list-batch-tests?type=svc-llm&llm_id=llm_1&version=1", {
      key: a.key
    })
    assert.deepStrictEqual((response.json as { items: Array<Json> }).items.map((j) => j["test_case_batch_job_id"]), [
      "job_a_v1_0"
    ])
  })

  it("refuses another org's pagination key, and a key from another query, with 400", async () => {
    const first = await server.request("GET", "/v2/list-batch-tests?type=svc-llm&llm_id=llm_1&limit=1", { key: a.key })
    const key = encodeURIComponent((first.json as { pagination_key: string }).pagination_key)
    const foreign = await server.request(
      "GET",
      `/v2/list-batch-tests?type=svc-llm&llm_id=llm_1&pagination_key=${key}`,
      {
        key: b.key
      }
    )
    assert.strictEqual(foreign.status, 400)
    assert.match(message(foreign), /^pagination_key: /)
    const otherQuery = await server.request(
      "GET",
      `/v2/list-batch-tests?type=svc-llm&llm_id=llm_1&version=1&pagination_key=${key}`,
      { key: a.key }
    )
    assert.strictEqual(otherQuery.status, 400)
  })

  for (
    const [query, field] of [
      ["type=svc-llm", "llm_id"],
      ["type=svc-llm&llm_id=", "llm_id"],
      ["type=custom-llm&llm_id=x", "type"],
      ["llm_id=x", "type"],
      ["type=svc-llm&llm_id=x&limit=0", "limit"],
      ["type=svc-llm&llm_id=x&limit=1001", "limit"],
      ["type=svc-llm&llm_id=x&version=latest", "version"]
    ] as const
  ) {
    it(`answers ${query} with 400 naming ${field}`, async () => {
      const response = await server.request("GET", `/v2/list-batch-tests?${query}`, { key: a.key })
      assert.strictEqual(response.status, 400, response.text)
      assert.include(message(response), field)
    })
  }
})

describe("backfill", () => {
  it("queues one job per org; a second start returns the active job; other orgs are untouched", async () => {
    const started = await server.request("POST", "/backfill-contact-analysis-data", {
      key: a.key,
      body: { backfill_attributes: ["plan"] }
    })
    assert.strictEqual(started.status, 200)
    const status = started.json as Json
    assert.strictEqual(status["status"], "queued")
    assert.strictEqual(status["triggered_by"], "manual")
    assert.strictEqual(status["succeeded"], 0)
    const again = await server.request("POST", "/backfill-contact-analysis-data", {
      key: a.key,
      body: { backfill_attributes: ["other"] }
    })
    assert.deepStrictEqual(again.json, status)
    assert.deepStrictEqual(
      (await server.request("GET", "/get-backfill-contact-job-status", { key: a.key })).json,
      status
    )
    assert.strictEqual(
      ((await server.request("GET", "/get-backfill-contact-job-status", { key: b.key })).json as Json)["status"],
      "idle"
    )
  })
})

describe("contacts", () => {
  it("creates, reads, updates, lists, deletes; a second contact with the same number is a 400", async () => {
    const created = await server.request("POST", "/create-contact", {
      key: a.key,
      body: { phone_number: "+14155550123", first_name: "Ann", tags: ["vip"], custom_fields: { plan: "pro" } }
    })
    assert.strictEqual(created.status, 201, created.text)
    const contact = created.json as Json
    const id = String(contact["contact_id"])
    assert.strictEqual(contact["org_id"], a.orgId)
    assert.deepStrictEqual(contact["contact_tags"], ["vip"])
    const duplicate = await server.request("POST", "/create-contact", {
      key: a.key,
      body: { phone_number: "+14155550123" }
    })
    assert.strictEqual(duplicate.status, 400)
    const got = await server.request("GET", `/get-contact/${id}`, { key: a.key })
    assert.deepStrictEqual(got.json, contact)
    const updated = await server.request("PATCH", `/update-contact/${id}`, { key: a.key, body: { last_name: "Lee" } })
    assert.strictEqual((updated.json as Json)["last_name"], "Lee")
    const listed = await server.request("POST", "/list-contacts", { key: a.key, body: { search_query: "LEE" } })
    assert.strictEqual((listed.json as Json)["total"], 1)
    const deleted = await server.request("DELETE", `/delete-contact/${id}`, { key: a.key })
    assert.strictEqual(deleted.status, 204)
    assert.strictEqual((await server.request("GET", `/get-contact/${id}`, { key: a.key })).status, 404)
  })

  it("treats a null or empty body as {}", async () => {
    for (const raw of ["null", "", "{}"]) {
      const response = await server.request("POST", "/list-contacts", { key: b.key, raw })
      assert.strictEqual(response.status, 200, `${JSON.stringify(raw)}: ${response.text}`)
      assert.deepStrictEqual(response.json, { has_more: false, items: [], total: 0 })
    }
  })

  it("never shows or changes another org's contact", async () => {
    const created = await server.request("POST", "/create-contact", {
      key: a.key,
      body: { phone_number: "+14155550999" }
    })
    const id = String((created.json as Json)["contact_id"])
    assert.strictEqual((await server.request("GET", `/get-contact/${id}`, { key: b.key })).status, 404)
    assert.strictEqual(
      (await server.request("PATCH", `/update-contact/${id}`, { key: b.key, body: { first_name: "x" } })).status,
      404
    )
    assert.strictEqual((await server.request("DELETE", `/delete-contact/${id}`, { key: b.key })).status, 404)
    const listB = await server.request("POST", "/list-contacts", { key: b.key, body: { search_query: "555099" } })
    assert.strictEqual((listB.json as Json)["total"], 0)
    // org B may have the same number itself: uniqueness is per org
    assert.strictEqual(
      (await server.request("POST", "/create-contact", { key: b.key, body: { phone_number: "+14155550999" } })).status,
      201
    )
  })

  it("refuses a contacts pagination key minted for another org or another query", async () => {
    for (let i = 0; i < 3; i++) {
      await server.request("POST", "/create-contact", { key: a.key, body: { phone_number: `+1415555077${i}` } })
    }
    const first = await server.request("POST", "/list-contacts", { key: a.key, body: { limit: 1 } })
    const pagination_key = (first.json as { pagination_key: string }).pagination_key
    assert.isString(pagination_key)
    const next = await server.request("POST", "/list-contacts", { key: a.key, body: { limit: 1, pagination_key } })
    assert.strictEqual(next.status, 200)
    const foreign = await server.request("POST", "/list-contacts", { key: b.key, body: { limit: 1, pagination_key } })
    assert.strictEqual(foreign.status, 400)
    assert.include(message(foreign), "pagination_key")
    const otherQuery = await server.request("POST", "/list-contacts", {
      key: a.key,
      body: { limit: 1, pagination_key, sort_order: "asc" }
    })
    assert.strictEqual(otherQuery.status, 400)
  })

  it("answers limit 0 and 1001 and a negative skip with 400 naming the field", async () => {
    for (
      const [body, field] of [[{ limit: 0 }, "limit"], [{ limit: 1001 }, "limit"], [{ skip: -1 }, "skip"]] as const
    ) {
      const response = await server.request("POST", "/list-contacts", { key: a.key, body })
      assert.strictEqual(response.status, 400)
      assert.include(message(response), field)
    }
  })
})

describe("POST /create-batch-call", () => {
  beforeAll(async () => {
    await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${a.orgId}, '+14155550100', 0)`
      yield* sql`INSERT INTO agents (org_id, agent_id, version, created_timestamp) VALUES (${a.orgId}, 'agent_1', 3, 0)`
    }))
  })

  const body = {
    from_number: "+14155550100",
    name: "spring campaign",
    trigger_timestamp: 1_900_000_000_000,
    tasks: [{ to_number: "+14155550101", override_agent_id: "agent_1", override_agent_version: 3 }, {
      to_number: "+14155550102"
    }],
    call_time_window: {
      windows: [{ start: 600, end: 720 }, { start: 540, end: 600 }],
      day: ["Friday", "Monday", "Monday"]
    }
  }

  it("stores the batch and answers the BatchCall with the canonical window", async () => {
    const response = await server.request("POST", "/create-batch-call", { key: a.key, body })
    assert.strictEqual(response.status, 200, response.text)
    const batch = response.json as Json
    assert.match(String(batch["batch_call_id"]), /\S+/)
    assert.deepStrictEqual({ ...batch, batch_call_id: "x" }, {
      batch_call_id: "x",
      name: "spring campaign",
      from_number: "+14155550100",
      scheduled_timestamp: 1_900_000_000_000,
      total_task_count: 2,
      call_time_window: {
        windows: [{ start: 540, end: 720 }],
        timezone: "America/Los_Angeles",
        day: ["Monday", "Friday"]
      }
    })
  })

  it("answers 404 for a number or agent the org does not have, and for another org's number", async () => {
    const number = await server.request("POST", "/create-batch-call", {
      key: a.key,
      body: { ...body, from_number: "+14155550199" }
    })
    assert.strictEqual(number.status, 404)
    const agent = await server.request("POST", "/create-batch-call", {
      key: a.key,
      body: { ...body, tasks: [{ to_number: "+14155550101", override_agent_id: "agent_9" }] }
    })
    assert.strictEqual(agent.status, 404)
    assert.include(message(agent), "agent_9")
    assert.strictEqual((await server.request("POST", "/create-batch-call", { key: b.key, body })).status, 404)
  })

  it("answers 400 naming the task for a bad number, an empty task list and a bad window", async () => {
    const badNumber = await server.request("POST", "/create-batch-call", {
      key: a.key,
      body: { ...body, tasks: [{ to_number: "555-1234" }] }
    })
    assert.strictEqual(badNumber.status, 400)
    assert.include(message(badNumber), "tasks[0].to_number")
    const relaxed = await server.request("POST", "/create-batch-call", {
      key: a.key,
      body: { ...body, tasks: [{ to_number: "555-1234", ignore_e164_validation: true }] }
    })
    assert.strictEqual(relaxed.status, 200)
    assert.strictEqual(
      (await server.request("POST", "/create-batch-call", { key: a.key, body: { ...body, tasks: [] } })).status,
      400
    )
    const window = await server.request("POST", "/create-batch-call", {
      key: a.key,
      body: { ...body, call_time_window: { windows: [{ start: 600, end: 600 }] } }
    })
    assert.strictEqual(window.status, 400)
    assert.include(message(window), "call_time_window.windows[0]")
  })

  it("takes a retry_policy (svc extension) and answers 400 naming its member for a broken rule or an unknown one", async () => {
    const ok = await server.request("POST", "/create-batch-call", {
      key: a.key,
      body: { ...body, retry_policy: { max_retries: 2, retry_on: ["no_answer", "busy"], min_spacing_ms: 600_000 } }
    })
    assert.strictEqual(ok.status, 200, ok.text)
    const cases: ReadonlyArray<[unknown, string]> = [
      [{ max_retries: 11, retry_on: ["busy"] }, "retry_policy.max_retries"],
      [{ max_retries: 1, retry_on: ["answered"] }, "retry_policy.retry_on[0]"],
      [{ max_retries: 1, retry_on: ["busy"], min_spacing_ms: 1_000 }, "retry_policy.min_spacing_ms"],
      [{ max_retries: 1, retry_on: ["busy"], spacing_ms: 60_000 }, "retry_policy.spacing_ms"]
    ]
    for (const [retry_policy, field] of cases) {
      const response = await server.request("POST", "/create-batch-call", {
        key: a.key,
        body: { ...body, retry_policy }
      })
      assert.strictEqual(response.status, 400, response.text)
      assert.include(message(response), field)
    }
  })

  it("returns the first batch for a retry with the same Idempotency-Key or the vendor client's retry header", async () => {
    const first = await server.request("POST", "/create-batch-call", {
      key: a.key,
      body,
      headers: { "idempotency-key": "k-1" }
    })
    const retry = await server.request("POST", "/create-batch-call", {
      key: a.key,
      body,
      headers: { "idempotency-key": "k-1" }
    })
    assert.strictEqual((retry.json as Json)["batch_call_id"], (first.json as Json)["batch_call_id"])
    const reused = await server.request("POST", "/create-batch-call", {
      key: a.key,
      body: { ...body, name: "other" },
      headers: { "idempotency-key": "k-1" }
    })
    assert.strictEqual(reused.status, 400)
    const unique = { ...body, name: "keyless" }
    const original = await server.request("POST", "/create-batch-call", { key: a.key, body: unique })
    const stainless = await server.request("POST", "/create-batch-call", {
      key: a.key,
      body: unique,
      headers: { "x-stainless-retry-count": "1" }
    })
    assert.strictEqual((stainless.json as Json)["batch_call_id"], (original.json as Json)["batch_call_id"])
  })
})
