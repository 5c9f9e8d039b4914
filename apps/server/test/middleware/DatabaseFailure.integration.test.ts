// A failure the handlers do not expect (here: the contacts table is gone) is a 500 in the error
// shape with a request id that is in the logs; no SQL, table name or stack trace reaches the client.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as TestServer from "../support/TestServer.ts"

describe("unexpected failures", () => {
  it("answer 500 with a generic message and the request id, leaking nothing", async () => {
    const server = await TestServer.start()
    try {
      const { key } = await server.org()
      await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DROP TABLE contacts CASCADE`))
      const response = await server.request("POST", "/list-contacts", {
        key,
        body: {},
        headers: { "x-request-id": "req-42" }
      })
      assert.strictEqual(response.status, 500)
      assert.deepStrictEqual(response.json, {
        status: "error",
        message: "unexpected server error; quote request id req-42 when reporting it"
      })
      assert.strictEqual(response.headers.get("x-request-id"), "req-42")
      assert.notMatch(response.text, /contacts|relation|SELECT|at /)
      assert.strictEqual((await server.request("GET", "/healthz")).status, 200)
    } finally {
      await server.close()
    }
  })
})
