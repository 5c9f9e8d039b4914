// Batch tests end to end through the real processes (issue 32, "Done when"), on one PostgreSQL database:
//
// 1. Over HTTP to an `svc-server` process: three definitions (a scripted one that passes against the reference
//    custom-LLM server of examples/custom-llm, a scripted one that fails, a simulation one that ends `error` because
//    the scheduler has no chat-completions endpoint), then create-batch-test. An `svc-scheduler` process runs the
//    batch; get-batch-test shows `complete` with 1/1/1 of 3, list-test-runs and get-test-run each run's verdict,
//    explanation and transcript.
// 2. A scheduler process SIGKILLed while it holds a run mid-conversation (a real process, not a fiber): its run stays
//    leased to the dead worker, another worker takes it after the lease, and the job completes with exact counts,
//    the run attempted twice and counted once.
import { assert, describe, it } from "@effect/vitest"
import { faultServer, referenceServer } from "@svc/agent-test/test-support/Servers.ts"
import { waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import { Deferred, Effect } from "effect"
import { database, startScheduler, startServer } from "./support/BatchTestProcesses.ts"

/** One call of the API with the org's key: status and parsed body. */
const api = (base: string, key: string) => (method: string, route: string, body?: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`${base}${route}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    return { status: response.status, body: text === "" ? undefined : JSON.parse(text) as unknown }
  })

interface Snapshot {
  readonly transcript: ReadonlyArray<{ readonly role: string; readonly content: string }>
  readonly transcript_with_tool_calls: ReadonlyArray<{ readonly role: string; readonly [key: string]: unknown }>
}

interface Run {
  readonly test_case_job_id: string
  readonly test_case_definition_id: string
  readonly status: string
  readonly result_explanation: string | null
  readonly transcript_snapshot: Snapshot | null
  readonly test_case_definition_snapshot: { readonly name: string }
}

interface Job {
  readonly status: string
  readonly pass_count: number
  readonly fail_count: number
  readonly error_count: number
  readonly total_count: number
}

const counts = (job: Job) => [job.status, job.pass_count, job.fail_count, job.error_count, job.total_count]

/** Creates the definitions and the batch over HTTP; the job's id and the definitions' ids in order. */
const createBatch = (
  call: ReturnType<typeof api>,
  engineUrl: string,
  definitions: ReadonlyArray<Record<string, unknown>>
) =>
  Effect.gen(function*() {
    const engine = { type: "custom-llm", llm_websocket_url: engineUrl }
    const ids: Array<string> = []
    for (const definition of definitions) {
      const created = yield* call("POST", "/create-test-case-definition", { ...definition, response_engine: engine })
      assert.strictEqual(created.status, 200, JSON.stringify(created.body))
      ids.push((created.body as { test_case_definition_id: string }).test_case_definition_id)
    }
    const batch = yield* call("POST", "/create-batch-test", { response_engine: engine, test_case_definition_ids: ids })
    assert.strictEqual(batch.status, 200, JSON.stringify(batch.body))
    assert.deepStrictEqual(counts(batch.body as Job), ["in_progress", 0, 0, 0, definitions.length])
    return { jobId: (batch.body as { test_case_batch_job_id: string }).test_case_batch_job_id, ids }
  })

const completed = (call: ReturnType<typeof api>, jobId: string, output: () => string) =>
  waitUntil(
    "the batch test to complete",
    Effect.map(call("GET", `/get-batch-test/${jobId}`), (r) => (r.body as Job | undefined)?.status === "complete"),
    { timeoutMs: 120_000, everyMs: 100, state: output }
  )

describe("batch tests through svc-server and svc-scheduler processes", () => {
  it.live(
    "definitions and a batch over HTTP, run by a scheduler process: complete with 1/1/1, each verdict and transcript readable",
    () =>
      Effect.gen(function*() {
        const db = yield* database
        const agent = yield* referenceServer
        const { base, server } = yield* startServer(db.url)
        const call = api(base, db.key)
        const { ids, jobId } = yield* createBatch(call, agent, [
          {
            type: "scripted",
            name: "order status",
            user_turns: ["Where is my order 42?", "Thanks, bye"],
            assertions: [
              { type: "contains", value: "Acme support", turn: 0 },
              { type: "tool_called", name: "lookup_order", arguments: { order_id: "42" } },
              { type: "contains", value: "Order #42 has shipped.", turn: 1 },
              { type: "ends_call" }
            ]
          },
          {
            type: "scripted",
            name: "refund",
            user_turns: ["I want a refund"],
            assertions: [{ type: "contains", value: "refund approved", turn: 1 }]
          },
          { name: "angry caller", user_prompt: "You are an angry caller.", metrics: ["The agent stays calm"] }
        ])
        const scheduler = yield* startScheduler(db.url, "e2e-worker")
        yield* completed(call, jobId, () => `${scheduler.output()}\n${server.output()}`)

        const job = yield* call("GET", `/get-batch-test/${jobId}`)
        assert.deepStrictEqual(counts(job.body as Job), ["complete", 1, 1, 1, 3])

        const listed = yield* call("GET", `/v2/list-test-runs/${jobId}`)
        assert.strictEqual(listed.status, 200)
        const runs = (listed.body as { items: Array<Run> }).items
        assert.deepStrictEqual(runs.map((r) => r.test_case_definition_id), ids)
        assert.deepStrictEqual(runs.map((r) => r.status), ["pass", "fail", "error"])
        assert.deepStrictEqual(runs.map((r) => r.result_explanation), [
          "all 4 assertions passed",
          // decision 0701: the failed assertion by index, and the reference server's reply (examples/custom-llm)
          "assertions[0] contains \"refund approved\" (turn 1) failed: the reply " +
          "\"You said: I want a refund. Anything else?\" does not contain it",
          "simulation test cases need an OpenAI-compatible chat-completions endpoint: set SVC_TEST_LLM_URL " +
          "(with SVC_TEST_LLM_MODEL and SVC_TEST_LLM_API_KEY) on the scheduler, or use type: scripted"
        ])

        const got = yield* call("GET", `/get-test-run/${runs[0]!.test_case_job_id}`)
        assert.strictEqual(got.status, 200)
        const passed = got.body as Run
        assert.strictEqual(passed.status, "pass")
        assert.strictEqual(passed.test_case_definition_snapshot.name, "order status")
        const transcript = passed.transcript_snapshot!
        // the reference server's words (examples/custom-llm/server.mjs) between the caller's turns
        assert.deepStrictEqual(transcript.transcript.map((u) => `${u.role}: ${u.content}`), [
          "agent: Hello, this is Acme support. How can I help?",
          "user: Where is my order 42?",
          "agent: Order #42 has shipped.",
          "user: Thanks, bye",
          "agent: Goodbye!"
        ])
        assert.deepStrictEqual(
          transcript.transcript_with_tool_calls.filter((e) => e.role === "tool_call_invocation"),
          [{
            role: "tool_call_invocation",
            tool_call_id: "lookup_1",
            name: "lookup_order",
            arguments: "{\"order_id\":\"42\"}"
          }]
        )
        const failed = (yield* call("GET", `/get-test-run/${runs[1]!.test_case_job_id}`)).body as Run
        assert.strictEqual(failed.status, "fail")
        assert.strictEqual(failed.transcript_snapshot!.transcript.length, 3)

        // both processes stop cleanly
        scheduler.child.kill("SIGTERM")
        server.child.kill("SIGTERM")
        assert.deepStrictEqual(
          [yield* Deferred.await(scheduler.exited), yield* Deferred.await(server.exited)],
          [0, 0],
          `${scheduler.output()}\n${server.output()}`
        )
      }).pipe(Effect.scoped),
    180_000
  )

  it.live(
    "a scheduler process SIGKILLed mid-run: another takes the run after its lease, the job completes with exact counts",
    () =>
      Effect.gen(function*() {
        const db = yield* database
        // the agent: the first conversation hangs after the caller's first turn (its worker will be killed there);
        // every later one answers "Hi there" to each turn
        let connections = 0
        const agent = yield* faultServer((socket) => {
          const first = ++connections === 1
          socket.send(JSON.stringify({ response_id: 0, content: "Hello", content_complete: true }))
          socket.on("message", (data) => {
            const frame = JSON.parse(data.toString()) as Record<string, unknown>
            if (frame["interaction_type"] !== "response_required" || first) return
            socket.send(
              JSON.stringify({ response_id: frame["response_id"], content: "Hi there", content_complete: true })
            )
          })
        })
        const { base, server } = yield* startServer(db.url)
        const call = api(base, db.key)
        const { jobId } = yield* createBatch(call, agent.url, [
          { type: "scripted", name: "greets", user_turns: ["hello"], assertions: [{ type: "contains", value: "Hi" }] },
          { type: "scripted", name: "says no", user_turns: ["hello"], assertions: [{ type: "contains", value: "No" }] },
          { name: "simulated", user_prompt: "You are a caller.", metrics: ["The agent greets"] }
        ])
        const LEASE_MS = "1500"
        // one run at a time, and a reply bound far beyond the test: the run hangs until the kill
        const victim = yield* startScheduler(db.url, "e2e-victim", {
          SVC_BATCH_TEST_CONCURRENCY: "1",
          SVC_BATCH_TEST_LEASE_MS: LEASE_MS,
          SVC_BATCH_TEST_REPLY_TIMEOUT_MS: "600000"
        })
        yield* waitUntil(
          "the victim to be mid-conversation",
          Effect.sync(() => agent.seen.received.some((f) => f["interaction_type"] === "response_required")),
          { timeoutMs: 90_000, everyMs: 50, state: victim.output }
        )
        victim.child.kill("SIGKILL")
        assert.strictEqual(yield* Deferred.await(victim.exited), null, "killed by the signal")
        const held = yield* db.query((sql) =>
          sql<{ test_case_job_id: string; lease_owner: string; attempts: number }>`
            SELECT test_case_job_id, lease_owner, attempts FROM test_case_runs
            WHERE org_id = ${db.orgId} AND status = 'in_progress'`
        )
        assert.deepStrictEqual(held.map((r) => [r.lease_owner, r.attempts]), [["e2e-victim", 1]])

        const rescuer = yield* startScheduler(db.url, "e2e-rescuer", { SVC_BATCH_TEST_LEASE_MS: LEASE_MS })
        yield* completed(call, jobId, () => `${rescuer.output()}\n${server.output()}`)
        const job = yield* call("GET", `/get-batch-test/${jobId}`)
        assert.deepStrictEqual(counts(job.body as Job), ["complete", 1, 1, 1, 3])
        const runs = yield* db.query((sql) =>
          sql<{ test_case_job_id: string; status: string; attempts: number; lease_owner: string | null }>`
            SELECT test_case_job_id, status, attempts, lease_owner FROM test_case_runs
            WHERE org_id = ${db.orgId} ORDER BY test_case_job_id`
        )
        // the killed run was taken again (attempt 2) and finished once; every run has one verdict
        const retaken = runs.find((r) => r.test_case_job_id === held[0]!.test_case_job_id)!
        assert.strictEqual(retaken.attempts, 2)
        assert.notStrictEqual(retaken.status, "in_progress")
        assert.deepStrictEqual(runs.map((r) => r.status).sort(), ["error", "fail", "pass"])
        rescuer.child.kill("SIGTERM")
        server.child.kill("SIGTERM")
        assert.deepStrictEqual(
          [yield* Deferred.await(rescuer.exited), yield* Deferred.await(server.exited)],
          [0, 0],
          `${rescuer.output()}\n${server.output()}`
        )
      }).pipe(Effect.scoped),
    180_000
  )
})
