/**
 * The application's PostgreSQL: `DATABASE_URL` when set, otherwise the embedded server under
 * `SVC_DATA_DIR` (default `.svc`). Migrations run before the layer is ready, and a database that
 * cannot be reached fails the layer with one clear sentence instead of a stack trace.
 */
import { PgClient } from "@effect/sql-pg"
import { Config, Context, Deferred, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql"
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

/** @category models */
export interface DatabaseOptions {
  readonly url: Option.Option<Redacted.Redacted<string>>
  readonly dataDir: string
  readonly maxConnections: number
}

/** @category models */
export const config: Config.Config<DatabaseOptions> = Config.all({
  url: Config.option(Config.Redacted("DATABASE_URL")),
  dataDir: Config.withDefault(Config.String("SVC_DATA_DIR"), ".svc"),
  maxConnections: Config.withDefault(Config.Int("SVC_DB_MAX_CONNECTIONS"), 10)
})

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
 * A pool on `url` that has answered one query, with migrations applied.
 *
 * @category layers
 */
export const layerFromUrl = (
  url: Redacted.Redacted<string>,
  options: { readonly maxConnections?: number; readonly migrate?: boolean } = {}
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, DatabaseError> => {
  const where = describeUrl(url)
  const ready = Layer.effectDiscard(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`SELECT 1`.pipe(
        Effect.mapError((error) =>
          new DatabaseError({ message: `cannot reach the database at ${where}: ${SqlErrorMessage.describe(error)}` })
        ),
        Effect.timeoutOrElse({
          duration: Duration.seconds(15),
          orElse: () => Effect.fail(new DatabaseError({ message: `database at ${where} did not answer within 15 s` }))
        })
      )
      if (options.migrate !== false) {
        yield* Migrations.run.pipe(
          Effect.mapError((error) =>
            new DatabaseError({ message: `migrations failed on ${where}: ${SqlErrorMessage.describe(error)}` })
          )
        )
      }
    })
  )
  const client = PgClient.layerFrom(
    PgClient.make({ url, maxConnections: options.maxConnections ?? 10, connectTimeout: Duration.seconds(10) }).pipe(
      Effect.mapError((error) =>
        new DatabaseError({ message: `cannot reach the database at ${where}: ${SqlErrorMessage.describe(error)}` })
      )
    )
  )
  return Layer.provideMerge(ready, client)
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

const make = (supervise: boolean) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const options = yield* config.pipe(
        Effect.mapError((error) => new DatabaseError({ message: `invalid database configuration: ${error.message}` }))
      )
      if (Option.isSome(options.url)) {
        return Layer.merge(
          layerFromUrl(options.url.value, { maxConnections: options.maxConnections }),
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
        layerFromUrl(server.url, { maxConnections: options.maxConnections }),
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
export const layer: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, DatabaseError> = make(false)

/**
 * `layer` for long-running processes (server, scheduler, `npm start`): an embedded server whose
 * postmaster dies is restarted on its port (decision 0008), and `DatabaseSupervision` says when it could not be.
 *
 * @category layers
 */
export const layerSupervised: Layer.Layer<
  PgClient.PgClient | SqlClient.SqlClient | DatabaseSupervision,
  DatabaseError
> = make(true)
