// create-batch-call's refusals over raw HTTP on a real PostgreSQL: an `Idempotency-Key` that is not a key, and more
// tasks than a batch holds. Expectations from the contract: the spec's create-batch-call answers only 400, 401, 404
// and 500 (so a refused request is a 400, never 409/413/422/429) in the error shape `{status: "error", message}`;
// design.md: "a configurable maximum per batch (default 100,000)" (SVC_MAX_TASKS_PER_BATCH, docs/operations.md);
// docs/api.md ("Size and retries of create-batch-call"): the key is 1 to 255 visible ASCII characters (Stripe's 255,
// reference/feature-anchors.md). A refused request stores nothing.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as TestServer from "../support/TestServer.ts"

const MAX_TASKS = 3

let server: TestServer.TestServer
let org: { orgId: string; key: string }

beforeAll(async () => {
  server = await TestServer.start({ SVC_MAX_TASKS_PER_BATCH: String(MAX_TASKS) })
  org = await server.org("limits")
  await server.run(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) =>
        sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${org.orgId}, '+14155550100', 0)`
    )
  )
})
afterAll(() => server.close())

let names = 0
const batch = (tasks: number) => ({
  from_number: "+14155550100",
  name: `limits ${++names}`,
  trigger_timestamp: 4_000_000_000_000,
  tasks: Array.from({ length: tasks }, (_, i) => ({ to_number: `+1415555${String(1000 + i).padStart(4, "0")}` }))
})

const stored = () =>
  server.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ batches: number; tasks: number }>`
        SELECT (SELECT count(*)::int FROM batch_calls WHERE org_id = ${org.orgId}) AS batches,
               (SELECT count(*)::int FROM batch_call_tasks WHERE org_id = ${org.orgId}) AS tasks`,
      (rows) => rows[0]!
    )))

const create = (tasks: number, headers: Record<string, string> = {}) =>
  server.request("POST", "/create-batch-call", { key: org.key, body: batch(tasks), headers })

/** A 400 in the spec's error shape whose message matches `message`, with nothing stored. */
const refused = async (response: TestServer.Response, message: RegExp, before: unknown) => {
  assert.strictEqual(response.status, 400, response.text)
  assert.deepStrictEqual(Object.keys(response.json as object).sort(), ["message", "status"])
  assert.strictEqual((response.json as { status: string }).status, "error")
  assert.match((response.json as { message: string }).message, message)
  assert.deepStrictEqual(await stored(), before, "a refused create-batch-call stored nothing")
}

describe("POST /create-batch-call: Idempotency-Key format", () => {
  it("takes a key of 255 visible ASCII characters", async () => {
    const key = Array.from({ length: 255 }, (_, i) => String.fromCharCode(0x21 + (i % 94))).join("")
    const response = await create(1, { "idempotency-key": key })
    assert.strictEqual(response.status, 200, response.text)
    // and honours it: the same key and body again returns the same batch
    const again = await server.request("POST", "/create-batch-call", {
      key: org.key,
      body: { ...batch(1), name: (response.json as { name: string }).name },
      headers: { "idempotency-key": key }
    })
    assert.strictEqual(
      (again.json as { batch_call_id: string }).batch_call_id,
      (response.json as { batch_call_id: string }).batch_call_id
    )
  })

  for (
    const [what, key] of [
      ["256 characters", "k".repeat(256)],
      ["a space inside", "order 42"],
      ["a character beyond ASCII (é, sent as its Latin-1 byte)", "commande-\u00e9"],
      ["a control character (DEL)", "key\u007f1"],
      ["an empty value", ""]
    ] as const
  ) {
    it(`refuses a key with ${what}: 400 naming the header, nothing stored`, async () => {
      const before = await stored()
      await refused(await create(1, { "idempotency-key": key }), /Idempotency-Key/, before)
    })
  }
})

describe("POST /create-batch-call: tasks per batch", () => {
  it(`takes ${MAX_TASKS} tasks (SVC_MAX_TASKS_PER_BATCH=${MAX_TASKS})`, async () => {
    const response = await create(MAX_TASKS)
    assert.strictEqual(response.status, 200, response.text)
    assert.strictEqual((response.json as { total_task_count: number }).total_task_count, MAX_TASKS)
  })

  it(`refuses ${MAX_TASKS + 1} tasks with 400 naming the maximum, nothing stored`, async () => {
    const before = await stored()
    await refused(await create(MAX_TASKS + 1), new RegExp(`tasks.*\\b${MAX_TASKS}\\b`), before)
  })

  it("refuses far more than the maximum the same way (the count is not needed to refuse)", async () => {
    const before = await stored()
    await refused(await create(50 * MAX_TASKS), new RegExp(`tasks.*\\b${MAX_TASKS}\\b`), before)
  })
})
