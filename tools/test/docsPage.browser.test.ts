// The API docs page (/docs) in a real headless Chromium (Debian's `chromium`): it renders from the
// contract with no network (the page's script is served inline) and lists the five spec endpoints.
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Api } from "@svc/api/Api.ts"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApiScalar } from "effect/http-api"
import { createServer } from "node:http"
import { chromium } from "playwright-core"

const CHROMIUM = process.env["SVC_CHROMIUM"] ?? "/usr/bin/chromium"

describe("/docs", () => {
  it("renders in headless Chromium and lists the five spec endpoints", async () => {
    const scope = Scope.makeUnsafe()
    try {
      const context = await Effect.runPromise(
        Layer.buildWithScope(
          HttpRouter.serve(HttpApiScalar.layer(Api, { path: "/docs" }), { disableLogger: true }).pipe(
            Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
          ),
          scope
        )
      )
      const address = Context.get(context, HttpServer.HttpServer).address
      assert.strictEqual(address._tag, "InetAddressV4")
      const port = address._tag === "InetAddressV4" ? address.port : 0
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync"
        ]
      })
      try {
        const page = await browser.newPage()
        const response = await page.goto(`http://127.0.0.1:${port}/docs`, { waitUntil: "load" })
        assert.strictEqual(response?.status(), 200)
        // The page script runs in the browser; the expressions are strings so Node's types stay DOM-free.
        await page.waitForFunction("document.body.innerText.includes('/create-batch-call')", undefined, {
          timeout: 30_000
        })
        const text = String(await page.evaluate("document.body.innerText"))
        for (
          const path of [
            "/list-contacts",
            "/backfill-contact-analysis-data",
            "/create-batch-call",
            "/get-batch-test/",
            "/v2/list-batch-tests"
          ]
        ) {
          assert.include(text, path)
        }
        assert.include(text, "svc voice-agent API")
      } finally {
        await browser.close()
      }
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 90_000)
})
