/**
 * The application's PostgreSQL: `DATABASE_URL` when set, otherwise the embedded server under
 * `SVC_DATA_DIR` (default `.svc`). Migrations run before the layer is ready, and a database that
 * cannot be reached fails the layer with one clear sentence instead of a stack trace.
 *
 * Behind a transaction-mode pooler (`DATABASE_POOL_MODE=transaction`, decision 0440) the pool sends every statement
 * unnamed (PgBouncer before 1.21 keeps no named prepared statement between transactions), and LISTEN and migrations
 * use `DATABASE_DIRECT_URL` when it is set; without it nothing listens and wake-ups poll (DatabaseNotifications).
 */
import { PgClient } from "@effect/sql-pg"
import { Config, Context, Deferred, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import type * as Migrator from "effect/sql/Migrator"
import * as SqlError from "effect/sql/SqlError"
import * as ConnectionBudget from "./ConnectionBudget.ts"
import * as DatabaseNotifications from "./DatabaseNotifications.ts"
import * as EmbeddedPostgres from "./EmbeddedPostgres.ts"
import * as Migrations from "./Migrations.ts"
import * as SqlErrorMessage from "./SqlErrorMessage.ts"

/**
 * The database is not usable: unreachable, refused the credentials, or failed to migrate.
 *
 * @category errors
 */
export class DatabaseError extends Schema.TaggedError<DatabaseError>()("DatabaseError", {
  message: Schema.String
}) {}

/**
 * What `DATABASE_URL` reaches: PostgreSQL itself or a session-mode pooler (`session`), or a transaction-mode pooler
 * (`transaction`: PgBouncer `pool_mode = transaction`, Supavisor, RDS Proxy). Said by the operator, not detected
 * (decision 0440).
 *
 * @category models
 */
export type PoolMode = "session" | "transaction"

/** @category models */
export interface DatabaseOptions {
  readonly url: Option.Option<Redacted.Redacted<string>>
  readonly dataDir: string
  readonly maxConnections: number
  readonly poolMode: PoolMode
  /** A session connection to the same database beside a pooled `url`: LISTEN and migrations go through it. */
  readonly directUrl: Option.Option<Redacted.Redacted<string>>
}

/** @category models */
export const config: Config.Config<DatabaseOptions> = Config.all({
  url: Config.option(Config.Redacted("DATABASE_URL")),
  dataDir: Config.withDefault(Config.String("SVC_DATA_DIR"), ".svc"),
  maxConnections: Config.withDefault(Config.Int("SVC_DB_MAX_CONNECTIONS"), 10),
  poolMode: Config.withDefault(
    Config.Literals(["session", "transaction"], "DATABASE_POOL_MODE"),
    "session" as const
  ),
  directUrl: Config.option(Config.Redacted("DATABASE_DIRECT_URL"))
})

/**
 * How many connections the direct URL's LISTEN pool may hold: one per channel a process listens on (the scheduler's
 * batch wake-ups and its Twilio call records).
 *
 * @category models
 */
export const DIRECT_LISTEN_CONNECTIONS = 2

/**
 * Options of `layerFromUrl`.
 *
 * @category models
 */
export interface UrlOptions {
  readonly maxConnections?: number
  readonly migrate?: boolean
  /** Default `session`. */
  readonly poolMode?: PoolMode
  /** Only read with `poolMode: "transaction"`: where LISTEN and migrations go. */
  readonly directUrl?: Option.Option<Redacted.Redacted<string>>
}

/** `host:port/db` of a URL, for messages: never the password. */
export const describeUrl = (url: Redacted.Redacted<string>) => {
  try {
    const parsed = new URL(Redacted.value(url))
    return `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`
  } catch {
    return "(unparseable URL)"
  }
}

/**
 * A pool on `url` that has answered one query, with migrations applied, and how this process receives
 * notifications (DatabaseNotifications: the pool's LISTEN in session mode; behind a transaction pooler the direct
 * URL's, or none).
 *
 * @category layers
 */
export const layerFromUrl = (
  url: Redacted.Redacted<string>,
  options: UrlOptions = {}
): Layer.Layer<
  PgClient.PgClient | SqlClient.SqlClient | DatabaseNotifications.DatabaseNotifications,
  DatabaseError
> => {
  const where = describeUrl(url)
  const pooled = options.poolMode === "transaction"
  const direct = pooled ? options.directUrl ?? Option.none() : Option.none<Redacted.Redacted<string>>()
  const unreachable = (at: string) => (error: SqlError.SqlError) =>
    new DatabaseError({ message: `cannot reach the database at ${at}: ${SqlErrorMessage.describe(error)}` })
  const migrationsFailed = (at: string) => (error: SqlError.SqlError | Migrator.MigrationError) =>
    new DatabaseError({ message: `migrations failed on ${at}: ${SqlErrorMessage.describe(error)}` })
  const ready = Layer.effectDiscard(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`SELECT 1`.pipe(
        Effect.mapError(unreachable(where)),
        Effect.timeoutOrElse({
          duration: Duration.seconds(15),
          orElse: () => Effect.fail(new DatabaseError({ message: `database at ${where} did not answer within 15 s` }))
        })
      )
      if (options.migrate === false) return
      if (Option.isNone(direct)) {
        // Through a transaction pooler too: the run is one transaction under a transaction-level advisory lock.
        return yield* Migrations.run.pipe(Effect.mapError(migrationsFailed(where)))
      }
      const at = describeUrl(direct.value)
      yield* Effect.scoped(
        Effect.gen(function*() {
          const session = yield* PgClient.makeClient({ url: direct.value, connectTimeout: Duration.seconds(10) }).pipe(
            Effect.mapError(unreachable(at))
          )
          yield* Migrations.run.pipe(
            Effect.provideService(SqlClient.SqlClient, session),
            Effect.mapError(migrationsFailed(at))
          )
        }).pipe(Effect.provide(Reactivity.layer))
      )
    })
  )
  const client = PgClient.layerFrom(Effect.gen(function*() {
    const pg = yield* PgClient.make({
      url,
      maxConnections: options.maxConnections ?? 10,
      connectTimeout: Duration.seconds(10),
      // PgBouncer 1.18 in transaction mode: a named statement parsed on one server connection is unknown on the
      // next (26000) or collides with another client's name (42P05); unnamed statements live one Sync (decision 0440).
      prepare: !pooled
    }).pipe(Effect.mapError(unreachable(where)))
    if (!pooled) return pg
    // A LISTEN through the pooler would succeed and then hear nothing (it registers on a server connection the
    // pooler gives to the next transaction), so the client's own `listen` goes to the direct URL, or fails saying so.
    const listen: DatabaseNotifications.Listen = yield* Option.match(direct, {
      onNone: () =>
        Effect.succeed<DatabaseNotifications.Listen>((channel) =>
          Effect.fail(
            new SqlError.SqlError({
              reason: new SqlError.UnknownError({
                cause: new Error("LISTEN through a transaction pooler"),
                message: `LISTEN ${channel} needs a session connection: DATABASE_URL is a transaction pooler ` +
                  `(DATABASE_POOL_MODE=transaction) and DATABASE_DIRECT_URL is not set`,
                operation: "listen"
              })
            })
          )
        ),
      onSome: (directUrl) =>
        // Opened lazily (no connection until the first LISTEN), one per channel, each held while it listens.
        PgClient.make({
          url: directUrl,
          maxConnections: DIRECT_LISTEN_CONNECTIONS,
          connectTimeout: Duration.seconds(10)
        })
          .pipe(
            Effect.mapError(unreachable(describeUrl(directUrl))),
            Effect.map((session): DatabaseNotifications.Listen => (channel) => session.listen(channel))
          )
    })
    return Object.assign(pg, { listen })
  }))
  const notifications = Layer.effect(
    DatabaseNotifications.DatabaseNotifications,
    Effect.gen(function*() {
      const pg = yield* PgClient.PgClient
      return DatabaseNotifications.DatabaseNotifications.of({
        listen: pooled && Option.isNone(direct) ? Option.none() : Option.some((channel) => pg.listen(channel))
      })
    })
  )
  return Layer.provideMerge(Layer.merge(ready, notifications), client)
}

/**
 * How a long-running process learns that its database is gone for good: `failed` fails when the
 * embedded server died and could not be restarted (EmbeddedPostgres.supervise gave up), and never
 * otherwise. `Main.launch` races the program against it, so the process stops with one line instead
 * of answering 503 forever. With `DATABASE_URL` the database is someone else's to restart: never.
 *
 * @category services
 */
export class DatabaseSupervision extends Context.Service<DatabaseSupervision, {
  readonly failed: Effect.Effect<never, DatabaseError>
}>()("@svc/store/DatabaseSupervision") {}

/** Fails when the supervised embedded server is gone for good; for `Main.launch`'s `until`. */
export const supervisionFailed: Effect.Effect<never, DatabaseError, DatabaseSupervision> = Effect.gen(function*() {
  const supervision = yield* DatabaseSupervision
  return yield* supervision.failed
})

/**
 * The connection budget's line (ConnectionBudget), for long-running processes: a one-shot admin command holds one
 * connection for seconds and its stdout is its answer.
 */
const budget = (longRunning: boolean, own: ConnectionBudget.Own) => (context: Context.Context<SqlClient.SqlClient>) =>
  longRunning ? Effect.provideContext(ConnectionBudget.log(own), context) : Effect.void

const make = (supervise: boolean) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const options = yield* config.pipe(
        Effect.mapError((error) => new DatabaseError({ message: `invalid database configuration: ${error.message}` }))
      )
      if (Option.isSome(options.url)) {
        const pooled = options.poolMode === "transaction"
        return Layer.merge(
          layerFromUrl(options.url.value, {
            maxConnections: options.maxConnections,
            poolMode: options.poolMode,
            directUrl: options.directUrl
          }).pipe(
            Layer.tap(budget(supervise, {
              poolSize: options.maxConnections,
              pooled,
              direct: pooled && Option.isSome(options.directUrl) ? DIRECT_LISTEN_CONNECTIONS : 0
            }))
          ),
          Layer.succeed(DatabaseSupervision, DatabaseSupervision.of({ failed: Effect.never }))
        )
      }
      const server = yield* EmbeddedPostgres.start({ dataDir: options.dataDir }).pipe(
        Effect.mapError((error) => new DatabaseError({ message: `embedded PostgreSQL: ${error.message}` }))
      )
      yield* Effect.logInfo("embedded PostgreSQL ready").pipe(
        Effect.annotateLogs({ port: server.port, dataDir: options.dataDir, started: server.started })
      )
      const gone = yield* Deferred.make<never, DatabaseError>()
      if (supervise) {
        // Forked in the layer's scope: interrupted before this process leaves the server's clients.
        yield* Effect.forkScoped(
          EmbeddedPostgres.supervise(server).pipe(
            Effect.catch((error) => Deferred.fail(gone, new DatabaseError({ message: error.message })))
          )
        )
      }
      return Layer.merge(
        layerFromUrl(server.url, { maxConnections: options.maxConnections }).pipe(
          Layer.tap(budget(supervise, { poolSize: options.maxConnections, pooled: false, direct: 0 }))
        ),
        Layer.succeed(DatabaseSupervision, DatabaseSupervision.of({ failed: Deferred.await(gone) }))
      )
    })
  )

/**
 * The production wiring: configuration from the environment, the embedded server when no
 * `DATABASE_URL` is set. For one-shot commands (admin): the server is joined or started, never
 * restarted by this process.
 *
 * @category layers
 */
export const layer: Layer.Layer<
  PgClient.PgClient | SqlClient.SqlClient | DatabaseNotifications.DatabaseNotifications,
  DatabaseError
> = make(false)

/**
 * `layer` for long-running processes (server, scheduler, `npm start`): an embedded server whose
 * postmaster dies is restarted on its port (decision 0008), and `DatabaseSupervision` says when it could not be.
 *
 * @category layers
 */
export const layerSupervised: Layer.Layer<
  PgClient.PgClient | SqlClient.SqlClient | DatabaseNotifications.DatabaseNotifications | DatabaseSupervision,
  DatabaseError
> = make(true)
