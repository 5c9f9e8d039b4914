// Batch tests through the vendor's SDK (issue 32, "Done when": "through raw HTTP and the vendor SDK (`client.tests.*`
// where its shapes allow)"), against an `svc-server` process, an `svc-scheduler` process running the batch-test
// worker and the reference custom-LLM server of examples/custom-llm, all real.
//
// The SDK is retell-sdk 5.66.1 (node_modules/retell-sdk/resources/tests.d.ts). Its request types cannot express two
// things this story needs, and those steps alone go over raw HTTP:
// - scripted definitions (`type: "scripted"`, `user_turns`, `assertions`) are an svc extension (decision 0700): the
//   SDK's TestCreateTestCaseDefinitionParams declares only the simulation shape (`user_prompt` and `metrics`
//   required);
// - a custom-LLM engine: the SDK's create-batch-test and definition params declare only `retell-llm` and
//   `conversation-flow` ("Custom LLM is not supported"), the same for the `type` of list-test-case-definitions,
//   while custom-llm is the one engine svc runs (decision 0702).
// Everything else goes through `client.tests.*`: the simulation definition's create (its engine spelled `svc-llm`,
// the spec's word for the vendor's `retell-llm`: the one cast), every definition's read, an update, a list, a delete,
// the SDK's create-batch-test refused by name, the job's reads, the runs' list (both pages) and each run's read.
// The SDK does not check response bodies against its types, so a scripted definition reads back whole through it.
import { assert, describe, it } from "@effect/vitest"
import { referenceServer } from "@svc/agent-test/test-support/Servers.ts"
import { waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import { Deferred, Effect } from "effect"
import Retell from "retell-sdk"
import { database, startScheduler, startServer } from "./support/BatchTestProcesses.ts"

/** The shape of `transcript_snapshot` (the SDK types it `unknown`): decision 0702. */
interface Snapshot {
  readonly transcript: ReadonlyArray<{ readonly role: string; readonly content: string }>
  readonly transcript_with_tool_calls: ReadonlyArray<{ readonly role: string; readonly [key: string]: unknown }>
}

/** Raw HTTP with the org's key, for the steps the SDK's types cannot express. */
const raw = (base: string, key: string) => (method: string, route: string, body: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`${base}${route}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    return { status: response.status, body: await response.json() as Record<string, unknown> }
  })

/** The SDK's promise as an effect whose failure is the SDK's error (its class and status are asserted). */
const sdk = <A>(call: () => Promise<A>) => Effect.tryPromise({ try: call, catch: (error) => error })

describe("batch tests through the vendor SDK", () => {
  it.live(
    "definitions, a batch of a passing, a failing and an erroring one: complete 1/1/1, each verdict and transcript read through client.tests",
    () =>
      Effect.gen(function*() {
        const db = yield* database
        const agent = yield* referenceServer
        const { base, server } = yield* startServer(db.url)
        const client = new Retell({ apiKey: db.key, baseURL: base, maxRetries: 0 })
        const post = raw(base, db.key)
        const engine = { type: "custom-llm" as const, llm_websocket_url: agent }

        // raw HTTP: scripted definitions on a custom-LLM engine (svc extension; see the file's comment)
        const scripted = [
          {
            type: "scripted",
            name: "order status",
            response_engine: engine,
            user_turns: ["Where is my order 42?", "Thanks, bye"],
            assertions: [
              { type: "contains", value: "Acme support", turn: 0 },
              { type: "tool_called", name: "lookup_order", arguments: { order_id: "42" } },
              { type: "ends_call" }
            ]
          },
          {
            type: "scripted",
            name: "refund",
            response_engine: engine,
            user_turns: ["I want a refund"],
            assertions: [{ type: "contains", value: "refund approved", turn: 1 }]
          }
        ]
        const scriptedIds: Array<string> = []
        for (const body of scripted) {
          const created = yield* post("POST", "/create-test-case-definition", body)
          assert.strictEqual(created.status, 200, JSON.stringify(created.body))
          scriptedIds.push(created.body["test_case_definition_id"] as string)
        }

        // the SDK: a simulation definition (the vendor's own kind); no chat-completions endpoint is configured on the
        // scheduler, so its run ends error saying what to set (decision 0706)
        const simulation = yield* sdk(() =>
          client.tests.createTestCaseDefinition({
            name: "angry caller",
            // the spec spells the vendor's retell-llm as svc-llm (spec, Conventions); the batch's engine is what runs
            response_engine: { type: "svc-llm", llm_id: "llm_sdk" } as never,
            user_prompt: "You are an angry caller.",
            metrics: ["The agent stays calm"]
          })
        )
        assert.strictEqual(simulation.type, "simulation")
        assert.match(simulation.test_case_definition_id, /^tcd_/)
        const ids = [...scriptedIds, simulation.test_case_definition_id]

        // each definition reads back through the SDK as created, the scripted ones with their svc fields
        const read = yield* Effect.forEach(scriptedIds, (id) => sdk(() => client.tests.getTestCaseDefinition(id)))
        read.forEach((definition, i) => {
          const fields = definition as unknown as Record<string, unknown>
          const sent = scripted[i]!
          assert.deepStrictEqual(Object.fromEntries(Object.keys(sent).map((k) => [k, fields[k]])), sent)
        })
        assert.deepStrictEqual(
          yield* sdk(() => client.tests.getTestCaseDefinition(simulation.test_case_definition_id)),
          simulation
        )
        // an update through the SDK (its params allow `name`): merged into the stored definition, assertions kept
        const renamed = yield* sdk(() =>
          client.tests.updateTestCaseDefinition(scriptedIds[1]!, { name: "refund request" })
        )
        assert.strictEqual(renamed.name, "refund request")
        assert.deepStrictEqual((renamed as unknown as { assertions: unknown }).assertions, scripted[1]!.assertions)
        const listed = yield* sdk(() =>
          client.tests.listTestCaseDefinitions({ type: "svc-llm" as never, llm_id: "llm_sdk" })
        )
        assert.deepStrictEqual(listed.items.map((d) => d.test_case_definition_id), [simulation.test_case_definition_id])
        assert.strictEqual(listed.has_more, false)

        // the SDK's create-batch-test can only name the engines svc does not run: a 400 naming the one it does
        const refused = yield* Effect.flip(sdk(() =>
          client.tests.createBatchTest({
            response_engine: { type: "svc-llm", llm_id: "llm_sdk" } as never,
            test_case_definition_ids: ids
          })
        ))
        assert.instanceOf(refused, Retell.BadRequestError)
        assert.include(
          (refused as InstanceType<typeof Retell.BadRequestError>).message,
          "batch tests run against custom-llm"
        )

        // raw HTTP: create-batch-test on the custom-LLM engine (see the file's comment)
        const batch = yield* post("POST", "/create-batch-test", {
          response_engine: engine,
          test_case_definition_ids: ids
        })
        assert.strictEqual(batch.status, 200, JSON.stringify(batch.body))
        const jobId = batch.body["test_case_batch_job_id"] as string

        const job = yield* sdk(() => client.tests.getBatchTest(jobId))
        assert.deepStrictEqual(
          [job.status, job.pass_count, job.fail_count, job.error_count, job.total_count],
          ["in_progress", 0, 0, 0, 3],
          "nothing runs before a scheduler does"
        )
        assert.deepStrictEqual(job.response_engine, engine)

        const scheduler = yield* startScheduler(db.url, "sdk-worker")
        let last: unknown
        yield* waitUntil(
          "get-batch-test to say complete",
          Effect.map(sdk(() => client.tests.getBatchTest(jobId)), (j) => {
            last = j
            return j.status === "complete"
          }),
          { timeoutMs: 120_000, everyMs: 100, state: () => ({ last, scheduler: scheduler.output() }) }
        )
        const done = yield* sdk(() => client.tests.getBatchTest(jobId))
        assert.deepStrictEqual(
          [done.status, done.pass_count, done.fail_count, done.error_count, done.total_count],
          ["complete", 1, 1, 1, 3]
        )
        assert.isAtLeast(done.user_modified_timestamp, job.creation_timestamp)

        // the runs, two pages through the SDK's pagination params, in the order of the definitions
        const first = yield* sdk(() => client.tests.listTestRuns(jobId, { limit: 2 }))
        assert.strictEqual(first.has_more, true)
        assert.isString(first.pagination_key)
        const second = yield* sdk(() =>
          client.tests.listTestRuns(jobId, { limit: 2, pagination_key: first.pagination_key! })
        )
        assert.strictEqual(second.has_more, false)
        const runs = [...first.items, ...second.items]
        assert.deepStrictEqual(runs.map((r) => r.test_case_definition_id), ids)
        assert.deepStrictEqual(runs.map((r) => r.status), ["pass", "fail", "error"])

        // each run's verdict, explanation, definition snapshot and transcript, read one by one
        const [passed, failed, errored] = yield* Effect.forEach(
          runs,
          (run) => sdk(() => client.tests.getTestRun(run.test_case_job_id))
        )
        assert.deepStrictEqual(
          [passed!, failed!, errored!].map((r) => [r.status, r.test_case_definition_snapshot.name]),
          [["pass", "order status"], ["fail", "refund request"], ["error", "angry caller"]]
        )
        assert.strictEqual(passed!.result_explanation, "all 3 assertions passed")
        // decision 0701: the failed assertion by index, with the reference server's reply (examples/custom-llm)
        assert.strictEqual(
          failed!.result_explanation,
          "assertions[0] contains \"refund approved\" (turn 1) failed: the reply " +
            "\"You said: I want a refund. Anything else?\" does not contain it"
        )
        assert.strictEqual(
          errored!.result_explanation,
          "simulation test cases need an OpenAI-compatible chat-completions endpoint: set SVC_TEST_LLM_URL " +
            "(with SVC_TEST_LLM_MODEL and SVC_TEST_LLM_API_KEY) on the scheduler, or use type: scripted"
        )
        const transcript = passed!.transcript_snapshot as Snapshot
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
        assert.deepStrictEqual((failed!.transcript_snapshot as Snapshot).transcript.map((u) => u.role), [
          "agent",
          "user",
          "agent"
        ])

        // a deleted definition: gone from the SDK's reads (404), while its run keeps the snapshot it ran with
        yield* sdk(() => client.tests.deleteTestCaseDefinition(simulation.test_case_definition_id))
        const gone = yield* Effect.flip(
          sdk(() => client.tests.getTestCaseDefinition(simulation.test_case_definition_id))
        )
        assert.instanceOf(gone, Retell.NotFoundError)
        const kept = yield* sdk(() => client.tests.getTestRun(errored!.test_case_job_id))
        assert.deepStrictEqual(kept.test_case_definition_snapshot, errored!.test_case_definition_snapshot)

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
})
