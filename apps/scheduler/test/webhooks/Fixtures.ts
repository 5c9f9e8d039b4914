/**
 * Builders for the webhook tests: an org with a signing secret, outbox events written as the trigger writes them,
 * and readers of their delivery state. Each test gets its own org.
 */
import { OrgId } from "@svc/domain/models/Ids.ts"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { WebhooksRepo } from "@svc/store/webhooks/WebhooksRepo.ts"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

export const WebhookStore = WebhooksRepo.layer.pipe(Layer.provideMerge(TestDatabase.layer))

let orgs = 0

/** A fresh org; with a secret (created at time 0, so it signs at once) unless `secret: false`. */
export const seedOrg = (options: { readonly secret?: boolean } = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const orgId = OrgId.make(`org_hooks_${process.pid}_${++orgs}_${Math.random().toString(36).slice(2, 6)}`)
    yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, 'webhook test', 0)`
    const secret = options.secret === false ? undefined : yield* Effect.flatMap(
      WebhooksRepo,
      (repo) => repo.createSecret(orgId, 0, 0)
    ).pipe(Effect.orDie)
    return { orgId, secret }
  })

let events = 0

/** An outbox row, as the trigger on calls writes one; returns its event id. */
export const enqueue = (
  orgId: string,
  callId: string,
  event: "call_started" | "call_ended" | "call_analyzed",
  url: string,
  options: { readonly timeoutMs?: number } = {}
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const eventId = `evt_test_${process.pid}_${++events}`
    const body = JSON.stringify({ event, call: { call_id: callId, call_status: "ended" } })
    yield* sql`
      INSERT INTO webhook_events (event_id, org_id, call_id, event, url, timeout_ms, body)
      VALUES (${eventId}, ${orgId}, ${callId}, ${event}, ${url}, ${options.timeoutMs ?? 10_000}, ${body})`
    return eventId
  })

/** Many events in one statement (calls `call_<i>`, one call_ended each). */
export const enqueueMany = (orgId: string, url: string, count: number, options: { readonly timeoutMs?: number } = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO webhook_events (event_id, org_id, call_id, event, url, timeout_ms, body)
      SELECT ${orgId} || '_evt_' || i, ${orgId}, 'call_' || i, 'call_ended', ${url}, ${options.timeoutMs ?? 10_000},
             jsonb_build_object('event', 'call_ended', 'call', jsonb_build_object('call_id', 'call_' || i))::text
      FROM generate_series(1, ${count}) AS i`
  })

/** The delivery state of an event. */
export const eventRow = (eventId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{
      state: string
      attempts: number
      due_at: number
      last_status: number | null
      last_error: string | null
      history: Array<{ at: number; status?: number; error?: string; ms: number }>
    }>`
      SELECT state, attempts, due_at::float8 AS due_at, last_status, last_error, history
      FROM webhook_events WHERE event_id = ${eventId}`
    return row!
  })

/** Events per state of an org. */
export const stateCounts = (orgId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ state: string; n: number }>`
      SELECT state, count(*)::int AS n FROM webhook_events WHERE org_id = ${orgId} GROUP BY state`
    return Object.fromEntries(rows.map((r) => [r.state, r.n])) as Record<string, number>
  })
