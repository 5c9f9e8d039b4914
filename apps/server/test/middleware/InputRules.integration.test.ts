// The input rules of decision 0105 through the real server and database, on every endpoint: unknown
// fields and parameters are a 400 naming them (issue 16, item 7), while what the vendor's clients send
// keeps working.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as TestServer from "../support/TestServer.ts"

let server: TestServer.TestServer
let org: { orgId: string; key: string }

beforeAll(async () => {
  server = await TestServer.start()
  org = await server.org()
  await server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp)
      VALUES (${org.orgId}, '+14157774444', 0)`
    yield* sql`INSERT INTO agents (org_id, agent_id, version, created_timestamp)
      VALUES (${org.orgId}, 'agent_1', 1, 0)`
  }))
})
afterAll(() => server.close())

const answer = async (method: string, path: string, options?: TestServer.RequestOptions) => {
  const response = await server.request(method, path, options)
  const message = (response.json as { message?: unknown } | undefined)?.message
  return { status: response.status, message: typeof message === "string" ? message : response.text }
}

const task = { to_number: "+12137774445" }
const batch = { from_number: "+14157774444", tasks: [task] }

describe("unknown fields and parameters", () => {
  const cases: ReadonlyArray<readonly [string, string, TestServer.RequestOptions, string]> = [
    ["POST", "/list-contacts", { body: { limit: 5, channel: "voice" } }, "channel is not a known field"],
    [
      "POST",
      "/list-contacts",
      { body: { filter_criteria: { external_id: { type: "string", value: "a", case: "insensitive" } } } },
      "filter_criteria.external_id.case is not a known field"
    ],
    ["POST", "/create-contact", { body: { phone_number: "+14155550123", email: "a@b.c" } }, "email is not a known"],
    [
      "PATCH",
      "/update-contact/c_1",
      { body: { phone_number: "+14155550123" } },
      "phone_number is not a known field"
    ],
    [
      "POST",
      "/backfill-contact-analysis-data",
      { body: { backfill_attributes: ["a"], backfill_call_filter: { channel: "voice" } } },
      "backfill_call_filter.channel is not a known field"
    ],
    ["POST", "/create-batch-call", { body: { ...batch, retry: true } }, "retry is not a known field"],
    [
      "POST",
      "/create-batch-call",
      { body: { ...batch, tasks: [{ ...task, retell_llm_dynamic_variables: { a: "b" } }] } },
      "tasks[0].retell_llm_dynamic_variables is not a known field"
    ],
    [
      "POST",
      "/create-batch-call",
      { body: { ...batch, tasks: [{ ...task, agent_override: { agent: { voice_ids: ["x"] } } }] } },
      "tasks[0].agent_override.agent.voice_ids is not a known field"
    ],
    [
      "GET",
      "/v2/list-batch-tests?type=svc-llm&llm_id=l&sort_order=asc",
      {},
      "query parameter sort_order is not a known parameter"
    ],
    // endpoints that take no query parameters take none
    ["GET", "/get-contact/c_1?fields=all", {}, "query parameter fields is not a known parameter"],
    ["DELETE", "/delete-contact/c_1?force=true", {}, "query parameter force is not a known parameter"],
    ["PATCH", "/update-contact/c_1?upsert=1", { body: {} }, "query parameter upsert is not a known parameter"],
    ["GET", "/get-batch-test/job_1?expand", {}, "query parameter expand is not a known parameter"],
    ["GET", "/get-backfill-contact-job-status?job=1", {}, "query parameter job is not a known parameter"],
    ["POST", "/list-contacts?limit=5", { body: {} }, "query parameter limit is not a known parameter"],
    ["POST", "/create-contact?dry%20run=1", { body: { phone_number: "+14155550123" } }, "query parameter dry run is"],
    [
      "POST",
      "/backfill-contact-analysis-data?x=1",
      { body: { backfill_attributes: ["a"] } },
      "query parameter x is not a known"
    ],
    ["POST", "/create-batch-call?async=true", { body: batch }, "query parameter async is not a known parameter"]
  ]
  for (const [method, path, options, expected] of cases) {
    it(`answers ${method} ${path} ${JSON.stringify(options.body ?? null)} with 400: ${expected}`, async () => {
      const { message, status } = await answer(method, path, options)
      assert.strictEqual(status, 400, message)
      assert.include(message, expected)
    })
  }

  it("still accepts an empty query string and the vendor client's empty values", async () => {
    assert.strictEqual((await answer("GET", "/get-backfill-contact-job-status?")).status, 200)
    const listed = await answer("GET", "/v2/list-batch-tests?type=svc-llm&llm_id=l&version=&pagination_key=")
    assert.strictEqual(listed.status, 200, listed.message)
  })
})

describe("what the vendor's clients send", () => {
  // The vendor's "required and optional params" example (vendor word replaced by svc), trimmed to one
  // value per kind of field, with its older agent settings and the vendor-only fields of the current client.
  const vendorTask = {
    to_number: "+12137774445",
    ignore_e164_validation: false,
    override_agent_id: "agent_1",
    override_agent_version: 1,
    metadata: {},
    svc_llm_dynamic_variables: { customer_name: "bar" },
    agent_override: {
      agent: {
        agent_name: "Jarvis",
        ambient_sound: "coffee-shop",
        custom_stt_config: { endpointing_ms: 0, provider: "azure" },
        pii_config: { categories: ["person_name"], mode: "post_call" },
        voice_model: "eleven_turbo_v2",
        enable_voicemail_detection: true,
        voicemail_message: "Hi, please give us a callback.",
        voicemail_detection_timeout_ms: 30000,
        is_public: false,
        normalize_for_speech: true
      },
      svc_llm: { start_speaker: "user", kb_config: { filter_score: 0.6, top_k: 3 } },
      conversation_flow: { model_choice: { model: "gpt-4.1", type: "cascading", high_priority: true } }
    }
  }

  it("creates a batch from the vendor's example and keeps every override field it sent", async () => {
    const response = await server.request("POST", "/create-batch-call", {
      body: { from_number: "+14157774444", name: "First batch call", tasks: [vendorTask] }
    })
    assert.strictEqual(response.status, 200, response.text)
    const batchId = (response.json as { batch_call_id: string }).batch_call_id
    const stored = await server.run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql<{ agent_override: unknown }>`SELECT agent_override FROM batch_call_tasks WHERE batch_call_id = ${batchId}`
      )
    )
    assert.deepStrictEqual(stored[0]?.agent_override, vendorTask.agent_override)
  })

  it("refuses the analysis prompts the schedule removed, naming the date and the replacement", async () => {
    const withPrompt = {
      ...vendorTask,
      agent_override: { agent: { analysis_summary_prompt: "Summarize the outcome of the conversation." } }
    }
    const { message, status } = await answer("POST", "/create-batch-call", {
      body: { from_number: "+14157774444", tasks: [withPrompt] }
    })
    assert.strictEqual(status, 400)
    assert.include(
      message,
      "tasks[0].agent_override.agent.analysis_summary_prompt was removed on 2026-06-15; use `post_call_analysis_data`"
    )
  })

  it("lists contacts with the vendor client's null body and full set of list fields", async () => {
    assert.strictEqual((await answer("POST", "/list-contacts", { raw: "null" })).status, 200)
    const full = await answer("POST", "/list-contacts", {
      body: {
        limit: 10,
        skip: 0,
        sort_order: "asc",
        search_query: "ann",
        filter_criteria: {
          external_id: { type: "present", op: "pr" },
          last_conversation_timestamp: { type: "range", op: "bt", value: [0, 1] },
          custom_fields: [{ key: "plan", type: "enum", op: "in", value: ["pro"] }],
          contact_id: { type: "string", op: "sw", value: "c" },
          phone_number: { type: "string", op: "co", value: "415" },
          do_not_call: { type: "boolean", op: "eq", value: false },
          tags: { type: "enum", op: "in", value: ["vip"] }
        }
      }
    })
    assert.strictEqual(full.status, 200, full.message)
  })

  it("creates and updates a contact with the vendor client's fields", async () => {
    const created = await server.request("POST", "/create-contact", {
      body: {
        phone_number: "+14155550177",
        first_name: "f",
        last_name: "l",
        do_not_call: false,
        tags: ["a"],
        custom_fields: { plan: "pro" }
      }
    })
    assert.strictEqual(created.status, 201, created.text)
    const id = (created.json as { contact_id: string }).contact_id
    const updated = await answer("PATCH", `/update-contact/${id}`, {
      body: { first_name: "g", last_name: "m", do_not_call: true, tags: ["b"], custom_fields: { plan: null } }
    })
    assert.strictEqual(updated.status, 200, updated.message)
  })
})

// Text rules (valid Unicode, no NUL, lengths) are refused before routing: RequestTarget and BodyText tests.
// What passes them reaches the endpoint intact:
describe("text that passes the rules", () => {
  const list = "/v2/list-batch-tests?type=svc-llm"
  it("looks up ids of up to 255 characters however they are encoded, and percent-encoded ones", async () => {
    for (const id of ["x".repeat(255), "é".repeat(255), "😀".repeat(127), "a b/c"]) {
      const { message, status } = await answer("GET", `/get-contact/${encodeURIComponent(id)}`)
      assert.strictEqual(status, 404, message)
      assert.strictEqual(message, `contact_id ${id} not found`)
    }
  })
  it("accepts percent-encoded UTF-8 and form-encoded spaces", async () => {
    for (const id of ["caf%C3%A9", "a+b", "a%20b", "%F0%9F%98%80"]) {
      const { message, status } = await answer("GET", `${list}&llm_id=${id}`)
      assert.strictEqual(status, 200, message)
    }
  })
  it("keeps UTF-8 text, escaped non-ASCII and emoji written as escaped surrogate pairs", async () => {
    const created = await server.request("POST", "/create-contact", {
      raw:
        "{\"phone_number\":\"+14155550166\",\"first_name\":\"Zoë \\u00e9 \\ud83d\\ude00 😀\",\"last_name\":\"a\\\\u0000\"}"
    })
    assert.strictEqual(created.status, 201, created.text)
    const contact = created.json as { first_name: string; last_name: string }
    assert.strictEqual(contact.first_name, "Zoë é 😀 😀")
    assert.strictEqual(contact.last_name, "a\\u0000")
    const found = await answer("POST", "/list-contacts", { body: { search_query: "zoë é 😀" } })
    assert.strictEqual(found.status, 200, found.message)
  })
})
