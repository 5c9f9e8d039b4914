// The per-request metrics and line (Observability.ts): one series per route, method and status, counted on every
// request (made once and reused since issue 17: the counts must still land in the right series), whatever the log
// level; the "request" line with its fields at Info (Debug for a 503), and none below the minimum level (since issue
// 17 it is only built when it is written).
import { assert, describe, it } from "@effect/vitest"
import { Context, Layer, Logger, References } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import * as Observability from "../../src/middleware/Observability.ts"

interface Line {
  readonly level: string
  readonly message: unknown
  readonly annotations: Readonly<Record<string, unknown>>
}

const serve = (minimum: "Info" | "Warn") => {
  const lines: Array<Line> = []
  const capture = Logger.make((options) => {
    lines.push({
      level: options.logLevel,
      message: options.message,
      annotations: options.fiber.getRef(References.CurrentLogAnnotations)
    })
  })
  const routes = Layer.mergeAll(
    HttpRouter.add("POST", "/list-contacts", HttpServerResponse.jsonUnsafe({ ok: true })),
    HttpRouter.add("GET", "/readyz", HttpServerResponse.jsonUnsafe({ ok: false }, { status: 503 })),
    Observability.layer
  )
  const { dispose, handler } = HttpRouter.toWebHandler(routes.pipe(Layer.provide(HttpServer.layerServices)), {
    disableLogger: true
  })
  // the request's own context carries the logger and the level, as the server's runtime does
  const context = Context.make(References.MinimumLogLevel, minimum).pipe(
    Context.add(References.CurrentLoggers, new Set([capture]))
  ) as Context.Context<never>
  const send = (method: string, path: string) => handler(new Request(`http://svc.test${path}`, { method }), context)
  const count = async () =>
    sample(
      await (await send("GET", "/metrics")).text(),
      "svc_http_requests_total",
      { route: "/list-contacts", method: "POST", status: "200" }
    ) ?? 0
  const requestLines = (path: string) =>
    lines.filter((l) =>
      (Array.isArray(l.message) ? l.message[0] : l.message) === "request" && l.annotations["path"] === path
    )
  return { count, dispose, requestLines, send }
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

  it("counts every request in its route's series, made once and reused, and writes its line", async () => {
    const { count, dispose, requestLines, send } = serve("Info")
    try {
      const was = await count()
      for (let i = 0; i < 3; i++) assert.strictEqual((await send("POST", "/list-contacts")).status, 200)
      assert.strictEqual((await send("GET", "/readyz")).status, 503)
      assert.strictEqual(await count(), was + 3)
      const after = await (await send("GET", "/metrics")).text()
      assert.isAtLeast(sample(after, "svc_http_requests_total", { route: "/readyz", status: "503" }) ?? 0, 1)
      assert.isAtLeast(
        sample(after, "svc_http_request_duration_seconds_count", { route: "/list-contacts", status: "200" }) ?? 0,
        3
      )
      const lines = requestLines("/list-contacts")
      assert.deepStrictEqual(lines.map((l) => l.level), ["Info", "Info", "Info"])
      assert.strictEqual(lines[0]!.annotations["method"], "POST")
      assert.strictEqual(lines[0]!.annotations["status"], 200)
      assert.isNumber(lines[0]!.annotations["duration_ms"])
      // a 503 is below Info (DatabaseAvailability summarises an outage instead)
      assert.deepStrictEqual(requestLines("/readyz"), [])
    } finally {
      await dispose()
    }
  })

  it("counts every request below the Info level too (the line is skipped, the counter is not)", async () => {
    const { count, dispose, requestLines, send } = serve("Warn")
    try {
      const was = await count()
      assert.strictEqual((await send("POST", "/list-contacts")).status, 200)
      assert.strictEqual(await count(), was + 1)
      assert.deepStrictEqual(requestLines("/list-contacts"), [])
    } finally {
      await dispose()
    }
  })
})
