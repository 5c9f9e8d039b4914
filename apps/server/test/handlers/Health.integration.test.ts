import { assert, describe, it } from "@effect/vitest"
import { Database, EmbeddedPostgres } from "@svc/store"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Health from "../../src/handlers/Health.ts"
import { DatabaseAvailability } from "../../src/middleware/DatabaseAvailability.ts"

/** A fetch-style handler over the routes with `database` as their SqlClient: no socket. */
const handlerWith = (database: Layer.Layer<Layer.Success<typeof TestDatabase.layer>, unknown>) =>
  HttpRouter.toWebHandler(
    Health.layer.pipe(
      Layer.provide(Layer.provideMerge(DatabaseAvailability.layer, database)),
      Layer.provide(HttpServer.layerServices)
    ),
    { disableLogger: true }
  )

const get = async (handler: ReturnType<typeof handlerWith>["handler"], route: string) => {
  const response = await handler(new Request(`http://svc.test${route}`), Context.empty())
  return { status: response.status, type: response.headers.get("content-type"), body: await response.json() }
}

describe("health", () => {
  it("healthz and readyz answer 200 while the database answers", async () => {
    const { handler, dispose } = handlerWith(TestDatabase.layer)
    try {
      assert.deepStrictEqual(await get(handler, "/healthz"), {
        status: 200,
        type: "application/json",
        body: { status: "ok" }
      })
      assert.deepStrictEqual(await get(handler, "/readyz"), {
        status: 200,
        type: "application/json",
        body: { status: "ok" }
      })
    } finally {
      await dispose()
    }
  })

  it("readyz answers 503 in the error shape once the database is gone, healthz stays 200", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-ready-"))
    fs.chmodSync(dataDir, 0o755)
    const scope = Effect.runSync(Scope.make())
    try {
      const server = await Effect.runPromise(Scope.provide(EmbeddedPostgres.start({ dataDir }), scope))
      const { handler, dispose } = handlerWith(Database.layerFromUrl(server.url))
      try {
        assert.strictEqual((await get(handler, "/readyz")).status, 200)
        await Effect.runPromise(Scope.close(scope, Exit.void)) // the database stops
        assert.deepStrictEqual(await get(handler, "/readyz"), {
          status: 503,
          type: "application/json",
          body: { status: "error", message: "database unavailable: it did not answer within 2 s" }
        })
        assert.strictEqual((await get(handler, "/healthz")).status, 200)
      } finally {
        await dispose()
      }
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)
})
