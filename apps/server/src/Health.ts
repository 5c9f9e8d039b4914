/**
 * Liveness and readiness for orchestrators: `GET /healthz` answers 200 while the process serves
 * HTTP at all; `GET /readyz` answers 200 only when PostgreSQL answers a query within two seconds,
 * 503 otherwise (in the spec's error shape), so a load balancer stops sending traffic to a replica
 * that lost its database.
 */
import { Duration, Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql"

const READY_TIMEOUT = Duration.seconds(2)

/** @category layers */
export const layer = Layer.unwrap(
  Effect.gen(function*() {
    // Captured once at start: the handlers then need nothing from the request's context.
    const sql = yield* SqlClient.SqlClient
    const ready = sql`SELECT 1`.pipe(
      Effect.timeout(READY_TIMEOUT),
      Effect.as(HttpServerResponse.jsonUnsafe({ status: "ok" })),
      Effect.catchCause((cause) =>
        Effect.as(
          Effect.logWarning("readiness check failed", cause),
          HttpServerResponse.jsonUnsafe(
            { status: "error", message: "database unavailable: it did not answer within 2 s" },
            { status: 503 }
          )
        )
      )
    )
    return Layer.mergeAll(
      HttpRouter.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ status: "ok" })),
      HttpRouter.add("GET", "/readyz", ready)
    )
  })
)
