// A revoked API key is refused (spec, Authentication: "A missing or invalid key yields status 401"; docs/api.md,
// Authentication: "unknown or revoked | 401 | API key invalid"), in the error shape `{status: "error", message}`.
// A key already in use stops working once its lookup's cache ends (docs/architecture.md: the key's org is found
// "through ApiKeys (cached 30 s)"): checked on a TestClock, to the millisecond of that bound, not by waiting 30 s.
// Keys are revoked the only way svc has today: `api_keys.revoked_timestamp` set in the database (migration 0002).
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ApiKeys, hashKey } from "@svc/store/orgs/ApiKeys.ts"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as TestServer from "../support/TestServer.ts"

const T0 = Date.parse("2026-12-01T10:00:00Z")
const CACHED_MS = 30_000

let server: TestServer.TestServer

beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

const revoke = (key: string, at: number) =>
  server.run(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`UPDATE api_keys SET revoked_timestamp = ${at} WHERE key_hash = ${hashKey(key)}`)
  )

/** A TestClock at `at`, for requests that must run at a given instant. */
const clockAt = async (at: number) => {
  const clock = await Effect.runPromise(Effect.scoped(TestClock.make()))
  await Effect.runPromise(clock.setTime(at))
  return clock
}

const isInvalidKey = (response: TestServer.Response) => {
  assert.strictEqual(response.status, 401, response.text)
  assert.deepStrictEqual(Object.keys(response.json as object).sort(), ["message", "status"])
  assert.strictEqual((response.json as { status: string }).status, "error")
  assert.match((response.json as { message: string }).message, /^API key invalid/)
}

const endpoints = [
  ["GET", "/get-backfill-contact-job-status", undefined],
  ["POST", "/list-contacts", {}],
  // never rate limited, still authenticated
  ["POST", "/create-batch-call", { from_number: "+14155550100", tasks: [{ to_number: "+14155550101" }] }]
] as const

describe("revoked API keys", () => {
  for (const [method, path, body] of endpoints) {
    it(`a key revoked before its first use: ${method} ${path} answers 401 API key invalid`, async () => {
      const { key } = await server.org()
      await revoke(key, T0)
      isInvalidKey(await server.request(method, path, { key, ...(body === undefined ? {} : { body }) }))
    })
  }

  it("a key in use stops working within 30 s of its revocation; the org's other keys keep working", async () => {
    const { key, orgId } = await server.org()
    const second = await server.run(Effect.flatMap(ApiKeys, (keys) => keys.createKey(orgId)))
    const used = await server.request("GET", "/get-backfill-contact-job-status", { key, clock: await clockAt(T0) })
    assert.strictEqual(used.status, 200, used.text)
    await revoke(key, T0 + 1)
    isInvalidKey(
      await server.request("GET", "/get-backfill-contact-job-status", { key, clock: await clockAt(T0 + CACHED_MS) })
    )
    // the same org's other key is not revoked with it
    const fine = await server.request("GET", "/get-backfill-contact-job-status", {
      key: second,
      clock: await clockAt(T0 + CACHED_MS)
    })
    assert.strictEqual(fine.status, 200, fine.text)
  })
})
