/**
 * Liveness and readiness for orchestrators: `GET /healthz` answers 200 while the process serves
 * HTTP at all; `GET /readyz` answers 200 only when PostgreSQL answers a query within two seconds,
 * 503 otherwise (in the spec's error shape), so a load balancer stops sending traffic to a replica
 * that lost its database. A failed check of an outage tells DatabaseAvailability (one log line per
 * outage, API requests answered 503 at once); other failures (a database that hangs: the query times out) log
 * one line without a stack, at most once a minute with the number of failures since the last line: probes repeat
 * every few seconds, and a line per probe grew the log with the probe rate (docs/operations.md, Health, logs, metrics).
 */
import * as ErrorBody from "@svc/api/ErrorBody.ts"
import { isUnavailable } from "@svc/store/db/DatabaseUnavailable.ts"
import * as SqlErrorMessage from "@svc/store/db/SqlErrorMessage.ts"
import { Cause, Clock, Duration, Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql"
import { DatabaseAvailability, RETRY_AFTER_SECONDS } from "../middleware/DatabaseAvailability.ts"

const READY_TIMEOUT = Duration.seconds(2)

/** At most one "readiness check failed" line per this interval. */
export const FAILURE_LOG_INTERVAL = Duration.minutes(1)

/**
 * Decides which failures to log: the first, then the first after each `interval`, each with how many failed
 * since the last line (`failures`, this one included). Time from the Clock.
 *
 * @category constructors
 */
export const failureLog = (interval: Duration.Duration = FAILURE_LOG_INTERVAL) => {
  let lastLogged: number | undefined
  let failures = 0
  return Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.sync((): number | undefined => {
      failures++
      if (lastLogged !== undefined && now - lastLogged < Duration.toMillis(interval)) return undefined
      lastLogged = now
      const count = failures
      failures = 0
      return count
    }))
}

/** @category layers */
export const layer = Layer.unwrap(
  Effect.gen(function*() {
    // Captured once at start: the handlers then need nothing from the request's context.
    const sql = yield* SqlClient.SqlClient
    const availability = yield* DatabaseAvailability
    const toLog = failureLog()
    const ready = sql`SELECT 1`.pipe(
      Effect.timeout(READY_TIMEOUT),
      Effect.as(HttpServerResponse.jsonUnsafe({ status: "ok" })),
      Effect.catchCause((cause) => {
        const error = Cause.squash(cause)
        return Effect.as(
          isUnavailable(error)
            ? availability.report(error)
            : Effect.flatMap(
              toLog,
              (failures) =>
                failures === undefined ? Effect.void : Effect.logWarning("readiness check failed").pipe(
                  Effect.annotateLogs({ reason: SqlErrorMessage.describe(error), failures })
                )
            ),
          HttpServerResponse.jsonUnsafe(
            ErrorBody.make("database unavailable: it did not answer within 2 s"),
            { status: 503, headers: { "retry-after": String(RETRY_AFTER_SECONDS) } }
          )
        )
      })
    )
    return Layer.mergeAll(
      HttpRouter.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ status: "ok" })),
      HttpRouter.add("GET", "/readyz", ready)
    )
  })
)
