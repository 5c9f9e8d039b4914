/**
 * An isolated database per test file (or per `layer(...)` block): a clone of the migrated template
 * that the global setup prepared, dropped when the layer's scope closes. Integration tests talk to
 * a real PostgreSQL over a real connection; nothing stands in for it.
 *
 * In the pooler run (`SVC_TEST_VIA_POOLER=1`, decision 0440) the global setup put a PgBouncer in transaction mode in
 * front of the server (`SVC_TEST_POOLER_URL`), and `layer` reaches its database through it as a process configured
 * with `DATABASE_POOL_MODE=transaction` and the server's own URL as `DATABASE_DIRECT_URL` would: unnamed statements
 * through the pooler, LISTEN on the server. `SVC_TEST_POOLER_POLL=1` leaves the direct URL out: nothing listens and
 * wake-ups poll.
 */
import type { PgClient } from "@effect/sql-pg"
import { Config, Effect, Layer, Option, Redacted } from "effect"
import type { SqlClient } from "effect/sql"
import * as Database from "../src/db/Database.ts"
import * as DatabaseAdmin from "../src/db/DatabaseAdmin.ts"
import type { DatabaseNotifications } from "../src/db/DatabaseNotifications.ts"

const settings = Config.all({
  adminUrl: Config.String("SVC_TEST_ADMIN_URL"),
  template: Config.String("SVC_TEST_TEMPLATE"),
  poolerUrl: Config.option(Config.String("SVC_TEST_POOLER_URL")),
  poolerPoll: Config.withDefault(Config.Boolean("SVC_TEST_POOLER_POLL"), false)
})

let counter = 0

/** The admin URL and a fresh database name, for tests that manage databases themselves. */
export const adminUrl = Effect.map(settings, (s) => Redacted.make(s.adminUrl))

/** `url` with its database replaced. */
export const urlFor = (url: Redacted.Redacted<string>, database: string) => {
  const parsed = new URL(Redacted.value(url))
  parsed.pathname = `/${database}`
  return Redacted.make(parsed.toString())
}

/** @category layers */
export const layer: Layer.Layer<
  PgClient.PgClient | SqlClient.SqlClient | DatabaseNotifications,
  Database.DatabaseError | Config.ConfigError
> = Layer.unwrap(
  Effect.gen(function*() {
    const { adminUrl, poolerPoll, poolerUrl, template } = yield* settings
    const admin = Redacted.make(adminUrl)
    const name = `svc_test_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`
    yield* Effect.acquireRelease(
      DatabaseAdmin.ensureDatabase(admin, name, template).pipe(Effect.orDie),
      () => DatabaseAdmin.dropDatabase(admin, name).pipe(Effect.ignore)
    )
    if (Option.isSome(poolerUrl)) {
      return Database.layerFromUrl(urlFor(Redacted.make(poolerUrl.value), name), {
        migrate: false,
        maxConnections: 4,
        poolMode: "transaction",
        directUrl: poolerPoll ? Option.none() : Option.some(urlFor(admin, name))
      })
    }
    return Database.layerFromUrl(urlFor(admin, name), { migrate: false, maxConnections: 4 })
  })
)
