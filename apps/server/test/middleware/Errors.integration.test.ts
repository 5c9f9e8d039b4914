// Cross-cutting HTTP behaviour: auth, the error shape, unknown and removed routes, request ids,
// OpenAPI, rate limits. Every answer here goes through the real routes on a real database.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Api } from "@svc/api/Api.ts"
import * as DeprecationEndpoints from "@svc/domain/Deprecation/Endpoints.ts"
import { HttpApi } from "effect/http-api"
import * as TestServer from "../support/TestServer.ts"

let server: TestServer.TestServer

beforeAll(async () => {
  server = await TestServer.start()
  await server.org()
})
afterAll(() => server.close())

const isErrorBody = (json: unknown): json is { status: "error"; message: string } =>
  typeof json === "object" && json !== null && (json as { status?: unknown }).status === "error" &&
  typeof (json as { message?: unknown }).message === "string" && Object.keys(json).length === 2

describe("authentication", () => {
  for (
    const [name, key, message] of [
      ["missing", null, /API key missing/],
      ["empty", "", /API key missing/],
      ["malformed", "not a key!", /API key malformed/],
      ["unknown", "svc_unknownkeyunknownkeyunknownkey", /API key invalid/]
    ] as const
  ) {
    it(`answers 401 in the error shape when the key is ${name}`, async () => {
      const response = await server.request("GET", "/get-backfill-contact-job-status", { key })
      assert.strictEqual(response.status, 401)
      assert.strictEqual(response.headers.get("content-type"), "application/json")
      assert.isTrue(isErrorBody(response.json), response.text)
      assert.match((response.json as { message: string }).message, message)
    })
  }

  it("accepts a valid key and scopes to its org", async () => {
    const response = await server.request("GET", "/get-backfill-contact-job-status")
    assert.strictEqual(response.status, 200)
    assert.deepStrictEqual(response.json, {
      status: "idle",
      start_timestamp: 0,
      succeeded: 0,
      failed: 0,
      triggered_by: "manual"
    })
  })
})

describe("unknown and removed routes", () => {
  it("answers an unknown path with 404 in the error shape", async () => {
    const response = await server.request("GET", "/no-such-thing")
    assert.strictEqual(response.status, 404)
    assert.isTrue(isErrorBody(response.json))
    assert.match((response.json as { message: string }).message, /no endpoint GET \/no-such-thing/)
  })

  it("answers a known path with the wrong method with 404 in the error shape", async () => {
    const response = await server.request("DELETE", "/list-contacts")
    assert.strictEqual(response.status, 404)
    assert.isTrue(isErrorBody(response.json))
  })

  for (
    const [method, path, date] of [
      ["GET", "/list-agents", "2026-07-31"],
      ["POST", "/publish-agent/agent_1", "2026-07-20"],
      ["GET", "/get-agent-versions/agent_1", "2026-09-15"],
      ["GET", "/list-batch-tests", "2026-06-15"]
    ] as const
  ) {
    it(`answers removed ${method} ${path} with 404 naming ${date} and the replacement`, async () => {
      const response = await server.request(method, path)
      assert.strictEqual(response.status, 404)
      assert.isTrue(isErrorBody(response.json))
      const message = (response.json as { message: string }).message
      assert.include(message, `was removed on ${date}; use `)
    })
  }
})

describe("endpoints the deprecation schedule names", () => {
  // A concrete request for a schedule template: `{param}` filled in, `*` (any method) sent as GET.
  const requestFor = (method: string, path: string) => ({
    method: method === "*" ? "GET" : method,
    path: path.replace(/\{[^}]+\}/g, "id_1")
  })

  const served: Array<string> = []
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => served.push(`${endpoint.method} ${endpoint.path}`)
  })
  const isServed = (method: string, path: string) =>
    served.some((route) => route.replace(/:[\w]+/g, ":id") === `${method} ${path.replace(/id_1/g, ":id")}`)
  // A rule on part of an endpoint (update-call on ongoing calls, spec row 8) may name one svc serves: the rule
  // is about some of its uses, not the route.
  const unserved = DeprecationEndpoints.endpointRules.filter(({ endpoint }) => {
    const { method, path } = requestFor(endpoint.method, endpoint.path)
    return !(endpoint.partial !== undefined && isServed(method, path))
  })

  it("are not routes svc serves, except rules on part of a served endpoint (Deprecation headers: DeprecationHeaders.test.ts)", () => {
    assert.isAbove(unserved.length, 10)
    for (const { endpoint } of unserved) {
      const { method, path } = requestFor(endpoint.method, endpoint.path)
      assert.isFalse(isServed(method, path), `${method} ${path} is served`)
    }
  })

  for (const { endpoint, rule } of unserved) {
    const { method, path } = requestFor(endpoint.method, endpoint.path)
    it(`answer ${method} ${path} (${rule.id}) with 404 naming its status, date and replacement`, async () => {
      const response = await server.request(method, path)
      assert.strictEqual(response.status, 404)
      assert.isTrue(isErrorBody(response.json), response.text)
      const message = (response.json as { message: string }).message
      const finding = DeprecationEndpoints.checkEndpoint(method, path, Date.now())
      assert.isDefined(finding)
      if (finding === undefined) return
      const date = finding.status === "removed" ? finding.removedOn : finding.deprecatedOn ?? finding.date
      const phrase = finding.status === "removed"
        ? `was removed on ${date}`
        : finding.status === "deprecated"
        ? `is deprecated since ${date}`
        : `will be`
      assert.include(message, `${method} ${path} ${phrase}`)
      assert.include(message, `; use ${endpoint.replacement}`)
      assert.notInclude(message, "no endpoint")
    })
  }
})

describe("every response", () => {
  it("carries a request id, echoing a well-formed one the client sent", async () => {
    const mine = await server.request("GET", "/healthz", { headers: { "x-request-id": "abc-123" } })
    assert.strictEqual(mine.headers.get("x-request-id"), "abc-123")
    const generated = await server.request("GET", "/healthz", { headers: { "x-request-id": "bad id with spaces" } })
    assert.match(generated.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/)
  })
})

describe("request decoding", () => {
  it("answers malformed JSON with 400 naming the body", async () => {
    const response = await server.request("POST", "/backfill-contact-analysis-data", {
      raw: "{\"backfill_attributes\": ["
    })
    assert.strictEqual(response.status, 400)
    assert.isTrue(isErrorBody(response.json), response.text)
  })

  it("answers a rule violation with 400 naming the field", async () => {
    const response = await server.request("POST", "/backfill-contact-analysis-data", {
      body: { backfill_attributes: [] }
    })
    assert.strictEqual(response.status, 400)
    assert.match((response.json as { message: string }).message, /backfill_attributes/)
  })

  it("answers a bad query value with 400 naming the parameter", async () => {
    const response = await server.request("GET", "/v2/list-batch-tests?type=custom-llm&llm_id=x")
    assert.strictEqual(response.status, 400)
    assert.match((response.json as { message: string }).message, /type/)
  })
})

describe("OpenAPI", () => {
  it("serves the contract at /openapi.json with version 3.0.0, the bearer scheme and every endpoint", async () => {
    const response = await server.request("GET", "/openapi.json", { key: null })
    assert.strictEqual(response.status, 200)
    const doc = response.json as {
      info: { version: string }
      paths: Record<string, unknown>
      components: { securitySchemes: Record<string, { scheme: string }> }
    }
    assert.strictEqual(doc.info.version, "3.0.0")
    for (
      const path of [
        "/list-contacts",
        "/backfill-contact-analysis-data",
        "/create-batch-call",
        "/get-batch-test/{test_case_batch_job_id}",
        "/v2/list-batch-tests"
      ]
    ) {
      assert.property(doc.paths, path)
    }
    assert.strictEqual(doc.components.securitySchemes["bearer"]?.scheme, "Bearer")
  })
})

describe("rate limits", () => {
  it("answers 429 with Retry-After once a key exceeds its limit, and never limits create-batch-call", async () => {
    const limited = await TestServer.start({ SVC_RATE_LIMIT: "3", SVC_RATE_LIMIT_WINDOW_SECONDS: "60" })
    try {
      await limited.org()
      const statuses: Array<number> = []
      let last: TestServer.Response | undefined
      for (let i = 0; i < 4; i++) {
        last = await limited.request("GET", "/get-backfill-contact-job-status")
        statuses.push(last.status)
      }
      assert.deepStrictEqual(statuses, [200, 200, 200, 429])
      assert.isTrue(isErrorBody(last?.json))
      assert.match(last?.headers.get("retry-after") ?? "", /^\d+$/)
      assert.strictEqual(last?.headers.get("ratelimit-remaining"), "0")
      // create-batch-call has no 429 in the spec: over the limit it still answers (here 404: no number)
      const batch = await limited.request("POST", "/create-batch-call", {
        body: { from_number: "+14155550100", tasks: [{ to_number: "+14155550101" }] }
      })
      assert.strictEqual(batch.status, 404)
    } finally {
      await limited.close()
    }
  })
})
