// POST /create-suppression, POST /list-suppressions, DELETE /delete-suppression/{phone_number} over raw HTTP (issue 31
// item 5; svc extensions, decision 0550). Expectations from the issue and the decision: a number is E.164 (tasks'
// to_number rule), source defaults to api, a number already listed answers 200 with its stored row (201 when created),
// list pages in number order with search by the number's beginning, delete answers 204, then 404 in the error shape;
// another org's number is not on the caller's list; bad input is a 400 naming the field.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as TestServer from "../support/TestServer.ts"

type Json = Record<string, unknown>

const NOW = 1_900_000_000_000

let server: TestServer.TestServer
let a: { orgId: string; key: string }
let b: { orgId: string; key: string }

const clockAt = async (at: number) => {
  const clock = await Effect.runPromise(Effect.scoped(TestClock.make()))
  await Effect.runPromise(clock.setTime(at))
  return clock
}

const post = async (path: string, body?: unknown, key = a.key, at = NOW) =>
  server.request("POST", path, { key, clock: await clockAt(at), ...(body === undefined ? {} : { body }) })

const badRequest = (response: TestServer.Response, ...parts: Array<string>) => {
  assert.strictEqual(response.status, 400, response.text)
  const body = response.json as Json
  assert.deepStrictEqual(Object.keys(body).sort(), ["message", "status"])
  assert.strictEqual(body["status"], "error")
  for (const part of parts) assert.include(String(body["message"]), part)
}

const numbers = (response: TestServer.Response) =>
  ((response.json as Json)["items"] as Array<Json>).map((item) => item["phone_number"])

beforeAll(async () => {
  server = await TestServer.start()
  a = await server.org("A")
  b = await server.org("B")
})

afterAll(async () => {
  await server.close()
})

describe("create-suppression", () => {
  it("answers 201 with the new row, source api by default and the server's time", async () => {
    const created = await post("/create-suppression", { phone_number: "+14155550101", reason: "asked by email" })
    assert.strictEqual(created.status, 201, created.text)
    assert.deepStrictEqual(created.json, {
      phone_number: "+14155550101",
      reason: "asked by email",
      source: "api",
      created_timestamp: NOW
    })
  })

  it("answers 200 with the stored row, unchanged, for a number already listed", async () => {
    const first = await post("/create-suppression", { phone_number: "+14155550102", source: "crm" })
    assert.strictEqual(first.status, 201, first.text)
    const again = await post(
      "/create-suppression",
      { phone_number: "+14155550102", reason: "again", source: "other" },
      a.key,
      NOW + 5_000
    )
    assert.strictEqual(again.status, 200, again.text)
    assert.deepStrictEqual(again.json, {
      phone_number: "+14155550102",
      reason: null,
      source: "crm",
      created_timestamp: NOW
    })
  })

  it("refuses a number that is not E.164, naming phone_number", async () => {
    for (const phone_number of ["4155550101", "+1 415 555 0101", "+0415555", ""]) {
      badRequest(await post("/create-suppression", { phone_number }), "phone_number", "E.164")
    }
    badRequest(await post("/create-suppression", {}), "phone_number")
  })

  it("refuses a bad source, a long reason and an unknown field, each by name", async () => {
    badRequest(await post("/create-suppression", { phone_number: "+14155550103", source: "Opt Out" }), "source")
    badRequest(await post("/create-suppression", { phone_number: "+14155550103", source: "" }), "source")
    badRequest(
      await post("/create-suppression", { phone_number: "+14155550103", reason: "x".repeat(501) }),
      "reason",
      "500"
    )
    badRequest(await post("/create-suppression", { phone_number: "+14155550103", note: "x" }), "note")
    badRequest(await post("/create-suppression", { phone_number: "+14155550103", reason: "a\u0000b" }), "reason")
    const listed = await post("/list-suppressions", { search: "+14155550103" })
    assert.deepStrictEqual(numbers(listed), [])
  })

  it("needs the API key", async () => {
    const response = await server.request("POST", "/create-suppression", {
      key: null,
      body: { phone_number: "+14155550104" }
    })
    assert.strictEqual(response.status, 401, response.text)
  })
})

describe("list-suppressions", () => {
  beforeAll(async () => {
    for (const n of ["+12125550003", "+12125550001", "+12125550002", "+12135550001", "+442071234567"]) {
      const created = await post("/create-suppression", { phone_number: n }, b.key)
      assert.strictEqual(created.status, 201, created.text)
    }
  })

  it("pages the org's numbers in number order; an empty or null body is {}", async () => {
    const all = await server.request("POST", "/list-suppressions", { key: b.key })
    assert.strictEqual(all.status, 200, all.text)
    assert.deepStrictEqual(numbers(all), [
      "+12125550001",
      "+12125550002",
      "+12125550003",
      "+12135550001",
      "+442071234567"
    ])
    assert.strictEqual((all.json as Json)["has_more"], false)
    assert.deepStrictEqual(numbers(await post("/list-suppressions", null, b.key)), numbers(all))

    const first = await post("/list-suppressions", { limit: 2 }, b.key)
    assert.deepStrictEqual(numbers(first), ["+12125550001", "+12125550002"])
    assert.strictEqual((first.json as Json)["has_more"], true)
    const key = (first.json as Json)["pagination_key"]
    const second = await post("/list-suppressions", { limit: 2, pagination_key: key }, b.key)
    assert.deepStrictEqual(numbers(second), ["+12125550003", "+12135550001"])
    const down = await post("/list-suppressions", { limit: 2, sort_order: "descending" }, b.key)
    assert.deepStrictEqual(numbers(down), ["+442071234567", "+12135550001"])
  })

  it("searches by the number's beginning, + optional", async () => {
    assert.deepStrictEqual(numbers(await post("/list-suppressions", { search: "+1212" }, b.key)), [
      "+12125550001",
      "+12125550002",
      "+12125550003"
    ])
    assert.deepStrictEqual(numbers(await post("/list-suppressions", { search: "44" }, b.key)), ["+442071234567"])
    assert.deepStrictEqual(numbers(await post("/list-suppressions", { search: "1213555" }, b.key)), ["+12135550001"])
  })

  it("lists only the caller's numbers and refuses another org's key", async () => {
    const mine = await post("/list-suppressions", {}, a.key)
    assert.isFalse(numbers(mine).some((n) => String(n).startsWith("+1212")))
    const theirs = await post("/list-suppressions", { limit: 1 }, b.key)
    badRequest(
      await post("/list-suppressions", { limit: 1, pagination_key: (theirs.json as Json)["pagination_key"] }, a.key),
      "pagination_key"
    )
  })

  it("refuses bad input by name", async () => {
    badRequest(await post("/list-suppressions", { limit: 0 }, b.key), "limit")
    badRequest(await post("/list-suppressions", { limit: 1001 }, b.key), "limit")
    badRequest(await post("/list-suppressions", { search: "415-555" }, b.key), "search")
    badRequest(await post("/list-suppressions", { search: "" }, b.key), "search")
    badRequest(await post("/list-suppressions", { sort_order: "up" }, b.key), "sort_order")
    badRequest(await post("/list-suppressions", { filter_criteria: {} }, b.key), "filter_criteria")
    badRequest(await post("/list-suppressions", { pagination_key: "nope" }, b.key), "pagination_key")
  })
})

describe("delete-suppression", () => {
  it("answers 204, then 404 in the error shape; the number is no longer listed", async () => {
    const created = await post("/create-suppression", { phone_number: "+14155550199" })
    assert.strictEqual(created.status, 201, created.text)
    const deleted = await server.request("DELETE", "/delete-suppression/+14155550199", { key: a.key })
    assert.strictEqual(deleted.status, 204, deleted.text)
    assert.deepStrictEqual(numbers(await post("/list-suppressions", { search: "+14155550199" })), [])
    const again = await server.request("DELETE", "/delete-suppression/%2B14155550199", { key: a.key })
    assert.strictEqual(again.status, 404, again.text)
    assert.deepStrictEqual(again.json, {
      status: "error",
      message: "phone_number +14155550199 is not on the suppression list"
    })
  })

  it("takes the number percent-encoded too", async () => {
    await post("/create-suppression", { phone_number: "+14155550198" })
    const deleted = await server.request("DELETE", "/delete-suppression/%2B14155550198", { key: a.key })
    assert.strictEqual(deleted.status, 204, deleted.text)
  })

  it("treats another org's number as absent, and leaves it listed", async () => {
    const response = await server.request("DELETE", "/delete-suppression/+12125550001", { key: a.key })
    assert.strictEqual(response.status, 404, response.text)
    assert.strictEqual((response.json as Json)["status"], "error")
    assert.include(numbers(await post("/list-suppressions", { search: "+12125550001" }, b.key)), "+12125550001")
  })

  it("refuses a path number that is not E.164, naming phone_number", async () => {
    const response = await server.request("DELETE", "/delete-suppression/4155550101", { key: a.key })
    badRequest(response, "phone_number")
  })
})

describe("openapi.json", () => {
  it("has the three endpoints, marked as svc extensions", async () => {
    const doc = (await server.request("GET", "/openapi.json", { key: null })).json as {
      paths: Record<string, Record<string, Json>>
    }
    const create = doc.paths["/create-suppression"]?.["post"]
    const list = doc.paths["/list-suppressions"]?.["post"]
    const remove = doc.paths["/delete-suppression/{phone_number}"]?.["delete"]
    for (const op of [create, list, remove]) assert.strictEqual(op?.["x-svc-extension"], true)
    assert.includeMembers(Object.keys(create?.["responses"] as Json), ["200", "201", "400"])
    assert.include(JSON.stringify(list?.["responses"]), "ListSuppressionsResponse")
    assert.includeMembers(Object.keys(remove?.["responses"] as Json), ["204", "404"])
  })
})
