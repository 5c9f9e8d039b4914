// SQL functions out of migrations (issue 29 item 2, decision 0017): the migrator (re)creates each function of
// src/functions/ after the migrations. The first cut must leave the database exactly as the migrations alone
// left it, a changed file must be executed and an unchanged one left alone, and two migrators starting at once
// must not both apply the same work.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as Migrator from "effect/sql/Migrator"
import * as Database from "../../src/db/Database.ts"
import * as DatabaseAdmin from "../../src/db/DatabaseAdmin.ts"
import * as Migrations from "../../src/db/Migrations.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

let databases = 0

/** A new empty database, dropped when the scope closes (after every pool opened on it later in the scope). */
const emptyDatabase = Effect.gen(function*() {
  const admin = yield* TestDatabase.adminUrl
  const name = `svc_fn_${process.pid}_${++databases}_${Date.now().toString(36)}`
  yield* Effect.acquireRelease(
    DatabaseAdmin.ensureDatabase(admin, name),
    () => Effect.ignore(DatabaseAdmin.dropDatabase(admin, name))
  )
  return TestDatabase.urlFor(admin, name)
})

/** Runs `effect` on its own pool of `url` (Layer.fresh: two calls are two pools, as two processes would have). */
const onPool = <A, E>(url: ReturnType<typeof TestDatabase.urlFor>, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(Layer.fresh(Database.layerFromUrl(url, { migrate: false, maxConnections: 2 })))
    return yield* Effect.provideContext(effect, context)
  }))

/** The old way: the migrations alone, under the same lock, before functions had their own folder. */
const migrationsOnly = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const migrate = Migrator.make({})({ loader: Migrations.all, table: "svc_migrations" })
  return yield* sql.withTransaction(Effect.andThen(sql`SELECT pg_advisory_xact_lock(${0x5356_4d31})`, migrate))
})

/** Every function of the schema (extensions' own left out) and every user trigger, as PostgreSQL prints them. */
const catalog = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const functions = yield* sql<{ name: string; args: string; def: string; acl: string | null }>`
    SELECT p.proname AS name, pg_get_function_identity_arguments(p.oid) AS args, pg_get_functiondef(p.oid) AS def,
      p.proacl::text AS acl
    FROM pg_proc p
    WHERE p.pronamespace = current_schema()::regnamespace
      AND NOT EXISTS (
        SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
    ORDER BY 1, 2`
  const triggers = yield* sql<{ name: string; def: string; enabled: string }>`
    SELECT c.relname || '.' || t.tgname AS name, pg_get_triggerdef(t.oid) AS def, t.tgenabled::text AS enabled
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
    WHERE NOT t.tgisinternal
    ORDER BY 1`
  return { functions, triggers }
})

/** pg_proc's row version per function: CREATE OR REPLACE writes a new row even for identical text. */
const rowVersions = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ name: string; xmin: string }>`
    SELECT proname AS name, xmin::text AS xmin FROM pg_proc WHERE pronamespace = current_schema()::regnamespace`
  return new Map(rows.map((r) => [r.name, r.xmin]))
})

const callId = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return (yield* sql<{ id: string }>`SELECT svc_call_id(1) AS id`)[0]?.id
})

/** The files of src/functions/ with svc_call_id's body changed (a different, recognisable hash input). */
const withChangedCallId = Effect.map(Migrations.functions, (fns) =>
  fns.map((fn) => {
    if (fn.name !== "svc_call_id") return fn
    const changed = fn.text.replace("'svc-call:'", "'svc-call-changed:'")
    assert.notStrictEqual(changed, fn.text, "svc_call_id.sql no longer holds the text this test changes")
    return Migrations.sqlFunction(fn.name, changed)
  }))

/**
 * Functions whose signature changed after the first cut: the migration that changed it drops the old one (schema),
 * so the migrations alone leave none, and the file is the only definition (0030_campaign_control: scheduler_claim).
 */
const changedSinceCut: ReadonlyArray<string> = [
  "scheduler_claim",
  // new since the cut, so no migration ever defined it (decision 0551)
  "batch_has_pending_task",
  // their argument's type is the row of calls, which 0035_calls_partitioned replaced by a partitioned table: the
  // migration drops them and the pass creates them from their files for the new row type (decision 0442)
  "call_json",
  "webhook_target",
  // new since the cut: the SELECT webhook_enqueue_insert and _update had each spelled out (decision 0520)
  "webhook_transition_events"
]

/**
 * Functions whose body (not signature) changed after the first cut: the migrations alone leave the cut's body, the
 * file the current one. The two outbox triggers call webhook_transition_events instead of each holding its SELECT.
 */
const bodyChangedSinceCut: ReadonlyArray<string> = ["webhook_enqueue_insert", "webhook_enqueue_update"]

describe("SQL functions", () => {
  it.live(
    "the migrator with functions/ yields the same functions and triggers as the migrations alone",
    () =>
      Effect.gen(function*() {
        const before = yield* onPool(yield* emptyDatabase, Effect.andThen(migrationsOnly, catalog))
        const newWay = yield* emptyDatabase
        const applied = yield* onPool(newWay, Migrations.run)
        const after = yield* onPool(newWay, catalog)
        assert.strictEqual(applied.length, (yield* Migrations.all).length)
        // the comparison is not vacuous: the trigger functions are there
        assert.isAtLeast(before.functions.length, 20)
        assert.isAtLeast(before.triggers.length, 10)
        // functions changed since the cut: a migration dropped the old signature and only the file defines it now
        for (const name of changedSinceCut) {
          assert.notInclude(before.functions.map((f) => f.name), name, `${name} is no longer dropped by a migration`)
          assert.include(after.functions.map((f) => f.name), name)
        }
        for (const name of bodyChangedSinceCut) {
          const cut = before.functions.find((f) => f.name === name)
          const now = after.functions.find((f) => f.name === name)
          assert.isDefined(cut, name)
          assert.notStrictEqual(now?.def, cut?.def, `${name} no longer differs from the cut: take it off the list`)
        }
        const changed = [...changedSinceCut, ...bodyChangedSinceCut]
        assert.deepStrictEqual(
          after.functions.filter((f) => !changed.includes(f.name)),
          before.functions.filter((f) => !bodyChangedSinceCut.includes(f.name))
        )
        assert.deepStrictEqual(after.triggers, before.triggers)
        // one file per function, named for it, and no function without its file
        const files = (yield* Migrations.functions).map((f) => f.name)
        assert.deepStrictEqual(files, [...new Set(after.functions.map((f) => f.name))].sort())
      }).pipe(Effect.scoped),
    { timeout: 180_000 }
  )

  it.live("re-creates a function whose text changed and leaves the unchanged ones alone", () =>
    Effect.gen(function*() {
      const url = yield* emptyDatabase
      yield* onPool(url, Migrations.run)
      const original = yield* onPool(url, callId)
      const versions = yield* onPool(url, rowVersions)

      const again = yield* onPool(url, Effect.andThen(Migrations.functions, Migrations.runWith))
      assert.deepStrictEqual(again, { migrations: [], functions: [] })
      assert.deepStrictEqual(yield* onPool(url, rowVersions), versions)

      const changed = yield* withChangedCallId
      const result = yield* onPool(url, Migrations.runWith(changed))
      assert.deepStrictEqual(result, { migrations: [], functions: ["svc_call_id"] })
      const after = yield* onPool(url, rowVersions)
      for (const [name, xmin] of versions) {
        if (name === "svc_call_id") assert.notStrictEqual(after.get(name), xmin, "svc_call_id was not re-created")
        else assert.strictEqual(after.get(name), xmin, `${name} was re-created though its text did not change`)
      }
      const changedId = yield* onPool(url, callId)
      assert.notStrictEqual(changedId, original)

      // back to the file's text: executed again, and the original definition is back
      const restored = yield* onPool(url, Migrations.run)
      assert.deepStrictEqual(restored, [])
      assert.strictEqual(yield* onPool(url, callId), original)

      // a function a migration dropped (to change its signature) comes back though its file did not change
      yield* onPool(url, Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DROP FUNCTION svc_call_id(bigint)`))
      const recreated = yield* onPool(url, Effect.andThen(Migrations.functions, Migrations.runWith))
      assert.deepStrictEqual(recreated, { migrations: [], functions: ["svc_call_id"] })
      assert.strictEqual(yield* onPool(url, callId), original)
    }).pipe(Effect.scoped), { timeout: 180_000 })

  it.live(
    "two migrators starting at once: one applies the migrations and functions, the other finds nothing",
    () =>
      Effect.gen(function*() {
        const url = yield* emptyDatabase
        const definitions = yield* Migrations.functions
        const fresh = yield* Effect.all([1, 2].map(() => onPool(url, Migrations.runWith(definitions))), {
          concurrency: "unbounded"
        })
        const byWork = [...fresh].sort((a, b) => b.migrations.length - a.migrations.length)
        assert.strictEqual(byWork[0]?.migrations.length, (yield* Migrations.all).length)
        assert.deepStrictEqual(byWork[0]?.functions, definitions.map((f) => f.name))
        assert.deepStrictEqual(byWork[1], { migrations: [], functions: [] })

        // a changed function, two migrators at once: executed by exactly one of them
        const changed = yield* withChangedCallId
        const both = yield* Effect.all([1, 2].map(() => onPool(url, Migrations.runWith(changed))), {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(both.map((r) => r.functions).flat(), ["svc_call_id"])
        assert.deepStrictEqual(both.map((r) => r.migrations).flat(), [])
      }).pipe(Effect.scoped),
    { timeout: 180_000 }
  )
})
