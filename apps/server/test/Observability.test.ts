// The per-request metrics (Observability.ts): one series per route, method and status, counted on every request
// (made once and reused since issue 17: the counts must still land in the right series), whatever the log level
// (the request line is only built when it is written).
import { assert, describe, it } from "@effect/vitest"
import { Context, Layer, References } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import * as Observability from "../src/http/Observability.ts"

const serve = (minimum: "Info" | "Warn") => {
  const routes = Layer.mergeAll(
    HttpRouter.add("POST", "/list-contacts", HttpServerResponse.jsonUnsafe({ ok: true })),
    HttpRouter.add("GET", "/readyz", HttpServerResponse.jsonUnsafe({ ok: false }, { status: 503 })),
    Observability.layer
  )
  const { dispose, handler } = HttpRouter.toWebHandler(
    routes.pipe(
      Layer.provide(HttpServer.layerServices),
      Layer.provide(Layer.succeed(References.MinimumLogLevel, minimum))
    ),
    { disableLogger: true }
  )
  const send = (method: string, path: string) =>
    handler(new Request(`http://svc.test${path}`, { method }), Context.empty() as Context.Context<never>)
  return { dispose, send }
}

/** The value of one Prometheus series, by its labels, or undefined. */
const sample = (text: string, name: string, labels: Record<string, string>): number | undefined => {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue
    const body = line.slice(name.length + 1, line.indexOf("}"))
    if (Object.entries(labels).every(([k, v]) => body.includes(`${k}="${v}"`))) {
      return Number(line.slice(line.lastIndexOf(" ") + 1))
    }
  }
  return undefined
}

describe("Observability", () => {
  it("labels requests by endpoint pattern, never by raw path", () => {
    assert.strictEqual(Observability.routeOf("/list-contacts"), "/list-contacts")
    assert.strictEqual(Observability.routeOf("/get-contact/contact_123"), "/get-contact/:id")
    assert.strictEqual(Observability.routeOf("/get-contact/a/b"), "unmatched")
    assert.strictEqual(Observability.routeOf("/no-such-route"), "unmatched")
  })

  it("counts every request in its route's series, made once and reused", async () => {
    const { dispose, send } = serve("Info")
    try {
      const before = await (await send("GET", "/metrics")).text()
      const was =
        sample(before, "svc_http_requests_total", { route: "/list-contacts", method: "POST", status: "200" }) ?? 0
      for (let i = 0; i < 3; i++) assert.strictEqual((await send("POST", "/list-contacts")).status, 200)
      assert.strictEqual((await send("GET", "/readyz")).status, 503)
      const after = await (await send("GET", "/metrics")).text()
      assert.strictEqual(
        sample(after, "svc_http_requests_total", { route: "/list-contacts", method: "POST", status: "200" }),
        was + 3
      )
      assert.isAtLeast(sample(after, "svc_http_requests_total", { route: "/readyz", status: "503" }) ?? 0, 1)
      assert.isAtLeast(
        sample(after, "svc_http_request_duration_seconds_count", { route: "/list-contacts", status: "200" }) ?? 0,
        3
      )
    } finally {
      await dispose()
    }
  })

  it("counts every request below the Info level too (the line is skipped, the counter is not)", async () => {
    const { dispose, send } = serve("Warn")
    try {
      const before = await (await send("GET", "/metrics")).text()
      const was =
        sample(before, "svc_http_requests_total", { route: "/list-contacts", method: "POST", status: "200" }) ?? 0
      assert.strictEqual((await send("POST", "/list-contacts")).status, 200)
      const after = await (await send("GET", "/metrics")).text()
      assert.strictEqual(
        sample(after, "svc_http_requests_total", { route: "/list-contacts", method: "POST", status: "200" }),
        was + 1
      )
    } finally {
      await dispose()
    }
  })
})
