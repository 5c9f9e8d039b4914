// SuppressionsRepo (decision 0550): create answers the stored row for a listed number, list pages in number order
// with signed keys bound to the org and the query, search is a prefix of the E.164 form answered off the primary key,
// delete of a number not on the caller's list (another org's included) is SuppressionNotFound.
import { assert, layer } from "@effect/vitest"
import { E164 } from "@svc/domain/models/E164.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { CreateSuppressionRequest, ListSuppressionsBody } from "@svc/domain/models/Suppression.ts"
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { CursorKeys } from "../../src/db/CursorKeys.ts"
import { listStatement, prefixEnd, SuppressionsRepo } from "../../src/suppressions/SuppressionsRepo.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const ORG_R1 = OrgId.make("org_r1")
const ORG_R2 = OrgId.make("org_r2")
const ORG_R3 = OrgId.make("org_r3")
const ORG_R4 = OrgId.make("org_r4")
const ORG_R5 = OrgId.make("org_r5")
const ORG_R6 = OrgId.make("org_r6")
const ORG_R7 = OrgId.make("org_r7")

const Layers = SuppressionsRepo.layer.pipe(
  Layer.provideMerge(CursorKeys.layer),
  Layer.provideMerge(TestDatabase.layer)
)

const number = Schema.decodeUnknownSync(E164)
const createRequest = Schema.decodeUnknownSync(CreateSuppressionRequest)
const listRequest = Schema.decodeUnknownSync(ListSuppressionsBody)

const addOrg = (orgId: OrgId) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp) VALUES (${orgId}, ${orgId}, 10, 0)`
  )

/** Every number of the org's list, page after page of `limit`. */
const walk = (orgId: OrgId, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const repo = yield* SuppressionsRepo
    const seen: Array<string> = []
    let key: string | undefined
    for (let pages = 0; pages < 1000; pages++) {
      const page = yield* repo.list(
        orgId,
        listRequest({ ...body, ...(key === undefined ? {} : { pagination_key: key }) })
      )
      seen.push(...page.items.map((i) => i.phone_number))
      if (!page.has_more) {
        assert.isUndefined(page.pagination_key)
        return seen
      }
      key = page.pagination_key
    }
    throw new Error("more than 1000 pages")
  })

layer(Layers)("SuppressionsRepo", (it) => {
  it.effect("creates with source api by default, then answers the stored row for the same number", () =>
    Effect.gen(function*() {
      const repo = yield* SuppressionsRepo
      yield* addOrg(ORG_R1)
      const created = yield* repo.create(ORG_R1, createRequest({ phone_number: "+14155550123" }), 5_000)
      assert.deepStrictEqual(created, {
        created: true,
        suppression: { phone_number: number("+14155550123"), reason: null, source: "api", created_timestamp: 5_000 }
      })
      const again = yield* repo.create(
        ORG_R1,
        createRequest({ phone_number: "+14155550123", reason: "other", source: "crm" }),
        9_000
      )
      assert.deepStrictEqual(again, { created: false, suppression: created.suppression })
    }))

  it.effect("lists in number order, page after page, ascending and descending, each number once", () =>
    Effect.gen(function*() {
      const repo = yield* SuppressionsRepo
      yield* addOrg(ORG_R2)
      const numbers = Array.from({ length: 23 }, (_, i) => `+1212555${String(1000 + ((i * 7) % 23)).padStart(4, "0")}`)
      for (const n of numbers) yield* repo.create(ORG_R2, createRequest({ phone_number: n, reason: `r ${n}` }), 1)
      const sorted = [...numbers].sort()
      assert.deepStrictEqual(yield* walk(ORG_R2, { limit: 5 }), sorted)
      assert.deepStrictEqual(yield* walk(ORG_R2, { limit: 4, sort_order: "descending" }), [...sorted].reverse())
      const first = yield* repo.list(ORG_R2, listRequest({ limit: 1 }))
      assert.deepStrictEqual(first.items, [{
        phone_number: number(sorted[0]!),
        reason: `r ${sorted[0]}`,
        source: "api",
        created_timestamp: 1
      }])
    }))

  it.effect("search is the beginning of the E.164 number, + optional; the range ends where the prefix does", () =>
    Effect.gen(function*() {
      const repo = yield* SuppressionsRepo
      yield* addOrg(ORG_R3)
      // +14159..., +1416..., +1415 itself: a prefix ending in 9 and its neighbour
      for (const n of ["+14155550100", "+14159990000", "+1415", "+14160000000", "+14150000000", "+4415550100"]) {
        yield* repo.create(ORG_R3, createRequest({ phone_number: n }), 1)
      }
      assert.deepStrictEqual(yield* walk(ORG_R3, { search: "+1415", limit: 2 }), [
        "+1415",
        "+14150000000",
        "+14155550100",
        "+14159990000"
      ])
      assert.deepStrictEqual(yield* walk(ORG_R3, { search: "1415" }), yield* walk(ORG_R3, { search: "+1415" }))
      assert.deepStrictEqual(yield* walk(ORG_R3, { search: "14159" }), ["+14159990000"])
      assert.deepStrictEqual(yield* walk(ORG_R3, { search: "44" }), ["+4415550100"])
      assert.deepStrictEqual(yield* walk(ORG_R3, { search: "9" }), [])
      assert.strictEqual(prefixEnd("+1419"), "+141:")
    }))

  it.effect("keeps another org's list apart: not listed, not deleted, its key refused", () =>
    Effect.gen(function*() {
      const repo = yield* SuppressionsRepo
      yield* addOrg(ORG_R4)
      yield* addOrg(ORG_R5)
      yield* repo.create(ORG_R4, createRequest({ phone_number: "+12125550001" }), 1)
      yield* repo.create(ORG_R4, createRequest({ phone_number: "+12125550002" }), 1)
      yield* repo.create(ORG_R5, createRequest({ phone_number: "+13125550009" }), 1)
      assert.deepStrictEqual(yield* walk(ORG_R5, {}), ["+13125550009"])
      const missing = yield* Effect.flip(repo.delete(ORG_R5, number("+12125550001")))
      assert.strictEqual(missing._tag, "SuppressionNotFound")
      assert.strictEqual(missing.message, "phone_number +12125550001 is not on the suppression list")
      assert.deepStrictEqual(yield* walk(ORG_R4, {}), ["+12125550001", "+12125550002"])
      const page = yield* repo.list(ORG_R4, listRequest({ limit: 1 }))
      const foreign = yield* Effect.flip(
        repo.list(ORG_R5, listRequest({ limit: 1, pagination_key: page.pagination_key }))
      )
      assert.strictEqual(foreign._tag, "SuppressionKeyInvalid")
      const otherQuery = yield* Effect.flip(
        repo.list(ORG_R4, listRequest({ limit: 1, search: "1", pagination_key: page.pagination_key }))
      )
      assert.strictEqual(otherQuery._tag, "SuppressionKeyInvalid")
    }))

  it.effect("deletes a listed number once; the second delete is not found", () =>
    Effect.gen(function*() {
      const repo = yield* SuppressionsRepo
      yield* addOrg(ORG_R6)
      yield* repo.create(ORG_R6, createRequest({ phone_number: "+12125550003" }), 1)
      yield* repo.delete(ORG_R6, number("+12125550003"))
      assert.deepStrictEqual(yield* walk(ORG_R6, {}), [])
      const again = yield* Effect.flip(repo.delete(ORG_R6, number("+12125550003")))
      assert.strictEqual(again._tag, "SuppressionNotFound")
    }))

  it.effect("a page of a search reads its rows off the primary key, not a scan of the org's list", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* addOrg(ORG_R7)
      // 50,000 numbers, so a sequential scan would be the cheaper plan if the key could not bound the range
      yield* sql`INSERT INTO suppressions (org_id, phone_number, source, created_timestamp)
        SELECT 'org_r7', '+1' || (2125550000 + i)::text, 'national_dnc', 1 FROM generate_series(1, 50000) i`
      yield* sql`ANALYZE suppressions`
      const statement = listStatement(ORG_R7, listRequest({ search: "+1212555", limit: 50 }), "+12125551000")
      const rows = yield* sql.unsafe<{ "QUERY PLAN": unknown }>(
        `EXPLAIN (FORMAT JSON, ANALYZE) ${statement.text}`,
        statement.params as Array<never>
      ).unprepared
      const raw = rows[0]!["QUERY PLAN"]
      const plan = (typeof raw === "string" ? JSON.parse(raw) : raw) as ReadonlyArray<{ Plan: PlanNode }>
      const nodes = nodesOf(plan[0]!.Plan)
      const scans = nodes.filter((n) => n["Node Type"].includes("Scan"))
      assert.deepStrictEqual(
        scans.map((n) => [n["Node Type"], n["Index Name"]]),
        [["Index Scan", "suppressions_pkey"]],
        JSON.stringify(nodes)
      )
      // the page and the one more that tells has_more, nothing filtered out after reading
      assert.strictEqual(scans[0]!["Actual Rows"], 51)
      assert.strictEqual(scans[0]!["Rows Removed by Filter"] ?? 0, 0)
    }))
})

interface PlanNode {
  readonly "Node Type": string
  readonly "Index Name"?: string
  readonly "Actual Rows"?: number
  readonly "Rows Removed by Filter"?: number
  readonly Plans?: ReadonlyArray<PlanNode>
}
const nodesOf = (node: PlanNode): Array<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodesOf)]
