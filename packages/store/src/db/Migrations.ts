/**
 * Schema migrations and SQL functions, run on start by every process that opens the database.
 *
 * Each migration is a module `migrations/NNNN_name.ts` whose default export is an Effect; they run once, in id
 * order, inside one transaction. New migrations are new files: the loader finds them, so no list needs editing
 * (and a shipped migration is never edited). Migrations hold schema: tables, indexes, triggers.
 *
 * Each SQL function and trigger function lives in `functions/<name>.sql` as its current definition, one
 * `CREATE OR REPLACE FUNCTION` per file (decision 0017). After the migrations, in the same transaction, a file
 * whose text differs from the one last applied (its SHA-256, kept in `svc_functions`), or whose function is
 * missing, is executed again; an unchanged one is left alone. So a function changes by editing its file, not
 * by copying its body into a new migration (`scheduler_claim` had been copied into six).
 *
 * Safe when several processes start at once: the whole run holds a transaction-level advisory lock, so the
 * second process waits and then finds nothing left to do (effect's Migrator alone creates its bookkeeping
 * table before taking its own lock, which races on a fresh database).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Migrator from "effect/sql/Migrator"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

const directory = path.join(import.meta.dirname, "..", "migrations")
const functionsDirectory = path.join(import.meta.dirname, "..", "functions")

/** Every `NNNN_name.ts` under `migrations/`, imported in id order. */
export const all: Migrator.Loader = Effect.suspend(() => {
  const files = fs.readdirSync(directory).filter((f) => /^\d{4}_\w+\.ts$/.test(f)).sort()
  const record: Record<string, () => Promise<unknown>> = {}
  for (const file of files) record[file] = () => import(path.join(directory, file))
  return Migrator.fromGlob(record)
})

/**
 * One SQL function as its file holds it: `name` is the file name without `.sql` (the function's name), `text`
 * the whole file (one `CREATE OR REPLACE FUNCTION` statement, comments allowed), `sha256` the hash of `text`.
 *
 * @category models
 */
export interface SqlFunction {
  readonly name: string
  readonly text: string
  readonly sha256: string
}

/**
 * A function definition from its name and text.
 *
 * @category constructors
 */
export const sqlFunction = (name: string, text: string): SqlFunction => ({
  name,
  text,
  sha256: crypto.createHash("sha256").update(text).digest("hex")
})

/**
 * Every `functions/<name>.sql`, in name order (the order they are created in when several changed).
 *
 * @category constructors
 */
export const functions: Effect.Effect<ReadonlyArray<SqlFunction>> = Effect.sync(() =>
  fs.readdirSync(functionsDirectory).filter((f) => /^[a-z_][a-z0-9_]*\.sql$/.test(f)).sort().map((file) =>
    sqlFunction(file.slice(0, -".sql".length), fs.readFileSync(path.join(functionsDirectory, file), "utf8"))
  )
)

/** `pg_advisory_xact_lock` key: "svc:migrations" hashed, fixed forever. */
const LOCK_KEY = 0x5356_4d31

const migrate = Migrator.make({})({ loader: all, table: "svc_migrations" })

/**
 * Creates (or replaces) each function whose text differs from the one recorded in `svc_functions` or that is
 * missing, records the new hash and forgets files that are gone (dropping a function is schema: a migration
 * does it). Returns the names it executed. Runs inside the caller's transaction and lock.
 */
const define = (definitions: ReadonlyArray<SqlFunction>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Bookkeeping beside svc_migrations, created here as the Migrator creates its own table: under the lock.
    yield* sql`CREATE TABLE IF NOT EXISTS svc_functions (name text PRIMARY KEY, sha256 text NOT NULL)`
    const applied = new Map(
      (yield* sql<{ name: string; sha256: string }>`SELECT name, sha256 FROM svc_functions`).map((r) => [
        r.name,
        r.sha256
      ])
    )
    // A function some migration dropped (to change its signature, say) is created again even if its file is not
    // new: the hash says what was applied, the catalog whether it is still there.
    const present = new Set(
      (yield* sql<{ name: string }>`
        SELECT proname AS name FROM pg_proc WHERE pronamespace = current_schema()::regnamespace`).map((r) => r.name)
    )
    const created: Array<string> = []
    for (const fn of definitions) {
      if (applied.get(fn.name) === fn.sha256 && present.has(fn.name)) continue
      yield* sql.unsafe(fn.text)
      yield* sql`
        INSERT INTO svc_functions (name, sha256) VALUES (${fn.name}, ${fn.sha256})
        ON CONFLICT (name) DO UPDATE SET sha256 = EXCLUDED.sha256`
      created.push(fn.name)
    }
    const names = definitions.map((fn) => fn.name)
    yield* sql`DELETE FROM svc_functions WHERE NOT (name = ANY(${names}))`
    return created
  })

/**
 * Executes `functions/<name>.sql` now. For a migration that adds a trigger on a new function: the trigger needs
 * its function to exist, and the functions pass runs only after every migration (decision 0017). The pass
 * executes the file again afterwards and records its hash; replacing a function with its own text is harmless.
 *
 * @category constructors
 */
export const createFunction = (name: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const fn = (yield* functions).find((f) => f.name === name)
    if (fn === undefined) return yield* Effect.die(new Error(`no file functions/${name}.sql`))
    yield* sql.unsafe(fn.text)
  })

/**
 * Runs the pending migrations, then (re)creates the functions among `definitions` whose text changed, all
 * in one transaction under the lock. Returns the migrations applied and the functions created.
 *
 * @category constructors
 */
export const runWith = (definitions: ReadonlyArray<SqlFunction>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(${LOCK_KEY})`
      const migrations = yield* migrate
      const created = yield* define(definitions)
      return { migrations, functions: created }
    }))
  })

/**
 * Runs the pending migrations and the changed functions of `functions/`; returns the migrations it applied.
 *
 * @category constructors
 */
export const run = Effect.gen(function*() {
  const result = yield* runWith(yield* functions)
  return result.migrations
})
