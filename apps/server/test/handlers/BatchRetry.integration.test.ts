// POST /retry-batch-call/{batch_call_id} over raw HTTP (issue 31 item 2, decision 0551; svc extension): the answer's
// shape, the default and the chosen outcomes, bad input as a 400 naming the field and the allowed values, another
// org's batch as a 404, a cancelled batch as a 409, all in the error shape, and the operation's mark in /openapi.json.
// The batch's calls are claimed and recorded through the scheduler's statements, so the tasks are as a worker leaves
// them.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { BatchCallId, type OrgId } from "@svc/domain/models/Ids.ts"
import type { CallEnded } from "@svc/domain/ports/Dialer.ts"
import { CallsRepo } from "@svc/store/calls/CallsRepo.ts"
import { DispatchRepo } from "@svc/store/dispatch/DispatchRepo.ts"
import { finishedFromCall } from "@svc/store/test-support/FinishedTasks.ts"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as TestServer from "../support/TestServer.ts"

let server: TestServer.TestServer
let a: { orgId: OrgId; key: string }
let b: { orgId: OrgId; key: string }

type Json = Record<string, unknown>

const FROM = "+14155550100"
// London numbers: no legal hours in play
const NUMBERS = ["+442071838750", "+442071838751", "+442071838752", "+442071838753"]
const ENDINGS: ReadonlyArray<Pick<CallEnded, "outcome" | "disconnection_reason">> = [
  { outcome: "no_answer", disconnection_reason: "dial_no_answer" },
  { outcome: "busy", disconnection_reason: "dial_busy" },
  { outcome: "answered", disconnection_reason: "voicemail_reached" },
  { outcome: "answered", disconnection_reason: "user_hangup" }
]

/** A batch of the four numbers, every task dialled once and ended as ENDINGS says. */
const dialledBatch = async () => {
  const created = await server.request("POST", "/create-batch-call", {
    key: a.key,
    body: { from_number: FROM, tasks: NUMBERS.map((n) => ({ to_number: n })) }
  })
  assert.strictEqual(created.status, 200, created.text)
  const batchCallId = BatchCallId.make(String((created.json as Json)["batch_call_id"]))
  await server.run(
    Effect.gen(function*() {
      const dispatch = yield* DispatchRepo
      const calls = yield* CallsRepo
      const now = 2_000_000_000_000
      const due = (yield* dispatch.findDue(now, 100)).due.filter((d) => d.batchCallId === batchCallId)
      const claimed =
        (yield* dispatch.claim(a.orgId, due, { owner: "w", now, leaseMs: 60_000, maxPerBatch: 10 })).claimed
      assert.strictEqual(claimed.length, 4)
      yield* calls.recordFinished(
        claimed.map((task) =>
          finishedFromCall({
            taskId: task.taskId,
            orgId: task.orgId,
            batchCallId: task.batchCallId,
            fromNumber: FROM,
            toNumber: task.request.to_number
          }, {
            _tag: "CallEnded",
            idempotency_key: task.request.idempotency_key,
            call_id: task.request.call_id,
            start_timestamp: now,
            end_timestamp: now + 1_000,
            duration_ms: 1_000,
            analysis: {},
            ...ENDINGS[task.taskIndex]!
          })
        ),
        now + 1_000
      )
      assert.deepStrictEqual(yield* dispatch.completeIfDone([batchCallId]), [batchCallId])
    }).pipe(Effect.provide(Layer.mergeAll(DispatchRepo.layer, CallsRepo.layer)))
  )
  return batchCallId
}

const retry = (batchCallId: string, options: TestServer.RequestOptions = {}) =>
  server.request("POST", `/retry-batch-call/${batchCallId}`, { key: a.key, ...options })

beforeAll(async () => {
  server = await TestServer.start()
  a = await server.org("A")
  b = await server.org("B")
  await server.run(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${a.orgId}, ${FROM}, 0)`
    )
  )
})
afterAll(() => server.close())

describe("POST /retry-batch-call/{batch_call_id}", () => {
  it("refuses bad input with a 400 naming the field and the allowed values; nothing is re-queued", async () => {
    const batchCallId = await dialledBatch()
    const allowed = /"no_answer", "busy", "voicemail", "failed"/
    for (
      const [raw, pattern] of [
        ["{\"outcomes\":[\"nope\"]}", /outcomes\[0\]/],
        ["{\"outcomes\":[\"busy\",\"answered\"]}", /outcomes\[1\]/],
        ["{\"outcomes\":\"busy\"}", /outcomes/],
        ["{\"outcomes\":[]}", /outcomes.*at least one/s],
        ["{\"outcome\":[\"busy\"]}", /outcome/],
        ["[1]", /object/]
      ] as const
    ) {
      const response = await retry(batchCallId, { raw })
      assert.strictEqual(response.status, 400, `${raw}: ${response.text}`)
      assert.deepStrictEqual(Object.keys(response.json as Json).sort(), ["message", "status"])
      assert.strictEqual((response.json as Json)["status"], "error")
      assert.match(String((response.json as Json)["message"]), pattern, raw)
      if (raw.includes("nope") || raw.includes("answered")) {
        assert.match(String((response.json as Json)["message"]), allowed, raw)
      }
    }
    const read = await server.request("GET", `/get-batch-call/${batchCallId}`, { key: a.key })
    assert.strictEqual((read.json as Json)["status"], "completed")
  })

  it("answers 404 for another org's batch and an unknown id, in the error shape", async () => {
    const batchCallId = await dialledBatch()
    const foreign = await server.request("POST", `/retry-batch-call/${batchCallId}`, { key: b.key })
    assert.strictEqual(foreign.status, 404)
    assert.deepStrictEqual(foreign.json, { status: "error", message: `batch call ${batchCallId} not found` })
    const unknown = await retry("batch_call_nope")
    assert.strictEqual(unknown.status, 404)
    assert.strictEqual((await retry(batchCallId, { key: null })).status, 401)
    const read = await server.request("GET", `/get-batch-call/${batchCallId}`, { key: a.key })
    assert.deepInclude((read.json as Json)["tasks"] as Json, { pending: 0, completed: 4 })
  })

  it("with no body re-queues the unanswered, busy and voicemail tasks and re-opens the batch", async () => {
    const batchCallId = await dialledBatch()
    const response = await retry(batchCallId)
    assert.strictEqual(response.status, 200, response.text)
    const body = response.json as Json
    assert.deepInclude(body, {
      batch_call_id: batchCallId,
      outcomes: ["no_answer", "busy", "voicemail", "failed"],
      requeued_task_count: 3,
      not_requeued: { suppressed: 0, do_not_call: 0, attempt_cap: 0 }
    })
    const batch = body["batch"] as Json
    assert.strictEqual(batch["status"], "in_progress")
    assert.deepInclude(batch["tasks"] as Json, { pending: 3, completed: 1 })
    assert.isNull(batch["completed_timestamp"])
    // the same as get-batch-call answers
    const read = await server.request("GET", `/get-batch-call/${batchCallId}`, { key: a.key })
    assert.deepInclude(read.json as Json, { status: "in_progress", tasks: batch["tasks"] })
    // the tasks wait for their second call
    const tasks = await server.request("POST", `/list-batch-call-tasks/${batchCallId}`, { key: a.key, body: {} })
    assert.deepStrictEqual(
      ((tasks.json as Json)["items"] as Array<Json>).map((t) => [t["state"], t["state_reason"]]),
      [
        ["pending", "retry requested: no_answer, call 2 of 11"],
        ["pending", "retry requested: busy, call 2 of 11"],
        ["pending", "retry requested: voicemail, call 2 of 11"],
        ["completed", "answered"]
      ]
    )
  })

  it("re-queues only the outcomes asked for; null and {} mean all of them", async () => {
    const batchCallId = await dialledBatch()
    const busy = await retry(batchCallId, { body: { outcomes: ["busy", "busy"] } })
    assert.strictEqual(busy.status, 200, busy.text)
    assert.deepInclude(busy.json as Json, { outcomes: ["busy"], requeued_task_count: 1 })
    const none = await retry(batchCallId, { body: { outcomes: ["failed"] } })
    assert.deepInclude(none.json as Json, { requeued_task_count: 0 })
    const rest = await retry(batchCallId, { raw: "null" })
    assert.strictEqual(rest.status, 200, rest.text)
    assert.deepInclude(rest.json as Json, { requeued_task_count: 2 })
    assert.deepInclude((await retry(batchCallId, { body: {} })).json as Json, { requeued_task_count: 0 })
  })

  it("answers 409 in the error shape for a cancelled batch", async () => {
    const created = await server.request("POST", "/create-batch-call", {
      key: a.key,
      body: { from_number: FROM, trigger_timestamp: 4_000_000_000_000, tasks: [{ to_number: NUMBERS[0] }] }
    })
    const batchCallId = String((created.json as Json)["batch_call_id"])
    assert.strictEqual((await server.request("POST", `/cancel-batch-call/${batchCallId}`, { key: a.key })).status, 200)
    const response = await retry(batchCallId)
    assert.strictEqual(response.status, 409)
    assert.deepStrictEqual(Object.keys(response.json as Json).sort(), ["message", "status"])
    assert.strictEqual((response.json as Json)["status"], "error")
    assert.match(String((response.json as Json)["message"]), new RegExp(`batch call ${batchCallId} is cancelled`))
  })
})

describe("OpenAPI", () => {
  it("lists retry-batch-call marked x-svc-extension, with its body and answer", async () => {
    const doc = (await server.request("GET", "/openapi.json", { key: null })).json as {
      paths: Record<string, Record<string, Json>>
    }
    const operation = doc.paths["/retry-batch-call/{batch_call_id}"]?.["post"]
    assert.isDefined(operation)
    assert.strictEqual(operation!["x-svc-extension"], true)
    assert.include(JSON.stringify(operation!["requestBody"]), "RetryBatchCallRequest")
    assert.include(Object.keys(operation!["responses"] as Json), "409")
  })
})
