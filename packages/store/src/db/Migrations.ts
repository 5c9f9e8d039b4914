/**
 * Schema migrations, run on start by every process that opens the database. Each migration is a
 * module `migrations/NNNN_name.ts` whose default export is an Effect; they run once, in id order,
 * inside one transaction. New migrations are new files: the loader finds them, so no list needs
 * editing (and a shipped migration is never edited).
 *
 * Safe when several processes start at once: the whole run holds a transaction-level advisory lock,
 * so the second process waits and then finds nothing left to do (effect's Migrator alone creates
 * its bookkeeping table before taking its own lock, which races on a fresh database).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Migrator from "effect/sql/Migrator"
import * as fs from "node:fs"
import * as path from "node:path"

const directory = path.join(import.meta.dirname, "..", "migrations")

/** Every `NNNN_name.ts` under `migrations/`, imported in id order. */
export const all: Migrator.Loader = Effect.suspend(() => {
  const files = fs.readdirSync(directory).filter((f) => /^\d{4}_\w+\.ts$/.test(f)).sort()
  const record: Record<string, () => Promise<unknown>> = {}
  for (const file of files) record[file] = () => import(path.join(directory, file))
  return Migrator.fromGlob(record)
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
