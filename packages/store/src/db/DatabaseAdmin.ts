/**
 * Maintenance statements that run against the `postgres` maintenance database rather than the
 * application's own: creating the application database on first start, and cloning or dropping the
 * per-test-file databases of the integration tests.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, type Redacted, Schedule } from "effect"
import { Reactivity } from "effect/reactivity"
import type { SqlError } from "effect/sql/SqlError"

/** Double-quotes an identifier for DDL, where bind parameters are not allowed. */
export const quoteIdent = (name: string) => `"${name.replaceAll("\"", "\"\"")}"`

const withAdmin = <A>(
  adminUrl: Redacted.Redacted<string>,
  body: (client: PgClient.PgClient) => Effect.Effect<A, SqlError>
): Effect.Effect<A, SqlError> =>
  Effect.scoped(
    Effect.flatMap(PgClient.makeClient({ url: adminUrl, connectTimeout: "10 seconds" }), body)
  ).pipe(
    // A server that pg_ctl just reported ready can still refuse the first connection on a loaded
    // machine; connection failures are retried briefly, anything else is final.
    Effect.retry({
      while: (error) => error.reason._tag === "ConnectionError",
      schedule: Schedule.spaced("500 millis"),
      times: 6
    }),
    Effect.provide(Reactivity.layer)
  )

/**
 * Creates `name` (optionally as a copy of `template`) unless it exists. Two processes may race
 * here; "already exists" is success.
 *
 * @category constructors
 */
export const ensureDatabase = (
  adminUrl: Redacted.Redacted<string>,
  name: string,
  template?: string
): Effect.Effect<void, SqlError> =>
  withAdmin(adminUrl, (sql) =>
    Effect.gen(function*() {
      const found = yield* sql`SELECT 1 FROM pg_database WHERE datname = ${name}`
      if (found.length > 0) return
      const from = template === undefined ? "" : ` TEMPLATE ${quoteIdent(template)}`
      yield* sql.unsafe(`CREATE DATABASE ${quoteIdent(name)}${from}`).pipe(
        // Two racing creators: the loser sees "already exists", or, when both passed the catalog's
        // check at once, a unique violation on pg_database's name index (seen with an admin command
        // and npm start launched together, decision 0008).
        Effect.catchIf(
          (error) => /already exists/.test(error.message) || error.reason._tag === "UniqueViolation",
          () => Effect.void
        )
      )
    }))

/** @category constructors */
export const dropDatabase = (adminUrl: Redacted.Redacted<string>, name: string): Effect.Effect<void, SqlError> =>
  withAdmin(adminUrl, (sql) => Effect.asVoid(sql.unsafe(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`)))
