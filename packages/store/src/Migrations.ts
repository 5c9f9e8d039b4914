/**
 * Schema migrations, run on start by every process that opens the database. Migrations are
 * numbered modules under `migrations/`; they run once, in order, inside one transaction.
 *
 * Safe when several processes start at once: the whole run holds a transaction-level advisory lock,
 * so the second process waits and then finds nothing left to do (effect's Migrator alone creates
 * its bookkeeping table before taking its own lock, which races on a fresh database).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Migrator from "effect/sql/Migrator"
import migration0001 from "./migrations/0001_extensions.ts"

/** Every migration, by `<id>_<name>`; add new ones at the end and never edit a shipped one. */
export const all = Migrator.fromRecord({
  "0001_extensions": migration0001
})

/** `pg_advisory_xact_lock` key: "svc:migrations" hashed, fixed forever. */
const LOCK_KEY = 0x5356_4d31

/**
 * Runs the pending migrations; returns the ones it applied.
 *
 * @category constructors
 */
export const run = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const migrate = Migrator.make({})({ loader: all, table: "svc_migrations" })
  return yield* sql.withTransaction(
    Effect.andThen(sql`SELECT pg_advisory_xact_lock(${LOCK_KEY})`, migrate)
  )
})
