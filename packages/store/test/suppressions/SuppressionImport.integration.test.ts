// SuppressionImport.load (decision 0550): all or nothing in one transaction (a source that fails after chunks went
// in leaves the list as it was), a number repeated in the file or already listed goes in once and keeps the stored
// row, a line's own source wins over the default.
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { load, type SuppressionChunk } from "../../src/suppressions/SuppressionImport.ts"
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
        { defaultSource: "national_dnc", now: 100, onProgress: (p) => progress.push(`${p.done}/${p.total}`) }
      )
      assert.strictEqual(result.read, 5)
      assert.strictEqual(result.imported, 2)
      assert.deepStrictEqual(yield* listOf("org_i2"), [
        { phone_number: "+12125550001", reason: null, source: "national_dnc", created_timestamp: 100 },
        { phone_number: "+12125550002", reason: "asked", source: "opt_out", created_timestamp: 7 },
        { phone_number: "+12125550003", reason: null, source: "state_list", created_timestamp: 100 }
      ])
      assert.deepStrictEqual(progress, ["0/5", "3/5", "5/5"])
    }))

  it.effect("an empty source imports nothing and says so", () =>
    Effect.gen(function*() {
      yield* addOrg("org_i3")
      const result = yield* load("org_i3", sourceOf([]), { defaultSource: "import", now: 1 })
      assert.deepStrictEqual(result, { read: 0, imported: 0, millis: 0 })
    }))
})
