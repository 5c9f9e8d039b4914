// The webhook outbox of migration 0013: the trigger on calls writes the events of each call change in the change's
// own statement, to the target the task's override, the agent or the org names, filtered by its events.
import { assert, layer } from "@effect/vitest"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { WebhooksRepo } from "../../src/webhooks/WebhooksRepo.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const Layers = WebhooksRepo.layer.pipe(Layer.provideMerge(TestDatabase.layer))
let serial = 0

/** An org with agent_a v1 (optionally with its own URL) and a default webhook unless `orgUrl: null`. */
const org = (
  options: { readonly orgUrl?: string | null; readonly events?: Array<string>; readonly agentUrl?: string } = {}
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* WebhooksRepo
    const orgId = OrgId.make(`org_outbox_${++serial}`)
    yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, 'o', 0)`
    yield* sql`INSERT INTO agents (org_id, agent_id, version, created_timestamp) VALUES (${orgId}, 'agent_a', 1, 0)`
    if (options.orgUrl !== null) {
      yield* repo.setOrgWebhook(orgId, options.orgUrl ?? "https://org.example/hook", options.events, 0)
    }
    if (options.agentUrl !== undefined) yield* repo.setAgentWebhook(orgId, "agent_a", 1, options.agentUrl)
    return orgId
  })

/** A task (with an agent_override) and its registered call; returns the call id. */
const registered = (orgId: OrgId, agentOverride?: unknown) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const k = ++serial
    const [task] = yield* sql<{ task_id: string }>`
      INSERT INTO batch_call_tasks (org_id, batch_call_id, task_index, to_number, override_agent_id, agent_override)
      VALUES (${orgId}, ${`batch_${k}`}, 0, '+14155550111', 'agent_a',
        ${agentOverride === undefined ? null : JSON.stringify(agentOverride)}::jsonb)
      RETURNING task_id::text`
    const callId = `call_outbox_${k}`
    yield* sql`
      INSERT INTO calls (org_id, call_id, task_id, batch_call_id, from_number, to_number, agent_id, agent_version,
        call_status, recorded_timestamp)
      VALUES (${orgId}, ${callId}, ${task!.task_id}::int8, ${`batch_${k}`}, '+14155550100', '+14155550111',
        'agent_a', 1, 'registered', 0)`
    return callId
  })

const finish = (callId: string, status: string, analysis: Record<string, unknown> = { call_summary: "ok" }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      UPDATE calls SET call_status = ${status}, outcome = 'answered', disconnection_reason = 'agent_hangup',
        start_timestamp = 1000, end_timestamp = 5000, duration_ms = 4000, analysis = ${JSON.stringify(analysis)}::jsonb
      WHERE call_id = ${callId}`)

const events = (callId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ event: string; url: string; timeout_ms: number; body: string; event_id: string }>`
      SELECT event, url, timeout_ms, body, event_id FROM webhook_events WHERE call_id = ${callId} ORDER BY event_seq`
  )

layer(Layers)("webhook outbox", (it) => {
  it.effect("a call that ends raises call_started, call_ended, call_analyzed, in that order, once", () =>
    Effect.gen(function*() {
      const orgId = yield* org()
      const callId = yield* registered(orgId)
      assert.deepStrictEqual(yield* events(callId), [])
      yield* finish(callId, "ended")
      const rows = yield* events(callId)
      assert.deepStrictEqual(rows.map((r) => r.event), ["call_started", "call_ended", "call_analyzed"])
      const [started, ended, analyzed] = rows.map((r) => JSON.parse(r.body))
      assert.strictEqual(ended.event, "call_ended")
      assert.strictEqual(ended.call.call_id, callId)
      assert.strictEqual(ended.call.call_status, "ended")
      // vendor: call_ended has no call_analysis, call_analyzed has it
      assert.isUndefined(ended.call.call_analysis)
      assert.isUndefined(started.call.call_analysis)
      assert.strictEqual(analyzed.call.call_analysis.call_summary, "ok")
      assert.strictEqual(new Set(rows.map((r) => r.event_id)).size, 3)
      assert.isTrue(rows.every((r) => r.url === "https://org.example/hook" && r.timeout_ms === 10_000))
      // later updates of a finished call (metadata) raise nothing more
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE calls SET metadata = '{"a":1}' WHERE call_id = ${callId}`
      yield* finish(callId, "ended")
      assert.strictEqual((yield* events(callId)).length, 3)
    }))

  it.effect("an ongoing call raises call_started then; its end raises no second one", () =>
    Effect.gen(function*() {
      const orgId = yield* org()
      const callId = yield* registered(orgId)
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE calls SET call_status = 'ongoing', start_timestamp = 1000 WHERE call_id = ${callId}`
      assert.deepStrictEqual((yield* events(callId)).map((r) => r.event), ["call_started"])
      yield* finish(callId, "ended")
      assert.deepStrictEqual((yield* events(callId)).map((r) => r.event), [
        "call_started",
        "call_ended",
        "call_analyzed"
      ])
    }))

  it.effect("a call that never connected raises call_ended and call_analyzed, no call_started", () =>
    Effect.gen(function*() {
      const orgId = yield* org()
      const callId = yield* registered(orgId)
      yield* finish(callId, "not_connected", {})
      assert.deepStrictEqual((yield* events(callId)).map((r) => r.event), ["call_ended", "call_analyzed"])
    }))

  it.effect("the org's webhook_events filter the events", () =>
    Effect.gen(function*() {
      const orgId = yield* org({ events: ["call_ended"] })
      const callId = yield* registered(orgId)
      yield* finish(callId, "ended")
      assert.deepStrictEqual((yield* events(callId)).map((r) => r.event), ["call_ended"])
    }))

  it.effect("the task's agent_override wins over the agent, which wins over the org", () =>
    Effect.gen(function*() {
      const orgId = yield* org({ agentUrl: "https://agent.example/hook" })
      const byAgent = yield* registered(orgId)
      const byOverride = yield* registered(orgId, {
        agent: { webhook_url: "https://task.example/hook", webhook_events: ["call_analyzed"], webhook_timeout_ms: 2500 }
      })
      // an explicit null removes the agent's URL for that call: the org's default applies
      const nulled = yield* registered(orgId, { agent: { webhook_url: null } })
      // only a timeout in the override: the agent's URL, the override's timeout
      const timeoutOnly = yield* registered(orgId, { agent: { webhook_timeout_ms: 700 } })
      for (const id of [byAgent, byOverride, nulled, timeoutOnly]) yield* finish(id, "ended")
      assert.deepStrictEqual(
        [...new Set((yield* events(byAgent)).map((r) => r.url))],
        ["https://agent.example/hook"]
      )
      const task = yield* events(byOverride)
      assert.deepStrictEqual(task.map((r) => [r.event, r.url, r.timeout_ms]), [[
        "call_analyzed",
        "https://task.example/hook",
        2500
      ]])
      assert.deepStrictEqual([...new Set((yield* events(nulled)).map((r) => r.url))], ["https://org.example/hook"])
      assert.deepStrictEqual(
        [...new Set((yield* events(timeoutOnly)).map((r) => `${r.url} ${r.timeout_ms}`))],
        ["https://agent.example/hook 700"]
      )
    }))

  it.effect("no target anywhere: no rows; a task override alone is enough to raise them", () =>
    Effect.gen(function*() {
      const orgId = yield* org({ orgUrl: null })
      const none = yield* registered(orgId)
      const byTask = yield* registered(orgId, { agent: { webhook_url: "https://task.example/hook" } })
      yield* finish(none, "ended")
      yield* finish(byTask, "error")
      assert.deepStrictEqual(yield* events(none), [])
      assert.deepStrictEqual((yield* events(byTask)).map((r) => r.event), ["call_ended", "call_analyzed"])
    }))

  it.effect("a statement that finishes many calls of several orgs writes each org's events only", () =>
    Effect.gen(function*() {
      const withHooks = yield* org()
      const without = yield* org({ orgUrl: null })
      const a = [yield* registered(withHooks), yield* registered(withHooks)]
      const b = [yield* registered(without), yield* registered(without)]
      const sql = yield* SqlClient.SqlClient
      yield* sql`
        UPDATE calls SET call_status = 'ended', outcome = 'answered', disconnection_reason = 'agent_hangup',
          start_timestamp = 1, end_timestamp = 2, duration_ms = 1
        WHERE call_id IN (${a[0]!}, ${a[1]!}, ${b[0]!}, ${b[1]!})`
      for (const id of a) assert.strictEqual((yield* events(id)).length, 3)
      for (const id of b) assert.strictEqual((yield* events(id)).length, 0)
    }))

  it.effect("set-webhook rejects a bad URL or an unknown event, naming it", () =>
    Effect.gen(function*() {
      const orgId = yield* org({ orgUrl: null })
      const repo = yield* WebhooksRepo
      const bad = yield* Effect.flip(repo.setOrgWebhook(orgId, "ftp://x.example", undefined, 0))
      assert.match(bad.message, /must use http or https/)
      const event = yield* Effect.flip(repo.setOrgWebhook(orgId, "https://x.example", ["call_ended", "nope"], 0))
      assert.match(event.message, /"nope" is not one of call_started, call_ended, call_analyzed/)
      const missing = yield* Effect.flip(repo.setOrgWebhook(OrgId.make("org_none"), "https://x.example", undefined, 0))
      assert.strictEqual(missing._tag, "OrgNotFound")
    }))
})
