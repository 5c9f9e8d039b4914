import { assert, describe, it } from "@effect/vitest"
import { Context, Layer } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import * as DeprecationHeaders from "../../src/middleware/DeprecationHeaders.ts"

const at = (iso: string) => Date.parse(iso)

describe("DeprecationHeaders", () => {
  it("marks a deprecated endpoint with Deprecation and Link from its date on, and not before", () => {
    // update-call is deprecated on 2026-08-31 (spec schedule) with no removal date
    assert.deepStrictEqual(
      DeprecationHeaders.headersFor("PATCH", "/v2/update-call/call_1", at("2026-08-30T23:59:59Z")),
      {}
    )
    const headers = DeprecationHeaders.headersFor("PATCH", "/v2/update-call/call_1", at("2026-08-31T00:00:00Z"))
    assert.strictEqual(headers["deprecation"], `@${Date.parse("2026-08-31T00:00:00Z") / 1000}`)
    assert.strictEqual(headers["link"], "</docs>; rel=\"deprecation\"; type=\"text/html\"")
    assert.isUndefined(headers["sunset"])
  })

  it("adds nothing to endpoints the schedule does not name, or once they are removed", () => {
    assert.deepStrictEqual(DeprecationHeaders.headersFor("POST", "/list-contacts", at("2026-11-22T00:00:00Z")), {})
    assert.deepStrictEqual(DeprecationHeaders.headersFor("GET", "/list-agents", at("2026-11-22T00:00:00Z")), {})
  })

  it("sets the headers on a live route's successful answer", async () => {
    const route = HttpRouter.add("PATCH", "/v2/update-call/:id", HttpServerResponse.jsonUnsafe({ ok: true }))
    const { dispose, handler } = HttpRouter.toWebHandler(
      Layer.mergeAll(route, DeprecationHeaders.layer).pipe(Layer.provide(HttpServer.layerServices)),
      { disableLogger: true }
    )
    try {
      const response = await handler(
        new Request("http://svc.test/v2/update-call/call_1", { method: "PATCH" }),
        Context.empty() as Context.Context<never>
      )
      assert.strictEqual(response.status, 200)
      // the live clock is past 2026-08-31 in this repository's lifetime; the pure function above pins dates
      assert.match(response.headers.get("deprecation") ?? "", /^@\d+$/)
      assert.include(response.headers.get("link") ?? "", "rel=\"deprecation\"")
    } finally {
      await dispose()
    }
  })
})
