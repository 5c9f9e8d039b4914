import { assert, layer } from "@effect/vitest"
import { CreateTestCaseDefinitionRequest, normalize } from "@svc/domain/batchTests/TestCaseDefinition.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { BatchTestsRepo } from "../../src/batchTests/BatchTestsRepo.ts"
import { TestCaseDefinitionsRepo } from "../../src/batchTests/TestCaseDefinitionsRepo.ts"
import { TestRunsRepo } from "../../src/batchTests/TestRunsRepo.ts"
import { CursorKeys } from "../../src/db/CursorKeys.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

// Exactly-once counting of a batch test's runs (issue 32: "a worker killed mid-run: the run is resumed or retried,
// never counted twice", "pass_count + fail_count + error_count = total_count"; decision 0702).

const Layers = Layer.mergeAll(BatchTestsRepo.layer, TestCaseDefinitionsRepo.layer, TestRunsRepo.layer).pipe(
  Layer.provideMerge(CursorKeys.layer),
  Layer.provideMerge(TestDatabase.layer)
)
const URL = "ws://127.0.0.1:9/llm"
let serial = 0

const seed = (definitions: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const orgId = OrgId.make(`org_tests_${++serial}`)
    yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, 'tests', 0)`
    const repo = yield* TestCaseDefinitionsRepo
    const ids: Array<string> = []
    for (let i = 0; i < definitions; i++) {
      const request = Schema.decodeUnknownSync(CreateTestCaseDefinitionRequest)({
        type: "scripted",
        name: `case ${i}`,
        response_engine: { type: "custom-llm", llm_websocket_url: URL },
        user_turns: ["Hi"],
        assertions: []
      })
      ids.push((yield* repo.create(orgId, normalize(request))).test_case_definition_id)
    }
    return { orgId, ids }
  })

const result = (status: "pass" | "fail" | "error") => ({ status, explanation: status, transcript: null })

layer(Layers)("TestRunsRepo", (it) => {
  it.effect("counts each run once: a lost lease cannot finish the run its successor holds", () =>
    Effect.gen(function*() {
      const { ids, orgId } = yield* seed(2)
      const runs = yield* TestRunsRepo
      const jobs = yield* BatchTestsRepo
      const job = yield* runs.createBatch(orgId, URL, ids)
      assert.deepStrictEqual([job.status, job.total_count], ["in_progress", 2])
      // worker A leases a run with a lease that is already over (it was killed, or paused past it)
      const first = (yield* runs.claim("worker-a", -1))!
      assert.strictEqual(first.attempt, 1)
      // worker B takes the expired run again, then the other one
      const retaken = (yield* runs.claim("worker-b", 60_000))!
      assert.strictEqual(retaken.runId, first.runId)
      assert.strictEqual(retaken.attempt, 2)
      assert.isTrue(retaken.lostBefore)
      const second = (yield* runs.claim("worker-b", 60_000))!
      assert.notStrictEqual(second.runId, first.runId)
      assert.isUndefined(yield* runs.claim("worker-c", 60_000))
      // A wakes up and tries to finish: refused, nothing counted
      assert.isFalse(yield* runs.finish(first, "worker-a", result("pass")))
      assert.strictEqual((yield* jobs.get(orgId, job.test_case_batch_job_id)).pass_count, 0)
      assert.isTrue(yield* runs.finish(retaken, "worker-b", result("fail")))
      // a second finish of the same lease is refused too
      assert.isFalse(yield* runs.finish(retaken, "worker-b", result("fail")))
      const midway = yield* jobs.get(orgId, job.test_case_batch_job_id)
      assert.deepStrictEqual([midway.status, midway.fail_count], ["in_progress", 1])
      assert.isTrue(yield* runs.finish(second, "worker-b", result("error")))
      const done = yield* jobs.get(orgId, job.test_case_batch_job_id)
      assert.deepStrictEqual(
        [done.status, done.pass_count, done.fail_count, done.error_count, done.total_count],
        ["complete", 0, 1, 1, 2]
      )
    }))

  it.effect("lists a job's runs in create order, paged, with the definition's snapshot", () =>
    Effect.gen(function*() {
      const { ids, orgId } = yield* seed(3)
      const runs = yield* TestRunsRepo
      const job = yield* runs.createBatch(orgId, URL, ids)
      const page = yield* runs.list(orgId, job.test_case_batch_job_id, { limit: "2" })
      assert.isTrue(page.has_more)
      assert.deepStrictEqual(page.items.map((r) => r.test_case_definition_id), ids.slice(0, 2))
      assert.strictEqual(page.items[0]!.status, "pending")
      assert.strictEqual(page.items[0]!.test_case_definition_snapshot.name, "case 0")
      const rest = yield* runs.list(orgId, job.test_case_batch_job_id, {
        limit: "2",
        pagination_key: page.pagination_key!
      })
      assert.deepStrictEqual(rest.items.map((r) => r.test_case_definition_id), ids.slice(2))
      assert.isFalse(rest.has_more)
      const one = yield* runs.get(orgId, page.items[1]!.test_case_job_id)
      assert.strictEqual(one.test_case_definition_id, ids[1])
    }))

  it.effect("refuses a batch naming a definition of another org, creating nothing", () =>
    Effect.gen(function*() {
      const mine = yield* seed(1)
      const theirs = yield* seed(1)
      const runs = yield* TestRunsRepo
      const error = yield* Effect.flip(runs.createBatch(mine.orgId, URL, [mine.ids[0]!, theirs.ids[0]!]))
      assert.strictEqual(error._tag, "TestCaseDefinitionNotFound")
      assert.include(error.message, "test_case_definition_ids[1]")
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`SELECT 1 FROM test_case_batch_jobs WHERE org_id = ${mine.orgId}`
      assert.strictEqual(rows.length, 0)
    }))
})
