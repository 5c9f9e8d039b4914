// Issue 16, items 4, 7 and 9 at the HTTP edge. Path parameters and query values follow one rule
// (valid percent-encoded UTF-8, no control characters, ids at most 255 characters) with a 400 naming the
// parameter: on main, a NUL in a path id reached PostgreSQL and answered 500, `%FF` and long ids a
// misleading 404. And every endpoint of the deprecation schedule that svc does not serve says what the
// schedule says of it, instead of a bare "no endpoint" (POST /v2/create-web-call answered that).
import { assert, describe, it } from "@effect/vitest"
import { endpointRules } from "@svc/domain/Deprecation/Endpoints.ts"
import * as TestServer from "../support/TestServer.ts"

const ID_ROUTES = [
  ["GET", "/get-contact/", "contact_id"],
  ["PATCH", "/update-contact/", "contact_id"],
  ["DELETE", "/delete-contact/", "contact_id"],
  ["GET", "/get-batch-test/", "test_case_batch_job_id"]
] as const

describe("request target rules", () => {
  it("path parameters: NUL and other control characters, invalid UTF-8 and overlong ids are 400 naming the parameter", async () => {
    const server = await TestServer.start()
    try {
      await server.org()
      for (const [method, prefix, name] of ID_ROUTES) {
        const cases: Array<[string, string]> = [
          ["a%00b", `path parameter ${name} must not contain control characters such as NUL (U+0000)`],
          ["a%1Fb", `path parameter ${name} must not contain control characters such as NUL (U+0000)`],
          ["%FF", `path parameter ${name} is not valid percent-encoded UTF-8`],
          ["%C3", `path parameter ${name} is not valid percent-encoded UTF-8`],
          ["%ED%A0%80", `path parameter ${name} is not valid percent-encoded UTF-8`],
          ["a".repeat(256), `path parameter ${name} is longer than 255 characters`]
        ]
        for (const [id, message] of cases) {
          const options = method === "PATCH" ? { body: { first_name: "x" } } : {}
          const response = await server.request(method, `${prefix}${id}`, options)
          assert.strictEqual(response.status, 400, `${method} ${prefix}${id}: ${response.text}`)
          assert.deepStrictEqual(response.json, { status: "error", message })
        }
        // The edges that pass: 255 characters, and any well-formed Unicode (not found, not refused).
        for (const id of ["a".repeat(255), "%F0%9F%98%80", "caf%C3%A9"]) {
          const options = method === "PATCH" ? { body: { first_name: "x" } } : {}
          const response = await server.request(method, `${prefix}${id}`, options)
          assert.strictEqual(response.status, 404, `${method} ${prefix}${id}: ${response.text}`)
        }
      }
    } finally {
      await server.close()
    }
  })

  it("query values follow the same rule, whatever the endpoint", async () => {
    const server = await TestServer.start()
    try {
      await server.org()
      const cases: Array<[string, string]> = [
        [
          "/v2/list-batch-tests?type=x%00",
          "query parameter type must not contain control characters such as NUL (U+0000)"
        ],
        [
          "/v2/list-batch-tests?limit=1%00",
          "query parameter limit must not contain control characters such as NUL (U+0000)"
        ],
        ["/get-backfill-contact-job-status?x=%FF", "query parameter x is not valid percent-encoded UTF-8"],
        [`/v2/list-batch-tests?type=${"a".repeat(1025)}`, "query parameter type is longer than 1024 characters"]
      ]
      for (const [route, message] of cases) {
        const response = await server.request("GET", route)
        assert.strictEqual(response.status, 400, `${route}: ${response.text}`)
        assert.deepStrictEqual(response.json, { status: "error", message })
      }
    } finally {
      await server.close()
    }
  })

  it("every scheduled endpoint svc does not serve says its status, date and replacement", async () => {
    const server = await TestServer.start()
    try {
      await server.org()
      let checked = 0
      for (const { endpoint } of endpointRules) {
        const path = endpoint.path.replaceAll(/\{[^}]+\}/g, "x")
        for (const method of endpoint.method === "*" ? ["GET", "POST"] : [endpoint.method]) {
          const options = method === "GET" || method === "DELETE" ? {} : { body: {} }
          const response = await server.request(method, path, options)
          if (response.status !== 404) continue // served by svc: its own answers and Deprecation headers
          const message = (response.json as { message: string }).message
          // served by svc (the calls API, issue 13): the 404 of a call that does not exist
          if (/^call_id x not found$/.test(message)) continue
          checked++
          assert.notMatch(message, /^no endpoint/, `${method} ${path}`)
          assert.include(message, endpoint.replacement, `${method} ${path}`)
          assert.match(message, /\d{4}-\d{2}-\d{2}/, `${method} ${path}: a date`)
        }
      }
      assert.isAtLeast(checked, 10)
      const webCall = await server.request("POST", "/v2/create-web-call", { body: {} })
      assert.deepStrictEqual(webCall.json, {
        status: "error",
        message:
          "POST /v2/create-web-call is deprecated since 2026-09-30 and is not served by svc; use POST /v3/create-web-call"
      })
    } finally {
      await server.close()
    }
  })
})
