// insertSuppression (decision 0550): one row per (org, number); a second write of a number answers the stored row
// unchanged (first reason and source win); it runs inside the caller's transaction and rolls back with it.
import { assert, layer } from "@effect/vitest"
import { E164 } from "@svc/domain/models/E164.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { insertSuppression } from "../../src/suppressions/index.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const ORG_W1 = OrgId.make("org_w1")

const number = Schema.decodeUnknownSync(E164)

const addOrg = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp) VALUES (${orgId}, ${orgId}, 10, 0)`
  )

layer(TestDatabase.layer)("insertSuppression", (it) => {
  it.effect("creates a row, then answers the stored row unchanged for the same number", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* addOrg("org_w1")
      const first = yield* insertSuppression(sql, {
        orgId: ORG_W1,
        phoneNumber: number("+14155550101"),
        reason: "asked on a call",
        source: "opt_out",
        now: 1_000
      })
      assert.deepStrictEqual(first, {
        created: true,
        suppression: {
          phone_number: number("+14155550101"),
          reason: "asked on a call",
          source: "opt_out",
          created_timestamp: 1_000
        }
      })
      const second = yield* insertSuppression(sql, {
        orgId: ORG_W1,
        phoneNumber: number("+14155550101"),
        reason: null,
        source: "api",
        now: 2_000
      })
      assert.deepStrictEqual(second, { created: false, suppression: first.suppression })
      const rows = yield* sql`SELECT 1 FROM suppressions WHERE org_id = 'org_w1'`
      assert.strictEqual(rows.length, 1)
    }))

  it.effect("rolls back with the caller's transaction", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* addOrg("org_w2")
      const failed = yield* sql.withTransaction(Effect.gen(function*() {
        yield* insertSuppression(sql, {
          orgId: OrgId.make("org_w2"),
          phoneNumber: number("+14155550102"),
          source: "opt_out",
          now: 1
        })
        return yield* Effect.fail("the call's update failed" as const)
      })).pipe(Effect.flip)
      assert.strictEqual(failed, "the call's update failed")
      const rows = yield* sql`SELECT 1 FROM suppressions WHERE org_id = 'org_w2'`
      assert.strictEqual(rows.length, 0)
    }))

  it.effect("keeps each org's list apart: the same number is created once per org", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* addOrg("org_w3")
      yield* addOrg("org_w4")
      const a = yield* insertSuppression(sql, {
        orgId: OrgId.make("org_w3"),
        phoneNumber: number("+14155550103"),
        source: "api",
        now: 1
      })
      const b = yield* insertSuppression(sql, {
        orgId: OrgId.make("org_w4"),
        phoneNumber: number("+14155550103"),
        source: "api",
        now: 2
      })
      assert.isTrue(a.created)
      assert.isTrue(b.created)
      assert.strictEqual(b.suppression.created_timestamp, 2)
    }))
})
