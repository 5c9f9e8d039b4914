/**
 * Per-request log line (request id, method, path, status, duration) and Prometheus metrics at
 * `GET /metrics`: `svc_http_requests_total` and `svc_http_request_duration_seconds` by route and
 * status. Routes are the endpoint patterns (`/get-contact/:id`), never raw paths, so ids do not
 * explode the number of series.
 */
import { Clock, Effect, Layer, LogLevel, Metric, References } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { PrometheusMetrics } from "effect/observability"

/** Path prefixes whose last segment is an id. */
const WITH_ID = [
  "/get-contact/",
  "/update-contact/",
  "/delete-contact/",
  "/get-batch-test/",
  "/get-batch-call/",
  "/cancel-batch-call/"
]
const KNOWN = new Set([
  "/list-contacts",
  "/create-contact",
  "/backfill-contact-analysis-data",
  "/get-backfill-contact-job-status",
  "/create-batch-call",
  "/v2/list-batch-tests",
  "/healthz",
  "/readyz",
  "/metrics",
  "/openapi.json",
  "/docs",
  "/carrier/twilio/status"
])

/** The metric label for a request path. */
export const routeOf = (path: string): string => {
  if (KNOWN.has(path)) return path
  const prefix = WITH_ID.find((p) =>
    path.startsWith(p) && path.length > p.length && !path.slice(p.length).includes("/")
  )
  return prefix === undefined ? "unmatched" : `${prefix}:id`
}

const requests = Metric.counter("svc_http_requests_total", { description: "HTTP requests by route and status" })
const duration = Metric.histogram("svc_http_request_duration_seconds", {
  description: "HTTP request latency by route and status",
  boundaries: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
})

// One pair of series per (route, method, status), made once: `Metric.withAttributes` per request allocated two
// metrics and their keys on every request, where metrics should cost nothing per request beyond a
// counter. Bounded: routes are the fixed set above, and Node's parser admits only the methods it knows; past the cap
// a series is made per request as before, never lost.
const MAX_SERIES = 4_096
const series = new Map<string, { readonly requests: typeof requests; readonly duration: typeof duration }>()
const seriesOf = (route: string, method: string, status: number) => {
  const key = `${route} ${method} ${status}`
  const known = series.get(key)
  if (known !== undefined) return known
  const attributes = { route, method, status: String(status) }
  const made = {
    requests: Metric.withAttributes(requests, attributes),
    duration: Metric.withAttributes(duration, attributes)
  }
  if (series.size < MAX_SERIES) series.set(key, made)
  return made
}

const middleware = HttpRouter.middleware(
  (httpEffect) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const started = yield* Clock.currentTimeNanos
      const response = yield* httpEffect
      const seconds = Number((yield* Clock.currentTimeNanos) - started) / 1e9
      const path = request.url.split("?")[0] ?? request.url
      const { duration: durationOf, requests: requestsOf } = seriesOf(routeOf(path), request.method, response.status)
      yield* Metric.update(requestsOf, 1)
      yield* Metric.update(durationOf, seconds)
      // 503s of an outage are counted by DatabaseAvailability's summaries: one line per request
      // then would be the flood decision 0009 records (2,200 a second).
      const level = response.status === 503 ? "Debug" : "Info"
      // the line's annotations are built only when the line is written (LOG_LEVEL=Warn in production benches)
      if (LogLevel.isGreaterThanOrEqualTo(level, yield* References.MinimumLogLevel)) {
        yield* Effect.logWithLevel(level)("request").pipe(
          Effect.annotateLogs({
            method: request.method,
            path,
            status: response.status,
            duration_ms: Math.round(seconds * 100_000) / 100,
            requestId: response.headers["x-request-id"]
          })
        )
      }
      return response
    }),
  { global: true }
)

/** @category layers */
export const layer = Layer.mergeAll(middleware, PrometheusMetrics.layerHttp({ path: "/metrics" }))
