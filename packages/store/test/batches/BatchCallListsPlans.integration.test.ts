// list-batch-calls and list-batch-call-tasks query plans on data large enough that a sequential scan, a sort of the
// batch or a walk past other rows would show (issue 31 item 3: "a page of list-batch-call-tasks over a 100,000-task
// batch is answered in milliseconds"): one batch of 100,000 tasks (95 % done with a call each, the rest pending,
// failed, skipped, at the end of the batch the rare states) among 2,000 batches of one org and 500 of another.
// Statements are explained as the repository builds them (BatchCallLists.batchCallsStatement / tasksStatement), with
// their values and as the generic plan a prepared statement may settle on. What is asserted is which index answers
// and how many rows each scan reads (a page reads its own rows), not time: the machine is shared.
import { assert, layer } from "@effect/vitest"
import { ListBatchCallsBody, ListBatchCallTasksBody } from "@svc/domain/models/BatchCallLists.ts"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import * as BatchCallLists from "../../src/batches/BatchCallLists.ts"
import * as BatchListsSeed from "../../test-support/BatchListsSeed.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const { BIG, NOW, ORG, TASKS } = BatchListsSeed
const seed = BatchListsSeed.load
const batchesRequest = Schema.decodeUnknownSync(ListBatchCallsBody)
const tasksRequest = Schema.decodeUnknownSync(ListBatchCallTasksBody)

interface PlanNode {
  readonly "Node Type": string
  readonly "Index Name"?: string
  readonly "Scan Direction"?: string
  readonly "Actual Rows"?: number
  readonly "Actual Loops"?: number
  readonly "Rows Removed by Filter"?: number
  readonly Plans?: ReadonlyArray<PlanNode>
}

const nodesOf = (node: PlanNode): Array<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodesOf)]
const describePlan = (nodes: ReadonlyArray<PlanNode>) =>
  nodes.map((n) => `${n["Node Type"]}${n["Index Name"] ? ` on ${n["Index Name"]}` : ""}`).join(" > ")

const readPlan = (rows: ReadonlyArray<{ "QUERY PLAN": unknown }>) => {
  const raw = rows[0]!["QUERY PLAN"]
  const plan = (typeof raw === "string" ? JSON.parse(raw) : raw) as ReadonlyArray<{ Plan: PlanNode }>
  return nodesOf(plan[0]!.Plan)
}

/** The plan of `statement` for its values, executed (EXPLAIN ANALYZE) so rows read are counted. */
const analyze = (statement: BatchCallLists.Statement) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<{ "QUERY PLAN": unknown }>(
      `EXPLAIN (FORMAT JSON, ANALYZE) ${statement.text}`,
      statement.params as Array<never>
    ).unprepared.pipe(Effect.orDie, Effect.map(readPlan)))

const literal = (value: unknown): string =>
  typeof value === "number"
    ? String(value)
    : Array.isArray(value)
    ? `ARRAY[${value.map(literal).join(", ")}]`
    : `'${String(value).replaceAll("'", "''")}'`

/** The generic plan a prepared statement may switch to after five runs. */
const generic = (statement: BatchCallLists.Statement) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`SET LOCAL plan_cache_mode = force_generic_plan`
      yield* sql.unsafe(`PREPARE lists_plan AS ${statement.text}`).unprepared
      const rows = yield* sql.unsafe<{ "QUERY PLAN": unknown }>(
        `EXPLAIN (FORMAT JSON) EXECUTE lists_plan(${statement.params.map(literal).join(", ")})`
      ).unprepared
      yield* sql.unsafe("DEALLOCATE lists_plan").unprepared
      return readPlan(rows)
    })).pipe(Effect.orDie))

const assertNoSeqScan = (nodes: ReadonlyArray<PlanNode>) =>
  assert.isFalse(nodes.some((n) => n["Node Type"] === "Seq Scan"), describePlan(nodes))
const assertNoSort = (nodes: ReadonlyArray<PlanNode>) =>
  assert.isFalse(nodes.some((n) => n["Node Type"].includes("Sort")), describePlan(nodes))

/** Rows the scans of `index` read (returned plus removed by a filter), over all loops. */
const rowsRead = (nodes: ReadonlyArray<PlanNode>, index: string) =>
  nodes.filter((n) => n["Index Name"] === index).reduce(
    (sum, n) => sum + ((n["Actual Rows"] ?? 0) + (n["Rows Removed by Filter"] ?? 0)) * (n["Actual Loops"] ?? 1),
    0
  )

const TASK_KEY = "batch_call_tasks_batch_call_id_task_index_key"
const BY_STATE = "batch_call_tasks_by_state"
const PAGE = "batch_calls_org_page"

const tasks = (body: unknown, after?: { readonly sortValue: number; readonly id: string }) =>
  BatchCallLists.tasksStatement(ORG, BIG, tasksRequest(body), after, NOW)
const batches = (body: unknown, after?: { readonly sortValue: number; readonly id: string }) =>
  BatchCallLists.batchCallsStatement(ORG, batchesRequest(body), after)

layer(TestDatabase.layer, { timeout: 300_000 })("list-batch-call-tasks and list-batch-calls query plans", (it) => {
  it.effect("the seed holds a 100,000-task batch among 2,500 batches", () =>
    Effect.gen(function*() {
      yield* seed
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ tasks: string; calls: string; batches: string }>`
        SELECT (SELECT count(*) FROM batch_call_tasks WHERE batch_call_id = ${BIG}) AS tasks,
          (SELECT count(*) FROM calls WHERE batch_call_id = ${BIG}) AS calls,
          (SELECT count(*) FROM batch_calls) AS batches`
      assert.deepStrictEqual([Number(row!.tasks), Number(row!.calls), Number(row!.batches)], [TASKS, 96_000, 2_500])
    }))

  it.effect("a page of tasks, first or deep in the batch, reads its own rows off the batch's task key", () =>
    Effect.gen(function*() {
      for (const after of [undefined, { sortValue: 90_000, id: "x" }]) {
        for (const order of ["ascending", "descending"]) {
          const nodes = yield* analyze(tasks({ limit: 100, sort_order: order }, after))
          assertNoSeqScan(nodes)
          assert.isAtMost(rowsRead(nodes, TASK_KEY), 101, describePlan(nodes))
          // the latest call of each task by its key, not a walk of the calls
          assert.isAtMost(rowsRead(nodes, "calls_call_id"), 101, describePlan(nodes))
        }
      }
      const plan = yield* generic(tasks({ limit: 100 }, { sortValue: 90_000, id: "x" }))
      assertNoSeqScan(plan)
      assert.isTrue(plan.some((n) => n["Index Name"] === TASK_KEY), describePlan(plan))
    }))

  it.effect("a page of one rare state at the end of the batch is one range of the state index", () =>
    Effect.gen(function*() {
      for (const state of ["skipped", "failed", "pending"]) {
        const nodes = yield* analyze(
          tasks({ limit: 100, filter_criteria: { state: { type: "enum", value: [state] } } })
        )
        assertNoSeqScan(nodes)
        // pending tasks also have their own partial index (the claim's), as good a range
        const ranges = [BY_STATE, "batch_call_tasks_pending"]
        assert.isTrue(nodes.some((n) => ranges.includes(n["Index Name"] ?? "")), describePlan(nodes))
        assert.isAtMost(
          rowsRead(nodes, BY_STATE) + rowsRead(nodes, ranges[1]!),
          101,
          `${state}: ${describePlan(nodes)}`
        )
        assert.strictEqual(rowsRead(nodes, TASK_KEY), 0, describePlan(nodes))
      }
      const plan = yield* generic(tasks({ filter_criteria: { state: { type: "enum", value: ["failed"] } } }))
      assertNoSeqScan(plan)
      assert.isTrue(plan.some((n) => n["Index Name"] === BY_STATE), describePlan(plan))
    }))

  it.effect("a page of several states reads at most a page from each state's range", () =>
    Effect.gen(function*() {
      const states = ["failed", "skipped", "pending", "cancelled"]
      const nodes = yield* analyze(
        tasks({ limit: 100, filter_criteria: { state: { type: "enum", value: states } } }, {
          sortValue: 98_000,
          id: "x"
        })
      )
      assertNoSeqScan(nodes)
      assert.isAtMost(rowsRead(nodes, BY_STATE), 4 * 101, describePlan(nodes))
      const plan = yield* generic(tasks({ filter_criteria: { state: { type: "enum", value: states } } }))
      assertNoSeqScan(plan)
    }))

  it.effect("a page of batches walks the org's page index in the list order, filtered or not", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ limit: 20 }, "Backward"],
        [{ limit: 20, sort_order: "ascending" }, "Forward"],
        [{ limit: 20, filter_criteria: { status: { type: "enum", value: ["in_progress"] } } }, "Backward"],
        [
          { limit: 20, filter_criteria: { created_timestamp: { type: "range", value: [NOW, NOW + 600 * 60000] } } },
          "Backward"
        ]
      ]
      for (const [body, direction] of cases) {
        for (const after of [undefined, { sortValue: NOW + 1500 * 60000, id: "batch_1500" }]) {
          const nodes = yield* analyze(batches(body, after))
          assertNoSeqScan(nodes)
          assertNoSort(nodes)
          const scan = nodes.find((n) => n["Index Name"] === PAGE)
          assert.isDefined(scan, describePlan(nodes))
          assert.strictEqual(scan!["Scan Direction"], direction, describePlan(nodes))
          // every fourth batch is in progress: a page of 20 of them reads about 80 batches, not the org's 2,000
          assert.isAtMost(rowsRead(nodes, PAGE), 100, JSON.stringify(body))
        }
        const plan = yield* generic(batches(body))
        assertNoSeqScan(plan)
        assert.isTrue(plan.some((n) => n["Index Name"] === PAGE), describePlan(plan))
      }
    }))
})
