// SuppressionImport.load (decision 0550): all or nothing in one transaction (a source that fails after chunks went
// in leaves the list as it was), a number repeated in the file or already listed goes in once and keeps the stored
// row, a line's own source wins over the default.
import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { canSkipRowChecks, load, type SuppressionChunk } from "../../src/suppressions/SuppressionImport.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const addOrg = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp) VALUES (${orgId}, ${orgId}, 10, 0)`
  )

const chunk = (numbers: ReadonlyArray<string>, source: string | null = null): SuppressionChunk => ({
  numbers,
  reasons: numbers.map(() => null),
  sources: numbers.map(() => source)
})

/** Hands over `chunks` one by one, then fails with `failure` when given (a bad line further down the file). */
const sourceOf = (chunks: ReadonlyArray<SuppressionChunk>, failure?: string) => {
  let at = 0
  return {
    next: Effect.suspend(() =>
      at < chunks.length
        ? Effect.succeed(chunks[at++])
        : failure === undefined
        ? Effect.succeed(undefined)
        : Effect.fail(failure)
    ),
    estimatedRows: () => chunks.reduce((n, c) => n + c.numbers.length, 0)
  }
}

const listOf = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ phone_number: string; reason: string | null; source: string; created_timestamp: number }>`
      SELECT phone_number, reason, source, created_timestamp::float8 AS created_timestamp FROM suppressions
      WHERE org_id = ${orgId} ORDER BY phone_number`
  )

layer(TestDatabase.layer)("SuppressionImport.load", (it) => {
  it.effect("imports nothing when the source fails after chunks were inserted", () =>
    Effect.gen(function*() {
      yield* addOrg("org_i1")
      const error = yield* Effect.flip(
        load("org_i1", sourceOf([chunk(["+12125550001", "+12125550002"]), chunk(["+12125550003"])], "line 9: bad"), {
          defaultSource: "national_dnc",
          now: 1
        })
      )
      assert.strictEqual(error, "line 9: bad")
      assert.deepStrictEqual(yield* listOf("org_i1"), [])
    }))

  it.effect("puts a number repeated in the file, or already listed, on the list once; the stored row stays", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* addOrg("org_i2")
      yield* sql`INSERT INTO suppressions VALUES ('org_i2', '+12125550002', 'asked', 'opt_out', 7)`
      const progress: Array<string> = []
      const result = yield* load(
        "org_i2",
        sourceOf([
          chunk(["+12125550001", "+12125550002", "+12125550001"]),
          chunk(["+12125550001", "+12125550003"], "state_list")
        ]),
        { defaultSource: "national_dnc", now: 100, onProgress: (p) => progress.push(`${p.phase} ${p.done}/${p.total}`) }
      )
      assert.strictEqual(result.read, 5)
      assert.strictEqual(result.imported, 2)
      assert.deepStrictEqual(yield* listOf("org_i2"), [
        { phone_number: "+12125550001", reason: null, source: "national_dnc", created_timestamp: 100 },
        { phone_number: "+12125550002", reason: "asked", source: "opt_out", created_timestamp: 7 },
        { phone_number: "+12125550003", reason: null, source: "state_list", created_timestamp: 100 }
      ])
      assert.deepStrictEqual(progress, ["load 0/5", "load 3/5", "load 5/5", "list 0/1", "list 1/1"])
    }))

  it.effect("an empty source imports nothing and says so", () =>
    Effect.gen(function*() {
      yield* addOrg("org_i3")
      const result = yield* load("org_i3", sourceOf([]), { defaultSource: "import", now: 1 })
      assert.deepStrictEqual(result, { read: 0, imported: 0, millis: 0 })
    }))

  // The import skips the table's ordinary triggers (session_replication_role = replica) where the role may: that is
  // sound only while the foreign key's checks are the table's only triggers. A trigger added to suppressions fails
  // here, so whoever adds it decides whether imports must fire it.
  it.effect("suppressions has no trigger but its foreign key's checks; the test database's role may skip them", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const triggers = yield* sql<{ fn: string; internal: boolean }>`
        SELECT tgfoid::regproc::text AS fn, tgisinternal AS internal FROM pg_trigger
        WHERE tgrelid = 'suppressions'::regclass ORDER BY 1`
      assert.deepStrictEqual(triggers.map((t) => ({ ...t })), [
        { fn: "\"RI_FKey_check_ins\"", internal: true },
        { fn: "\"RI_FKey_check_upd\"", internal: true }
      ])
      assert.isTrue(yield* canSkipRowChecks)
    }))

  it.effect("holds off a delete of the org until it commits: the org's rows go with it, none is left orphaned", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* addOrg("org_i4")
      const staged = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      let at = 0
      const chunks = [chunk(["+12125550001"]), chunk(["+12125550002"])]
      const source = {
        next: Effect.gen(function*() {
          // the second chunk is asked for while the first is being staged: the transaction is open by then
          if (at === 1) {
            yield* Deferred.succeed(staged, undefined)
            yield* Deferred.await(release)
          }
          return chunks[at++]
        }),
        estimatedRows: () => 2
      }
      const importing = yield* Effect.forkChild(load("org_i4", source, { defaultSource: "api", now: 1 }))
      yield* Deferred.await(staged)
      const deleting = yield* Effect.forkChild(sql`DELETE FROM orgs WHERE org_id = 'org_i4'`)
      // the delete waits for the org's row, which the import holds
      for (let polls = 0;; polls++) {
        // bounded by round trips, not time: each poll is one
        assert.isBelow(polls, 100_000, "the delete of the org never waited for the import's lock")
        const [row] = yield* sql<{ n: number }>`
          SELECT count(*)::int4 AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'DELETE FROM orgs%'`
        if (row!.n > 0) break
      }
      yield* Deferred.succeed(release, undefined)
      const result = yield* Fiber.join(importing)
      assert.strictEqual(result.imported, 2)
      yield* Fiber.join(deleting)
      const left = yield* sql`SELECT 1 FROM suppressions WHERE org_id = 'org_i4'`
      assert.strictEqual(left.length, 0)
    }))
})
