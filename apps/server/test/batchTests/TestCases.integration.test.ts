import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import Retell from "retell-sdk"
import * as TestServer from "../support/TestServer.ts"

// Test-case definitions through raw HTTP and the vendor's SDK (issue 32 item 1): CRUD in the vendor's shapes, and a
// 400 in the spec's error body naming the field and the rule.

let server: TestServer.TestServer
beforeAll(async () => {
  server = await TestServer.start()
  await server.org()
})
afterAll(() => server.close())

const engine = { type: "custom-llm", llm_websocket_url: "ws://127.0.0.1:4000/llm" }
const scripted = {
  type: "scripted",
  name: "greets",
  response_engine: engine,
  user_turns: ["Hello"],
  assertions: [{ type: "contains", value: "Hi", turn: 0 }]
}

describe("test-case definitions", () => {
  it("creates, reads, updates, lists and deletes a scripted definition", async () => {
    const created = await server.request("POST", "/create-test-case-definition", { body: scripted })
    assert.strictEqual(created.status, 200, created.text)
    const body = created.json as Record<string, unknown>
    const id = body["test_case_definition_id"] as string
    assert.match(id, /^tcd_/)
    // every field the vendor marks required is there
    for (
      const key of [
        "name",
        "type",
        "user_prompt",
        "metrics",
        "dynamic_variables",
        "llm_model",
        "tool_mocks",
        "response_engine",
        "creation_timestamp",
        "user_modified_timestamp"
      ]
    ) {
      assert.property(body, key)
    }
    assert.deepStrictEqual(body["user_turns"], ["Hello"])
    const updated = await server.request("PUT", `/update-test-case-definition/${id}`, {
      body: { name: "greets politely" }
    })
    assert.strictEqual(updated.status, 200, updated.text)
    assert.strictEqual((updated.json as { name: string }).name, "greets politely")
    assert.deepStrictEqual((updated.json as { assertions: unknown }).assertions, scripted.assertions)
    const listed = await server.request(
      "GET",
      `/v2/list-test-case-definitions?type=custom-llm&llm_websocket_url=${encodeURIComponent(engine.llm_websocket_url)}`
    )
    assert.strictEqual(listed.status, 200, listed.text)
    assert.include(
      (listed.json as { items: Array<{ test_case_definition_id: string }> }).items.map((d) =>
        d.test_case_definition_id
      ),
      id
    )
    const deleted = await server.request("DELETE", `/delete-test-case-definition/${id}`)
    assert.strictEqual(deleted.status, 204)
    const gone = await server.request("GET", `/get-test-case-definition/${id}`)
    assert.strictEqual(gone.status, 404)
    assert.deepStrictEqual(gone.json, { status: "error", message: `test_case_definition_id ${id} not found` })
  })

  it("answers 400 naming the field and the rule", async () => {
    const cases: Array<[unknown, RegExp]> = [
      [
        { ...scripted, assertions: [{ type: "regex", value: "([" }] },
        /^assertions\[0\]\.value must be a valid JavaScript regular expression/
      ],
      [{ ...scripted, user_turns: [] }, /^user_turns must be at least one user turn/],
      [
        { ...scripted, assertions: [{ type: "max_latency_ms", value: 0 }] },
        /^assertions\[0\]\.value must be an integer >= 1/
      ],
      [
        { ...scripted, response_engine: { type: "custom-llm", llm_websocket_url: "https://x" } },
        /^response_engine\.llm_websocket_url must be a ws:\/\/ or wss:\/\/ URL/
      ]
    ]
    for (const [body, message] of cases) {
      const response = await server.request("POST", "/create-test-case-definition", { body })
      assert.strictEqual(response.status, 400, response.text)
      const error = response.json as { status: string; message: string }
      assert.strictEqual(error.status, "error")
      assert.match(error.message, message)
    }
  })

  it("refuses an update whose merged definition breaks a rule (an assertion's turn past the new script)", async () => {
    const created = await server.request("POST", "/create-test-case-definition", {
      body: { ...scripted, user_turns: ["a", "b"], assertions: [{ type: "contains", value: "x", turn: 2 }] }
    })
    const id = (created.json as { test_case_definition_id: string }).test_case_definition_id
    const response = await server.request("PUT", `/update-test-case-definition/${id}`, { body: { user_turns: ["a"] } })
    assert.strictEqual(response.status, 400)
    assert.match((response.json as { message: string }).message, /^assertions\[0\]\.turn must be at most 1/)
  })

  it("serves the vendor SDK's client.tests calls for a simulation definition", async () => {
    const { key } = await server.org("sdk org")
    const client = new Retell({ apiKey: key, baseURL: "http://svc.test", fetch: server.fetch, maxRetries: 0 })
    const created = await client.tests.createTestCaseDefinition({
      name: "sim",
      response_engine: { type: "retell-llm", llm_id: "llm_1" } as never,
      user_prompt: "You want to cancel your order",
      metrics: ["agent confirms the cancellation"]
    }).catch((error: unknown) => error)
    // the vendor's engine type is spelled svc-llm here (spec: ResponseEngine): the SDK's retell-llm is refused by name
    assert.instanceOf(created, Error)
    assert.include(String((created as Error).message), "response_engine")
    const ok = await client.tests.createTestCaseDefinition({
      name: "sim",
      response_engine: { type: "svc-llm", llm_id: "llm_1" } as never,
      user_prompt: "You want to cancel your order",
      metrics: ["agent confirms the cancellation"]
    })
    assert.strictEqual(ok.type, "simulation")
    const read = await client.tests.getTestCaseDefinition(ok.test_case_definition_id)
    assert.deepStrictEqual(read, ok)
    const page = await client.tests.listTestCaseDefinitions({ type: "svc-llm" as never, llm_id: "llm_1" })
    assert.deepStrictEqual(page.items.map((d) => d.test_case_definition_id), [ok.test_case_definition_id])
    await client.tests.deleteTestCaseDefinition(ok.test_case_definition_id)
  })
})

describe("create-batch-test", () => {
  it("answers 400 naming the engines this deployment runs for svc-llm and conversation-flow", async () => {
    for (
      const response_engine of [{ type: "svc-llm", llm_id: "llm_1" }, {
        type: "conversation-flow",
        conversation_flow_id: "cf_1"
      }]
    ) {
      const response = await server.request("POST", "/create-batch-test", {
        body: { response_engine, test_case_definition_ids: ["tcd_x"] }
      })
      assert.strictEqual(response.status, 400)
      assert.include((response.json as { message: string }).message, "batch tests run against custom-llm engines")
    }
  })

  it("answers 404 naming a definition that does not exist, and 400 for a repeated id", async () => {
    const missing = await server.request("POST", "/create-batch-test", {
      body: { response_engine: engine, test_case_definition_ids: ["tcd_missing"] }
    })
    assert.strictEqual(missing.status, 404)
    assert.include((missing.json as { message: string }).message, "test_case_definition_ids[0]")
    const repeated = await server.request("POST", "/create-batch-test", {
      body: { response_engine: engine, test_case_definition_ids: ["a", "a"] }
    })
    assert.strictEqual(repeated.status, 400)
    assert.match((repeated.json as { message: string }).message, /^test_case_definition_ids\[1\] must not repeat/)
  })
})
