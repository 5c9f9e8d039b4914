import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Database from "../../src/db/Database.ts"
import * as DatabaseAdmin from "../../src/db/DatabaseAdmin.ts"
import * as Migrations from "../../src/db/Migrations.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

layer(TestDatabase.layer)("Database on a cloned template", (it) => {
  it.effect("has pg_trgm and every migration file recorded", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const ext = yield* sql<{ extname: string }>`SELECT extname FROM pg_extension ORDER BY extname`
      assert.include(ext.map((e) => e.extname), "pg_trgm")
      const applied = yield* sql<{ migration_id: number }>`SELECT migration_id FROM svc_migrations`
      const expected = (yield* Migrations.all).map(([id]) => id)
      assert.isAtLeast(expected.length, 2)
      assert.deepStrictEqual(applied.map((m) => Number(m.migration_id)).sort((a, b) => a - b), expected)
    }))

  it.effect("running migrations again applies nothing", () =>
    Effect.gen(function*() {
      const applied = yield* Migrations.run
      assert.deepStrictEqual(applied, [])
    }))
})

describe("Migrations", () => {
  it.live(
    "two processes migrating a fresh database at once apply each migration exactly once",
    () =>
      Effect.gen(function*() {
        const admin = yield* TestDatabase.adminUrl
        const name = `svc_race_${process.pid}_${Date.now().toString(36)}`
        yield* Effect.acquireRelease(
          DatabaseAdmin.ensureDatabase(admin, name),
          () => Effect.ignore(DatabaseAdmin.dropDatabase(admin, name))
        )
        const url = TestDatabase.urlFor(admin, name)
        // Two independent pools, as two processes would have; both build (and so migrate) at once.
        const one = Layer.fresh(Database.layerFromUrl(url, { maxConnections: 2 }))
        const counts = yield* Effect.all(
          [1, 2].map(() =>
            Effect.scoped(Effect.gen(function*() {
              const context = yield* Layer.build(one)
              const rows = yield* Effect.provideContext(
                Effect.flatMap(
                  SqlClient.SqlClient,
                  (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM svc_migrations`
                ),
                context
              )
              return rows[0]?.n
            }))
          ),
          { concurrency: "unbounded" }
        )
        const expected = (yield* Migrations.all).length
        assert.deepStrictEqual(counts, [expected, expected])
      }).pipe(Effect.scoped),
    { timeout: 60_000 }
  )
})

describe("Database.layerFromUrl", () => {
  it.live("an unreachable server fails with one sentence naming host and port, not the password", () =>
    Effect.gen(function*() {
      const url = Redacted.make("postgres://svc:s3cret@127.0.0.1:1/svc")
      const error = yield* Effect.flip(Effect.scoped(Layer.build(Database.layerFromUrl(url))))
      assert.strictEqual(error._tag, "DatabaseError")
      assert.match(error.message, /^cannot reach the database at 127\.0\.0\.1:1\/svc/)
      assert.notInclude(error.message, "s3cret")
    }))

  it("describeUrl never shows credentials", () => {
    assert.strictEqual(Database.describeUrl(Redacted.make("postgres://u:p@db.example:6543/app")), "db.example:6543/app")
    assert.strictEqual(Database.describeUrl(Redacted.make("not a url")), "(unparseable URL)")
  })
})
