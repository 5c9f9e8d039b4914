// Issue 27, item 3: seven endpoints (get-call, update-call, delete-call, /v3/list-calls, get-batch-call,
// cancel-batch-call, get-contact-by-phone) ignored a query parameter they do not take, while the others answered 400
// as docs/api.md says (decision 0105: "an endpoint without query parameters accepts none"). One rule now, from one
// place in the contract (the HttpApi's middleware). The endpoints are read from the contract itself, so a new one is
// covered without a list to keep in step.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Api } from "@svc/api/Api.ts"
import { HttpApi } from "effect/http-api"
import * as TestServer from "../support/TestServer.ts"

let server: TestServer.TestServer

beforeAll(async () => {
  server = await TestServer.start()
  await server.org()
})
afterAll(() => server.close())

interface Endpoint {
  readonly method: string
  readonly path: string
  readonly declaresQuery: boolean
}

const endpoints: ReadonlyArray<Endpoint> = (() => {
  const found: Array<Endpoint> = []
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      found.push({ method: endpoint.method, path: endpoint.path, declaresQuery: endpoint.query !== undefined })
    }
  })
  return found
})()

/** A path with its parameters filled (ids that need not exist: the rule is checked before the handler runs). */
const concrete = (path: string) =>
  path.replace(":phone_number", "+14155550123").replace(/:[a-z_]+/g, (name) => `x_${name.slice(1)}`)

describe("query parameters no endpoint declares", () => {
  it("the contract has the endpoints the issue named", () => {
    const paths = endpoints.map((e) => `${e.method} ${e.path}`)
    for (
      const expected of [
        "GET /v2/get-call/:call_id",
        "PATCH /v2/update-call/:call_id",
        "DELETE /v2/delete-call/:call_id",
        "POST /v3/list-calls",
        "GET /get-batch-call/:batch_call_id",
        "POST /cancel-batch-call/:batch_call_id",
        "GET /get-contact-by-phone/:phone_number"
      ]
    ) assert.include(paths, expected)
    assert.isAtLeast(endpoints.length, 18)
  })

  it("are a 400 naming them on every endpoint of the API", async () => {
    for (const endpoint of endpoints) {
      const path = `${concrete(endpoint.path)}?svc_no_such_parameter=1`
      const response = await server.request(endpoint.method, path, endpoint.method === "GET" ? {} : { body: {} })
      const context = `${endpoint.method} ${path}: ${response.status} ${response.text.slice(0, 300)}`
      assert.strictEqual(response.status, 400, context)
      assert.deepStrictEqual(Object.keys(response.json as object).sort(), ["message", "status"], context)
      const message = (response.json as { message: string }).message
      // an endpoint without a query says it takes none; one with a query names the parameter its schema lacks
      assert.match(
        message,
        endpoint.declaresQuery
          ? /svc_no_such_parameter is not a known (field|parameter)/
          : /^query parameter svc_no_such_parameter is not a known parameter of this endpoint \(it takes none\)$/,
        context
      )
    }
  })

  it("come after the API key: without one the answer is 401, and nothing else of the request is read", async () => {
    const response = await server.request("GET", "/v2/get-call/x?svc_no_such_parameter=1", { key: null })
    assert.strictEqual(response.status, 401)
  })

  it("an endpoint still answers normally without them", async () => {
    assert.strictEqual((await server.request("POST", "/v3/list-calls", { body: {} })).status, 200)
    assert.strictEqual((await server.request("GET", "/v2/get-call/x")).status, 404)
  })
})
