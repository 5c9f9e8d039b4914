/**
 * What the API does while its database is away (decision 0009: a killed postmaster made every request a
 * 500 with a 1.85 KB stack trace, 90 MB of log in 22 s, and nothing healed it).
 *
 * - The first request that meets an outage (DatabaseUnavailable.isUnavailable) turns this replica's
 *   state to "down" and logs one line. While down, every endpoint that needs the database answers
 *   503 in the error shape with `Retry-After` at once, without touching the pool (the vendor's
 *   clients retry 5xx and honour Retry-After); `/healthz`, `/readyz`, `/metrics`, `/docs` and
 *   `/openapi.json` still answer.
 * - A probe (`SELECT 1`, every `SVC_DB_PROBE_MS`, default 500 ms) runs only while down; its first
 *   success turns the state back to "up" and logs one line with the outage's length and how many
 *   requests were answered 503. Nothing needs a restart: the pool opens new connections on its own.
 * - While down, one summary line every `SVC_DB_OUTAGE_SUMMARY_SECONDS` (default 10) says how long
 *   and how many 503s; no line per request.
 *
 * Decision record: docs/decisions/0009-database-outages.md
 */
import * as ErrorBody from "@svc/api/ErrorBody.ts"
import * as SqlErrorMessage from "@svc/store/db/SqlErrorMessage.ts"
import { Clock, Config, Context, Duration, Effect, type Fiber, Layer } from "effect"
import { HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql"

/** Seconds a client is told to wait before retrying during an outage. */
export const RETRY_AFTER_SECONDS = 2

/** Paths that answer during an outage: they say so themselves or need no database. */
const ANSWERS_DURING_OUTAGE = new Set(["/healthz", "/readyz", "/metrics", "/docs", "/openapi.json"])

/** @category models */
export interface Snapshot {
  readonly down: boolean
  /** When the current outage began (ms), when down. */
  readonly since: number
  /** Requests answered 503 during the current outage. */
  readonly refused: number
}

export class DatabaseAvailability extends Context.Service<DatabaseAvailability, {
  /** Whether a request to `path` must be answered 503 now, without trying the database. */
  readonly refuses: (path: string) => boolean
  /** A request met an outage (`reason` is why): turn down if up. */
  readonly report: (reason: unknown) => Effect.Effect<void>
  /** The 503 every refused request gets; counted for the summaries. */
  readonly response: () => HttpServerResponse.HttpServerResponse
  readonly snapshot: () => Snapshot
}>()("@svc/server/DatabaseAvailability") {
  static readonly layer = Layer.effect(
    DatabaseAvailability,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const probeEvery = Duration.millis(yield* Config.withDefault(Config.Int("SVC_DB_PROBE_MS"), 500))
      const summaryEvery = Duration.seconds(yield* Config.withDefault(Config.Int("SVC_DB_OUTAGE_SUMMARY_SECONDS"), 10))
      // The probe and summary fibers live in the layer's scope: they stop with the server.
      const scope = yield* Effect.scope
      const state = { down: false, since: 0, refused: 0, refusedAtSummary: 0 }
      let watcher: Fiber.Fiber<void> | undefined

      const probe = sql`SELECT 1`.pipe(Effect.timeout(Duration.seconds(2)), Effect.asVoid)

      /** While down: probe until the database answers, summarising meanwhile; then turn up. */
      const watch = Effect.gen(function*() {
        let nextSummary = (yield* Clock.currentTimeMillis) + Duration.toMillis(summaryEvery)
        for (;;) {
          const answered = yield* Effect.result(probe)
          const now = yield* Clock.currentTimeMillis
          if (answered._tag === "Success") {
            yield* Effect.logWarning("database available again").pipe(
              Effect.annotateLogs({ downMs: now - state.since, answered503: state.refused })
            )
            state.down = false
            watcher = undefined
            return
          }
          if (now >= nextSummary) {
            yield* Effect.logWarning("database still unavailable").pipe(
              Effect.annotateLogs({
                downMs: now - state.since,
                answered503: state.refused,
                answered503SinceLastSummary: state.refused - state.refusedAtSummary
              })
            )
            state.refusedAtSummary = state.refused
            nextSummary = now + Duration.toMillis(summaryEvery)
          }
          yield* Effect.sleep(probeEvery)
        }
      })

      const report = (reason: unknown) =>
        Effect.gen(function*() {
          if (state.down) return
          state.down = true
          state.since = yield* Clock.currentTimeMillis
          state.refused = 0
          state.refusedAtSummary = 0
          yield* Effect.logError("database unavailable; answering 503 until it returns").pipe(
            Effect.annotateLogs({ reason: SqlErrorMessage.describe(reason) })
          )
          if (watcher === undefined) watcher = yield* Effect.forkIn(watch, scope)
        })

      const response = () =>
        HttpServerResponse.jsonUnsafe(
          ErrorBody.make(`database unavailable; the service is recovering, retry in ${RETRY_AFTER_SECONDS} s`),
          { status: 503, headers: { "retry-after": String(RETRY_AFTER_SECONDS) } }
        )

      return DatabaseAvailability.of({
        refuses: (path) => state.down && !ANSWERS_DURING_OUTAGE.has(path),
        report,
        response: () => {
          if (state.down) state.refused++
          return response()
        },
        snapshot: () => ({ down: state.down, since: state.since, refused: state.refused })
      })
    })
  )
}
