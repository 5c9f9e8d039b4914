import { assert, layer } from "@effect/vitest"
import { ListCallsBody } from "@svc/domain/models/Call.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import * as CallsApiRepo from "../../src/calls/CallsApiRepo.ts"
import * as CallsSeed from "../../test-support/CallsSeed.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

// list-calls query plans on a table large enough that a sequential scan or a sort would show (issue 13: "indexed
// for each filter, plan-tested like contacts"): 200,000 calls in one org and 60,000 over 6 others, the shape of
// CallsSeed. Statements are explained as the repository runs them (CallsApiRepo.listStatements, unprepared: planned
// for their values). Which filters have an index is decision 0511.

const BIG = OrgId.make("org-big")
const NOW = 1_800_000_000_000
const request = Schema.decodeUnknownSync(ListCallsBody)

interface PlanNode {
  readonly "Node Type": string
  readonly "Index Name"?: string
  readonly "Relation Name"?: string
  readonly "Index Cond"?: string
  readonly "Scan Direction"?: string
  readonly "Actual Rows"?: number
  readonly "Actual Loops"?: number
  readonly "Rows Removed by Filter"?: number
  readonly "Heap Fetches"?: number
  readonly Plans?: ReadonlyArray<PlanNode>
}

/** calls itself, or one of its partitions (calls is partitioned by recorded_timestamp: decision 0442). */
const isPartitionOfCalls = (relation: string) => relation === "calls" || relation.startsWith("calls_")

const nodesOf = (node: PlanNode): Array<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodesOf)]

const explainText = (text: string, params: ReadonlyArray<unknown>, analyze = false) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<{ "QUERY PLAN": unknown }>(
      `EXPLAIN (FORMAT JSON${analyze ? ", ANALYZE, BUFFERS" : ""}) ${text}`,
      params as Array<never>
    ).unprepared.pipe(
      Effect.orDie,
      Effect.map((rows) => {
        const raw = rows[0]!["QUERY PLAN"]
        const plan = (typeof raw === "string" ? JSON.parse(raw) : raw) as ReadonlyArray<{ Plan: PlanNode }>
        return nodesOf(plan[0]!.Plan)
      })
    ))

const literal = (value: unknown): string =>
  typeof value === "number" ? String(value) : `'${String(value).replaceAll("'", "''")}'`

/** The plan a prepared statement settles on after five runs: the generic one (for the statements run prepared). */
const explainGeneric = (text: string, params: ReadonlyArray<unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`SET LOCAL plan_cache_mode = force_generic_plan`
      yield* sql.unsafe(`PREPARE calls_plan AS ${text}`).unprepared
      const rows = yield* sql.unsafe<{ "QUERY PLAN": unknown }>(
        `EXPLAIN (FORMAT JSON) EXECUTE calls_plan(${params.map(literal).join(", ")})`
      ).unprepared
      yield* sql.unsafe("DEALLOCATE calls_plan").unprepared
      const raw = rows[0]!["QUERY PLAN"]
      const plan = (typeof raw === "string" ? JSON.parse(raw) : raw) as ReadonlyArray<{ Plan: PlanNode }>
      return nodesOf(plan[0]!.Plan)
    })).pipe(Effect.orDie))

type After = Parameters<typeof CallsApiRepo.listStatements>[2]

const pagePlan = (body: unknown, after?: After, analyze = false) => {
  const s = CallsApiRepo.listStatements(BIG, request(body), after)
  return explainText(s.page.text, s.page.params, analyze)
}
const countPlan = (body: unknown, analyze = false) => {
  const s = CallsApiRepo.listStatements(BIG, request(body), undefined)
  return explainText(s.count.text, s.count.params, analyze)
}

const describePlan = (nodes: ReadonlyArray<PlanNode>) =>
  nodes.map((n) => `${n["Node Type"]}${n["Index Name"] ? ` on ${n["Index Name"]}` : ""}`).join(" > ")

const scansOf = (nodes: ReadonlyArray<PlanNode>, index: string) => nodes.filter((n) => n["Index Name"] === index)

const assertNoSeqScanOrSort = (nodes: ReadonlyArray<PlanNode>) => {
  assert.isFalse(nodes.some((n) => n["Node Type"] === "Seq Scan"), describePlan(nodes))
  assert.isFalse(
    nodes.some((n) => n["Node Type"] === "Sort" || n["Node Type"] === "Incremental Sort"),
    describePlan(nodes)
  )
}

/** A page read straight off `index` in the list order: one index scan, no sort, no sequential scan. */
const assertOrderedWalk = (nodes: ReadonlyArray<PlanNode>, index: string, direction = "Backward") => {
  const scans = scansOf(nodes, index)
  assert.strictEqual(scans.length, 1, describePlan(nodes))
  assert.strictEqual(scans[0]!["Node Type"], "Index Scan", describePlan(nodes))
  assert.strictEqual(scans[0]!["Scan Direction"], direction, describePlan(nodes))
  assert.strictEqual(nodes[0]!["Node Type"], "Limit", describePlan(nodes))
  assertNoSeqScanOrSort(nodes)
}

/** Rows the scan of `index` read (returned plus removed by its filter), from EXPLAIN ANALYZE. */
const rowsExamined = (nodes: ReadonlyArray<PlanNode>, index: string) => {
  const scan = scansOf(nodes, index)[0]!
  return ((scan["Actual Rows"] ?? 0) + (scan["Rows Removed by Filter"] ?? 0)) * (scan["Actual Loops"] ?? 1)
}

layer(TestDatabase.layer, { timeout: 300_000 })("list-calls query plans on 260,000 calls", (it) => {
  it.effect("the seed wrote every org's calls with the shape the plans rely on", () =>
    Effect.gen(function*() {
      const plans = [{ orgId: BIG, calls: 200_000 }]
      for (let i = 0; i < 6; i++) plans.push({ orgId: OrgId.make(`org-small-${i}`), calls: 10_000 })
      yield* CallsSeed.load(plans, { now: NOW })
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ calls: string; big: string; in_flight: string; batches: string }>`
        SELECT count(*) AS calls,
          count(*) FILTER (WHERE batch_call_id = ${CallsSeed.bigBatch(BIG)}) AS big,
          count(*) FILTER (WHERE call_status IN ('registered', 'ongoing')) AS in_flight,
          count(DISTINCT batch_call_id) AS batches
        FROM calls WHERE org_id = ${BIG}`
      assert.strictEqual(Number(rows[0]!.calls), 200_000)
      assert.approximately(Number(rows[0]!.big), 40_000, 2_000)
      assert.strictEqual(Number(rows[0]!.in_flight), 200)
      assert.isAbove(Number(rows[0]!.batches), 150)
    }), 240_000)

  it.effect("no filter: walks calls_list in either order; a cursor page is one row comparison on it", () =>
    Effect.gen(function*() {
      assertOrderedWalk(yield* pagePlan({ limit: 100 }), "calls_list", "Backward")
      assertOrderedWalk(yield* pagePlan({ limit: 100, sort_order: "ascending" }), "calls_list", "Forward")
      const deep = yield* pagePlan({ limit: 100 }, { sortValue: NOW - 100_000_000, callId: "call_x" }, true)
      assertOrderedWalk(deep, "calls_list")
      assert.match(scansOf(deep, "calls_list")[0]!["Index Cond"] ?? "", /ROW\(sort_timestamp, call_id\) </)
      assert.strictEqual(rowsExamined(deep, "calls_list"), 101)
      // the unfiltered statements run prepared (decision 0545): their generic plans are the same walks
      for (const after of [undefined, { sortValue: NOW - 100_000_000, callId: "call_x" }]) {
        const s = CallsApiRepo.listStatements(BIG, request({ limit: 100 }), after)
        assert.isFalse(s.custom)
        assertOrderedWalk(yield* explainGeneric(s.page.text, s.page.params), "calls_list")
      }
      const filtered = CallsApiRepo.listStatements(
        BIG,
        request({ filter_criteria: { call_status: { type: "enum", value: ["ongoing"] } } }),
        undefined
      )
      assert.isTrue(filtered.custom, "a filtered statement runs unprepared")
    }))

  it.effect("batch_call_id: an ordered walk for the page and a cursor page; the count only reads the batch index", () =>
    Effect.gen(function*() {
      // a batch of 40,000 (a fifth of the org) and one of about 1,000
      for (const batch of [CallsSeed.bigBatch(BIG), CallsSeed.smallBatch(BIG, 100)]) {
        const body = {
          limit: 100,
          include_total: true,
          filter_criteria: { batch_call_id: { type: "string", value: batch } }
        }
        for (const after of [undefined, { sortValue: NOW - 150_000_000, callId: "call_x" }]) {
          const page = yield* pagePlan(body, after, true)
          // the first index the plan reads (below the Limit and, on a partitioned calls, its projection: decision 0442)
          const index = page.find((n) => n["Index Name"] !== undefined)?.["Index Name"] ?? ""
          // calls_batch reads exactly the page; for a batch this common PostgreSQL may rather walk calls_list
          // (heap order, a fifth of its rows match): either is an ordered walk that stops at the page
          assert.include(["calls_batch", "calls_list"], index, describePlan(page))
          assertOrderedWalk(page, index)
          assert.isAtMost(rowsExamined(page, index), 1_000, describePlan(page))
        }
        const count = yield* countPlan(body, true)
        const scans = scansOf(count, "calls_batch")
        assert.strictEqual(scans.length, 1, describePlan(count))
        // migration 0016: org_id is carried in the index, so the org-scoped count needs no heap row (the seed vacuumed)
        assert.strictEqual(scans[0]!["Node Type"], "Index Only Scan", describePlan(count))
        assert.strictEqual(scans[0]!["Heap Fetches"], 0, describePlan(count))
        assertNoSeqScanOrSort(count)
      }
    }))

  it.effect("agent, to_number, call_id: each its index, walked in order", () =>
    Effect.gen(function*() {
      const agent = yield* pagePlan({ limit: 100, filter_criteria: { agent: [{ agent_id: CallsSeed.agentId(5) }] } })
      assertOrderedWalk(agent, "calls_agent")
      const number = CallsSeed.toNumber(12_345)
      const to = yield* pagePlan({ limit: 100, filter_criteria: { to_number: { type: "string", value: number } } })
      assert.isNotEmpty(scansOf(to, "calls_to_number"), describePlan(to))
      assertNoSeqScanOrSort(to)
      const ids = yield* pagePlan({ filter_criteria: { call_id: { type: "enum", value: ["call_a", "call_b"] } } })
      assert.isNotEmpty(scansOf(ids, "calls_call_id"), describePlan(ids))
      assert.isFalse(ids.some((n) => n["Node Type"] === "Seq Scan"), describePlan(ids))
    }))

  it.effect("call_status in flight: walks calls_list from the top, where the calls in flight are", () =>
    Effect.gen(function*() {
      // calls_in_flight was dropped by migration 0015 (its predicate changed at every finish, decision 0540). The
      // org's 200 newest calls are its calls in flight (100 registered, then 100 ongoing): a page of 50 is found
      // at the top of the list...
      for (const value of [["registered"], ["registered", "ongoing"], ["ongoing"]]) {
        const body = { limit: 50, filter_criteria: { call_status: { type: "enum", value } } }
        const page = yield* pagePlan(body, undefined, true)
        assertOrderedWalk(page, "calls_list")
        assert.isAtMost(rowsExamined(page, "calls_list"), 210, describePlan(page))
      }
      // ... but a page larger than the calls in flight reads the org's whole list to learn there is no more: the
      // cost decision 0511 records for dropping the index
      const all = yield* pagePlan(
        { limit: 1000, filter_criteria: { call_status: { type: "enum", value: ["ongoing"] } } },
        undefined,
        true
      )
      // the scan of calls' partition that holds the org's calls (decision 0442)
      const scan = all.find((n) => n["Relation Name"] !== undefined && isPartitionOfCalls(n["Relation Name"]))!
      const examined = ((scan["Actual Rows"] ?? 0) + (scan["Rows Removed by Filter"] ?? 0)) *
        (scan["Actual Loops"] ?? 1)
      assert.isAtLeast(examined, 190_000, describePlan(all))
    }))

  it.effect("a start_timestamp condition counts exactly, at fractional and far-out values", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [edge] = yield* sql<{ start: string }>`
        SELECT start_timestamp::text AS start FROM calls
        WHERE org_id = ${BIG} AND start_timestamp IS NOT NULL ORDER BY call_id LIMIT 1`
      const at = Number(edge!.start)
      const cases: Array<readonly [string, number | [number, number]]> = [
        ["eq", at],
        ["eq", at + 0.5],
        ["gt", at],
        ["gt", at - 0.5],
        ["ge", at],
        ["ge", at + 0.5],
        ["lt", at],
        ["lt", at + 0.5],
        ["le", at],
        ["le", at - 0.5],
        ["ge", 1e300],
        ["le", -1e300],
        ["bt", [at - 0.5, at + 0.5]],
        ["bt", [at, at]],
        ["bt", [-1e300, 1e300]]
      ]
      const sqlOps: Record<string, string> = { eq: "=", gt: ">", ge: ">=", lt: "<", le: "<=" }
      for (const [op, value] of cases) {
        const start = op === "bt" ? { type: "range", value } : { type: "number", op, value }
        const statement = CallsApiRepo.listStatements(
          BIG,
          request({ filter_criteria: { start_timestamp: start } }),
          undefined
        )
        const [counted] = yield* sql.unsafe<{ total: string }>(
          statement.count.text,
          statement.count.params as Array<never>
        )
          .unprepared
        const [exact] = op === "bt"
          ? yield* sql<{ total: string }>`
            SELECT count(*) AS total FROM calls WHERE org_id = ${BIG}
              AND start_timestamp::numeric BETWEEN ${(value as [number, number])[0]}::numeric
                AND ${(value as [number, number])[1]}::numeric`
          : yield* sql.unsafe<{ total: string }>(
            `SELECT count(*) AS total FROM calls WHERE org_id = $1 AND start_timestamp::numeric ${
              sqlOps[op]
            } $2::numeric`,
            [BIG, value] as Array<never>
          )
        assert.strictEqual(Number(counted!.total), Number(exact!.total), `${op} ${JSON.stringify(value)}`)
      }
    }))

  it.effect("filters without an index walk calls_list in order and stop at the page when matches are common", () =>
    Effect.gen(function*() {
      const walked = [
        { disconnection_reason: { type: "enum", value: ["user_hangup", "dial_no_answer"] } },
        { from_number: { type: "string", value: "+16505550001" } },
        { call_successful: { type: "boolean", value: true } },
        { user_sentiment: { type: "enum", value: ["Positive"] } },
        { call_status: { type: "enum", value: ["ended"] } },
        { duration_ms: { type: "range", value: [10_000, 200_000] } },
        { metadata: [{ key: "campaign", type: "string", value: "spring" }] },
        { custom_analysis_data: [{ key: "score", type: "number", op: "ge", value: 5 }] }
      ]
      for (const filter_criteria of walked) {
        const page = yield* pagePlan({ limit: 100, filter_criteria }, undefined, true)
        assertOrderedWalk(page, "calls_list")
        // every one of these matches at least 1 call in 10: a page reads at most ~10 pages' worth
        assert.isAtMost(rowsExamined(page, "calls_list"), 2_000, JSON.stringify(filter_criteria))
      }
    }))
})
