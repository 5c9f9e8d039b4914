import { assert, describe, it } from "@effect/vitest"
import { chatCompletionsDouble, errorBody } from "@svc/agent-test/test-support/ChatCompletionsDouble.ts"
import { faultServer, referenceServer } from "@svc/agent-test/test-support/Servers.ts"
import { CreateTestCaseDefinitionRequest, normalize } from "@svc/domain/batchTests/TestCaseDefinition.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import { BatchTestsRepo, TestCaseDefinitionsRepo, TestRunsRepo } from "@svc/store/batchTests/index.ts"
import { CursorKeys } from "@svc/store/db/CursorKeys.ts"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { Effect, Fiber, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import * as BatchTestWorker from "../../src/batchTests/BatchTestWorker.ts"
import { DatabaseHealth } from "../../src/runtime/DatabaseHealth.ts"

// Batch tests run by the scheduler (issue 32 items 2 and 3, "Done when"): a batch with a passing, a failing and an
// erroring definition ends complete with counts 1/1/1; a worker killed mid-run leaves the job to complete with exact
// counts, its run taken again, never counted twice.

const Repos = Layer.mergeAll(BatchTestsRepo.layer, TestCaseDefinitionsRepo.layer, TestRunsRepo.layer).pipe(
  Layer.provideMerge(CursorKeys.layer),
  Layer.provideMerge(TestDatabase.layer),
  Layer.provideMerge(DatabaseHealth.layer)
)

const settings = (overrides: Partial<BatchTestWorker.BatchTestSettings> = {}) =>
  BatchTestWorker.defaults({
    concurrency: 2,
    pollMs: 20,
    leaseMs: 400,
    // the servers are on localhost: SVC_WEBHOOK_ALLOW_PRIVATE=true
    runner: { connectAttempts: 3, connectTimeoutMs: 7_000, replyTimeoutMs: 10_000 },
    ...overrides
  })

let serial = 0

/** An org with `bodies` (create requests without their engine) as definitions for the server at `url`. */
const seedWith = (url: string, bodies: ReadonlyArray<Record<string, unknown>>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const orgId = OrgId.make(`org_bt_${++serial}`)
    yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, 'bt', 0)`
    const definitions = yield* TestCaseDefinitionsRepo
    const ids: Array<string> = []
    for (const body of bodies) {
      const request = Schema.decodeUnknownSync(CreateTestCaseDefinitionRequest)({
        ...body,
        response_engine: { type: "custom-llm", llm_websocket_url: url }
      })
      ids.push((yield* definitions.create(orgId, normalize(request))).test_case_definition_id)
    }
    return { orgId, ids }
  })

/** A passing, a failing and an erroring definition (a simulation one: no model configured). */
const seed = (url: string) =>
  seedWith(url, [
    {
      type: "scripted",
      name: "pass",
      user_turns: ["Where is my order 7?", "bye"],
      assertions: [{ type: "contains", value: "shipped", turn: 1 }, {
        type: "tool_called",
        name: "lookup_order",
        arguments: { order_id: "7" }
      }, { type: "ends_call" }]
    },
    {
      type: "scripted",
      name: "fail",
      user_turns: ["I want a refund"],
      assertions: [{ type: "contains", value: "refund approved" }]
    },
    { name: "error", user_prompt: "You are an angry caller", metrics: ["stays calm"] }
  ])

/** Simulation definitions: one passing, one failing, one whose caller model fails (HTTP 500). */
const seedSimulations = (url: string) =>
  seedWith(url, [
    {
      name: "sim pass",
      user_prompt: "Say: Where is my order 7?\nSay: bye",
      metrics: ["mentions \"has shipped\"", "ends the call"]
    },
    {
      name: "sim fail",
      llm_model: "gpt-4.1-mini",
      user_prompt: "Say: I want a refund",
      metrics: ["mentions \"refund approved\""]
    },
    { name: "sim error", user_prompt: "Say: FAIL THE MODEL", metrics: ["ends the call"] }
  ])

const jobOf = (orgId: OrgId, id: string) => Effect.flatMap(BatchTestsRepo, (repo) => repo.get(orgId, id))

describe("BatchTestWorker", () => {
  it.live(
    "runs a batch against the reference server to complete with counts 1/1/1, each verdict readable",
    () =>
      Effect.gen(function*() {
        const url = yield* referenceServer
        const { ids, orgId } = yield* seed(url)
        const runs = yield* TestRunsRepo
        const job = yield* runs.createBatch(orgId, url, ids)
        yield* Effect.forkScoped(BatchTestWorker.loop(settings(), "worker-1"))
        yield* waitUntil(
          "the job to complete",
          Effect.map(jobOf(orgId, job.test_case_batch_job_id), (j) => j.status === "complete")
        )
        const done = yield* jobOf(orgId, job.test_case_batch_job_id)
        assert.deepStrictEqual(
          [done.pass_count, done.fail_count, done.error_count, done.total_count],
          [1, 1, 1, 3]
        )
        const listed = yield* runs.list(orgId, job.test_case_batch_job_id, {})
        assert.deepStrictEqual(listed.items.map((r) => r.status), ["pass", "fail", "error"])
        assert.strictEqual(listed.items[0]!.result_explanation, "all 3 assertions passed")
        assert.match(listed.items[1]!.result_explanation!, /^assertions\[0\] contains "refund approved" failed/)
        assert.strictEqual(listed.items[2]!.result_explanation, BatchTestWorker.simulationNotConfigured)
        const transcript = listed.items[0]!.transcript_snapshot as {
          transcript_with_tool_calls: Array<{ role: string }>
        }
        assert.include(transcript.transcript_with_tool_calls.map((e) => e.role), "tool_call_invocation")
      }).pipe(Effect.scoped, Effect.provide(Repos)),
    60_000
  )

  it.live(
    "runs simulation definitions when a chat-completions endpoint is configured: 1/1/1, the model errors named",
    () =>
      Effect.gen(function*() {
        const url = yield* referenceServer
        const llm = yield* chatCompletionsDouble((request) =>
          request.body.messages[0]!.content.includes("FAIL THE MODEL")
            ? { _tag: "status", status: 500, body: errorBody("The model is overloaded", "server_error") }
            : undefined
        )
        const { ids, orgId } = yield* seedSimulations(url)
        const runs = yield* TestRunsRepo
        const job = yield* runs.createBatch(orgId, url, ids)
        yield* Effect.forkScoped(
          BatchTestWorker.loop(
            settings({ concurrency: 1, llm: { url: llm.url, model: undefined, apiKey: undefined, timeoutMs: 30_000 } }),
            "worker-sim"
          )
        )
        yield* waitUntil(
          "the job to complete",
          Effect.map(jobOf(orgId, job.test_case_batch_job_id), (j) => j.status === "complete")
        )
        const done = yield* jobOf(orgId, job.test_case_batch_job_id)
        assert.deepStrictEqual([done.pass_count, done.fail_count, done.error_count, done.total_count], [1, 1, 1, 3])
        const listed = yield* runs.list(orgId, job.test_case_batch_job_id, {})
        assert.deepStrictEqual(listed.items.map((r) => [r.status, r.result_explanation]), [
          ["pass", "all 2 metrics passed"],
          ["fail", "metrics[0] \"mentions \\\"refund approved\\\"\" failed: no turn mentions \"refund approved\""],
          [
            "error",
            `the caller model at turn 1: ${llm.url}/chat/completions answered HTTP 500: "The model is overloaded"`
          ]
        ])
        // without SVC_TEST_LLM_MODEL, each definition's llm_model is asked for
        assert.deepStrictEqual([...new Set(llm.seen.map((r) => r.body.model))].sort(), ["gpt-4.1", "gpt-4.1-mini"])
        const transcript = listed.items[0]!.transcript_snapshot as { transcript: Array<{ content: string }> }
        assert.include(transcript.transcript.map((u) => u.content), "Order #7 has shipped.")
      }).pipe(Effect.scoped, Effect.provide(Repos)),
    60_000
  )

  it.live(
    "a worker killed mid-run: its run is taken again after the lease and the job completes with exact counts",
    () =>
      Effect.gen(function*() {
        // the first conversation hangs (the worker running it will be killed); later ones behave like the reference
        let connections = 0
        const server = yield* faultServer((socket) => {
          const first = ++connections === 1
          socket.send(JSON.stringify({ response_id: 0, content: "Hello", content_complete: true }))
          socket.on("message", (data) => {
            const frame = JSON.parse(data.toString()) as Record<string, unknown>
            if (frame["interaction_type"] !== "response_required" || first) return
            const said = (frame["transcript"] as Array<{ content: string }>).at(-1)!.content
            const order = said.includes("order")
            if (order) {
              socket.send(
                JSON.stringify({
                  response_type: "tool_call_invocation",
                  tool_call_id: "t",
                  name: "lookup_order",
                  arguments: "{\"order_id\":\"7\"}"
                })
              )
            }
            socket.send(JSON.stringify({
              response_id: frame["response_id"],
              content: order ? "It has shipped." : said === "bye" ? "Bye" : "Sorry?",
              content_complete: true,
              end_call: said === "bye"
            }))
          })
        })
        const { ids, orgId } = yield* seed(server.url)
        const runs = yield* TestRunsRepo
        const job = yield* runs.createBatch(orgId, server.url, ids)
        const killed = yield* Effect.forkChild(BatchTestWorker.loop(settings({ concurrency: 1 }), "worker-killed"))
        yield* waitUntil(
          "the first worker to be mid-run",
          Effect.sync(() => server.seen.received.some((f) => f["interaction_type"] === "response_required"))
        )
        // killed: it stops without finishing or releasing anything (its lease stays until it expires)
        yield* Fiber.interrupt(killed)
        const sql = yield* SqlClient.SqlClient
        const held = yield* sql<{ test_case_job_id: string; lease_owner: string }>`
        SELECT test_case_job_id, lease_owner FROM test_case_runs
        WHERE org_id = ${orgId} AND status = 'in_progress'`
        assert.deepStrictEqual(held.map((r) => r.lease_owner), ["worker-killed"])
        yield* Effect.forkScoped(BatchTestWorker.loop(settings(), "worker-2"))
        yield* waitUntil(
          "the job to complete",
          Effect.map(jobOf(orgId, job.test_case_batch_job_id), (j) => j.status === "complete")
        )
        const done = yield* jobOf(orgId, job.test_case_batch_job_id)
        assert.deepStrictEqual([done.pass_count, done.fail_count, done.error_count, done.total_count], [1, 1, 1, 3])
        const retaken = yield* sql<{ attempts: number; status: string }>`
        SELECT attempts, status FROM test_case_runs WHERE org_id = ${orgId} AND test_case_job_id = ${
          held[0]!.test_case_job_id
        }`
        assert.strictEqual(retaken[0]!.attempts, 2)
        // the killed worker's lease cannot finish the run again
        const [killedRun] = yield* sql<
          { test_case_batch_job_id: string }
        >`SELECT test_case_batch_job_id FROM test_case_runs WHERE org_id = ${orgId} LIMIT 1`
        const late = yield* runs.finish(
          {
            orgId,
            runId: held[0]!.test_case_job_id,
            batchId: killedRun!.test_case_batch_job_id,
            attempt: 1,
            url: server.url,
            definition: (yield* runs.get(orgId, held[0]!.test_case_job_id)).test_case_definition_snapshot,
            lostBefore: false
          },
          "worker-killed",
          { status: "pass", explanation: "late", transcript: null }
        )
        assert.isFalse(late)
        const after = yield* jobOf(orgId, job.test_case_batch_job_id)
        assert.deepStrictEqual([after.pass_count, after.fail_count, after.error_count], [1, 1, 1])
      }).pipe(Effect.scoped, Effect.provide(Repos)),
    60_000
  )
})
