// Migration 0035 on a populated calls table (issue 30 item 4; decision 0442): a database as a release before it left
// it (migrations up to 0034, the functions of src/functions/), with calls of several shapes, is upgraded by the
// migrator while a writer of the old release is in the middle of a transaction on calls. Every row is kept as it was
// (same call_seq, sort_timestamp, every column), every pagination key handed out before the upgrade reads the same
// next page after it, and the sequence goes on where it stopped.
import { assert, describe, it } from "@effect/vitest"
import { ListCallsBody } from "@svc/domain/models/Call.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Deferred, Effect, Fiber, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import * as Migrator from "effect/sql/Migrator"
import { CallsApiRepo } from "../../src/calls/CallsApiRepo.ts"
import { CursorKeys } from "../../src/db/CursorKeys.ts"
import * as Database from "../../src/db/Database.ts"
import * as DatabaseAdmin from "../../src/db/DatabaseAdmin.ts"
import * as Migrations from "../../src/db/Migrations.ts"
import * as CallsSeed from "../../test-support/CallsSeed.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const NOW = 1_800_000_000_000
const ORG_M1 = OrgId.make("org_m1")
const listBody = Schema.decodeUnknownSync(ListCallsBody)

const emptyDatabase = Effect.gen(function*() {
  const admin = yield* TestDatabase.adminUrl
  const name = `svc_m35_${process.pid}_${Date.now().toString(36)}`
  yield* Effect.acquireRelease(
    DatabaseAdmin.ensureDatabase(admin, name),
    () => Effect.ignore(DatabaseAdmin.dropDatabase(admin, name))
  )
  return TestDatabase.urlFor(admin, name)
})

/** Runs `effect` on a pool of its own (as a process of its own would). */
const onPool = <A, E>(url: ReturnType<typeof TestDatabase.urlFor>, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(Layer.fresh(Database.layerFromUrl(url, { migrate: false, maxConnections: 4 })))
    return yield* Effect.provideContext(effect, context)
  }))

/** The same with the calls API (which needs the cursor secret of a migrated database). */
const onApi = <A, E>(
  url: ReturnType<typeof TestDatabase.urlFor>,
  effect: Effect.Effect<A, E, SqlClient.SqlClient | CallsApiRepo>
) =>
  Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(
      CallsApiRepo.layer.pipe(
        Layer.provide(CursorKeys.layer),
        Layer.provideMerge(Layer.fresh(Database.layerFromUrl(url, { migrate: false, maxConnections: 4 })))
      )
    )
    return yield* Effect.provideContext(effect, context)
  }))

/** The schema as the release before 0035 left it: migrations up to 0034, then every function file. */
const before0035 = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const loader = Effect.map(Migrations.all, (all) => all.filter(([id]) => id < 35))
  const migrate = Migrator.make({})({ loader, table: "svc_migrations" })
  const applied = yield* sql.withTransaction(Effect.andThen(sql`SELECT pg_advisory_xact_lock(${0x5356_4d31})`, migrate))
  for (const fn of yield* Migrations.functions) yield* Migrations.createFunction(fn.name)
  return applied
})

/** Every row of calls, as JSON, in a fixed order. */
const allRows = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ row: string }>`SELECT to_jsonb(c)::text AS row FROM calls c ORDER BY org_id, call_seq`
  return rows.map((r) => r.row)
})

interface Walk {
  readonly pages: ReadonlyArray<ReadonlyArray<unknown>>
  /** The key each page handed out (the last page none). */
  readonly keys: ReadonlyArray<string>
}

const BODIES = [
  { limit: 150, include_total: true },
  { limit: 150, sort_order: "ascending", include_total: true },
  { limit: 40, filter_criteria: { batch_call_id: { type: "string", value: CallsSeed.bigBatch("org_m1") } } },
  { limit: 60, filter_criteria: { call_status: { type: "enum", value: ["ended"] } }, sort_order: "ascending" }
]

/** Every page of `body` for the org, following the keys. */
const walk = (orgId: OrgId, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const api = yield* CallsApiRepo
    const pages: Array<ReadonlyArray<unknown>> = []
    const keys: Array<string> = []
    let key: string | undefined
    for (;;) {
      const page = yield* api.list(orgId, listBody({ ...body, ...(key === undefined ? {} : { pagination_key: key }) }))
      pages.push(page.items)
      if (page.pagination_key === undefined) return { pages, keys } satisfies Walk
      key = page.pagination_key
      keys.push(key)
    }
  })

/** The page each key leads to. */
const pagesOf = (orgId: OrgId, body: Record<string, unknown>, keys: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const api = yield* CallsApiRepo
    return yield* Effect.forEach(keys, (key) =>
      Effect.map(api.list(orgId, listBody({ ...body, pagination_key: key })), (page) => page.items))
  })

describe("migration 0035 on a populated calls table", () => {
  it.live(
    "keeps every row, every cursor and the sequence, with a writer of the old release in flight",
    () =>
      Effect.gen(function*() {
        const url = yield* emptyDatabase
        const applied = yield* onPool(url, before0035)
        assert.strictEqual(applied.at(-1)?.[0], 34)
        yield* onPool(
          url,
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
            SELECT o, o, 10, 0 FROM unnest(ARRAY['org_m1', 'org_m2']) o`
            // dialled-looking calls (2 s apart, 200 still in flight), plus a few registered by a claim
            yield* CallsSeed.load([{ orgId: "org_m1", calls: 3_000 }, { orgId: "org_m2", calls: 500 }], { now: NOW })
            yield* sql`
            INSERT INTO calls (org_id, call_id, from_number, to_number, call_status, recorded_timestamp,
              registered_timestamp)
            SELECT 'org_m1', 'call_reg_' || i, '+14155550100', '+14155550199', 'registered', ${NOW} + i, ${NOW} + i
            FROM generate_series(1, 5) i`
          })
        )
        const rowsBefore = yield* onPool(url, allRows)
        const walksBefore = yield* onApi(url, Effect.forEach(BODIES, (body) => walk(ORG_M1, body)))
        const [seqBefore] = yield* onPool(
          url,
          Effect.flatMap(
            SqlClient.SqlClient,
            (sql) => sql<{ max: string }>`SELECT max(call_seq)::text AS max FROM calls`
          )
        )

        // a writer of the old release holds calls (an open transaction that inserted a call); the upgrade waits for it
        const inserted = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const writer = yield* Effect.forkChild(onPool(
          url,
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql.withTransaction(Effect.gen(function*() {
              yield* sql`
              INSERT INTO calls (org_id, call_id, from_number, to_number, call_status, recorded_timestamp)
              VALUES ('org_m2', 'call_in_flight_write', '+14155550100', '+14155550198', 'ended', ${NOW + 10})`
              yield* Deferred.succeed(inserted, undefined)
              yield* Deferred.await(release)
            })))
        ))
        yield* Deferred.await(inserted)
        const upgrade = yield* Effect.forkChild(onPool(url, Migrations.run))
        // the upgrade waits on a lock behind the writer (real round trips, no timer: at most 10,000 of them, as
        // ContactSearch.integration.test.ts waits for migration 0027's)
        const waiting = yield* onPool(
          url,
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            for (let i = 0; i < 10_000; i++) {
              const rows = yield* sql<{ n: number }>`
              SELECT count(*)::int4 AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`
              if (rows[0]!.n > 0) {
                return true
              }
            }
            return false
          })
        )
        assert.isTrue(waiting, "the upgrade waited for the writer")
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(writer)
        const migrated = yield* Fiber.join(upgrade)
        assert.deepStrictEqual(migrated.filter(([id]) => id >= 35).map(([id, name]) => `${id}_${name}`).slice(0, 1), [
          "35_calls_partitioned"
        ])

        const kind = yield* onPool(
          url,
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql<{ kind: string; parts: Array<string> }>`
            SELECT c.relkind::text AS kind,
              ARRAY(SELECT i.inhrelid::regclass::text FROM pg_inherits i WHERE i.inhparent = c.oid) AS parts
            FROM pg_class c WHERE c.oid = 'calls'::regclass`)
        )
        assert.deepStrictEqual(kind[0], { kind: "p", parts: ["calls_legacy"] })

        // every row as it was, plus the writer's
        const rowsAfter = yield* onPool(url, allRows)
        const writerRow = rowsAfter.filter((r) => r.includes("call_in_flight_write"))
        assert.strictEqual(writerRow.length, 1)
        assert.deepStrictEqual(rowsAfter.filter((r) => !r.includes("call_in_flight_write")), rowsBefore)

        // every key handed out before the upgrade leads to the page it led to then
        for (const [i, body] of BODIES.entries()) {
          const before = walksBefore[i]!
          assert.isAtLeast(before.keys.length, 3, JSON.stringify(body))
          const after = yield* onApi(url, pagesOf(ORG_M1, body, before.keys))
          assert.deepStrictEqual(after, before.pages.slice(1), JSON.stringify(body))
        }

        // the sequence goes on past every call_seq given before the upgrade
        const [next] = yield* onPool(
          url,
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql<{ seq: string }>`
            INSERT INTO calls (org_id, call_id, from_number, to_number, call_status, recorded_timestamp)
            VALUES ('org_m2', 'call_after_upgrade', '+14155550100', '+14155550197', 'ended', ${NOW + 20})
            RETURNING call_seq::text AS seq`)
        )
        assert.isAbove(Number(next!.seq), Number(seqBefore!.max))
        assert.isAbove(Number(next!.seq), Number(JSON.parse(writerRow[0]!).call_seq))
      }).pipe(Effect.scoped),
    { timeout: 240_000 }
  )
})
