/**
 * Webhooks in PostgreSQL (decisions 0520-0524; migration 0013 has the tables and the outbox trigger): the org's and
 * agents' targets, the signing secrets, and the outbox the scheduler's workers deliver from.
 *
 * Invariants of the outbox:
 * - An event is held by one worker at a time: a claim moves its `due_at` past the attempt's timeout under a row lock
 *   (`FOR UPDATE SKIP LOCKED`, re-checked after the lock), so no other worker finds it due until the attempt is over
 *   or its worker is dead (then it is due again: at least once).
 * - Ordered per call: an event is claimed only when no earlier event of its call is still pending.
 * - Fair: each claim takes at most `perOrg` events of one org, starting after the org the previous claim started
 *   from, and skips the orgs the worker says are busy; so a dead endpoint's backlog takes at most its share.
 * - A result is written only by the lease's holder (`lease_owner`); a late result of an expired lease is dropped
 *   (the event was, or will be, delivered again: at least once, de-duplicated by event id).
 */
import type { CallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import * as crypto from "node:crypto"
import { OrgNotFound } from "../orgs/index.ts"

/** The events a target may ask for (vendor facts §2.3; the ones svc raises). @category models */
export const EVENTS = ["call_started", "call_ended", "call_analyzed"] as const

/** @category models */
export type WebhookEventName = typeof EVENTS[number]

/** @category errors */
export class InvalidWebhookSetting extends Schema.TaggedError<InvalidWebhookSetting>()("InvalidWebhookSetting", {
  message: Schema.String
}) {}

/** An event a worker holds for one attempt. @category models */
export interface ClaimedEvent {
  readonly eventSeq: string
  readonly eventId: string
  /** Branded as the outbox row is read: the trigger wrote the call's own org. */
  readonly orgId: OrgId
  readonly callId: CallId
  readonly event: string
  readonly url: string
  readonly timeoutMs: number
  readonly body: string
  /** This attempt's number, from 1. */
  readonly attempts: number
  /** Worker clock (ms) of the first attempt: the 24 h budget runs from it. */
  readonly firstAttemptAt: number
  /** The secret that signs `x-svc-signature`; undefined when the org has none yet. */
  readonly secret: string | undefined
  /** A newer secret in its grace period (signs `x-svc-signature-next`). */
  readonly nextSecret: string | undefined
}

/** One attempt's result. @category models */
export interface AttemptResult {
  readonly eventSeq: string
  /** `pending` = retry at `dueAt`. */
  readonly state: "pending" | "delivered" | "gone" | "failed"
  readonly dueAt: number
  readonly status: number | undefined
  readonly error: string | undefined
  readonly millis: number
}

/** A row of `admin webhook-deliveries`. @category models */
export interface Delivery {
  readonly event_id: string
  readonly call_id: string
  readonly event: string
  readonly url: string
  readonly state: string
  readonly attempts: number
  readonly last_status: number | null
  readonly last_error: string | null
  /** Worker clock, ms; null once finished. */
  readonly next_retry_timestamp: number | null
  readonly finished_timestamp: number | null
  readonly history: ReadonlyArray<unknown>
}

/** @category models */
export interface QueueStats {
  readonly pending: number
  /** Seconds since the oldest pending event was written (database clock); 0 when none. */
  readonly oldestAgeSeconds: number
}

/** @category models */
export interface ClaimOptions {
  readonly owner: string
  readonly now: number
  readonly limit: number
  readonly perOrg: number
  /** Attempts this worker has in flight per org: an org gets at most `perOrg` minus its count. */
  readonly inFlight: ReadonlyMap<string, number>
  /** Start the round after this org (the previous claim's first); "" = from the start. */
  readonly after: string
  /** Added to an attempt's timeout for its lease. */
  readonly leaseMarginMs: number
}

/** `http:` or `https:` with a host, no credentials: what a target may be. @category constructors */
export const checkUrl = (url: string): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return `webhook url "${url}" is not an absolute URL`
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return `webhook url "${url}" must use http or https`
  }
  if (parsed.username !== "" || parsed.password !== "") return `webhook url "${url}" must not contain credentials`
  return undefined
}

/** The events list, checked against EVENTS. @category constructors */
export const checkEvents = (events: ReadonlyArray<string>): string | undefined => {
  if (events.length === 0) return "webhook events must name at least one event"
  const unknown = events.find((e) => !(EVENTS as ReadonlyArray<string>).includes(e))
  return unknown === undefined ? undefined : `webhook event "${unknown}" is not one of ${EVENTS.join(", ")}`
}

const HISTORY = 10

/** A column array as a bind parameter: an array of only NULLs cannot be typed, so it is bound empty (unnest pads it). */
const column = <A>(values: Array<A | null>): Array<A | null> => values.some((v) => v !== null) ? values : []

/**
 * @category services
 */
export class WebhooksRepo extends Context.Service<WebhooksRepo, {
  /** The org's default target; `events` undefined = the default three. */
  readonly setOrgWebhook: (
    orgId: OrgId,
    url: string,
    events: ReadonlyArray<string> | undefined,
    now: number
  ) => Effect.Effect<
    { readonly webhook_url: string; readonly webhook_events: ReadonlyArray<string> },
    OrgNotFound | InvalidWebhookSetting
  >
  /** The agent version's own URL (the org is put on the outbox trigger's list). */
  readonly setAgentWebhook: (
    orgId: OrgId,
    agentId: string,
    version: number,
    url: string
  ) => Effect.Effect<void, InvalidWebhookSetting>
  /** A new signing secret, returned once; it signs from `now + graceMs`, at once when the org had none. */
  readonly createSecret: (orgId: OrgId, graceMs: number, now: number) => Effect.Effect<string, OrgNotFound>
  readonly claim: (options: ClaimOptions) => Effect.Effect<ReadonlyArray<ClaimedEvent>>
  /** Writes attempts' results; returns how many the caller still held. */
  readonly complete: (owner: string, now: number, results: ReadonlyArray<AttemptResult>) => Effect.Effect<number>
  readonly deliveries: (
    orgId: OrgId,
    callId: CallId | undefined,
    limit: number
  ) => Effect.Effect<ReadonlyArray<Delivery>>
  readonly stats: Effect.Effect<QueueStats>
  /**
   * Deletes up to `limit` finished events enqueued and finished more than `retentionMs` before `now`, and every
   * org's signing secrets older than its current one at `now` (they sign nothing any more); returns how many went.
   */
  readonly prune: (
    now: number,
    retentionMs: number,
    limit: number
  ) => Effect.Effect<{ readonly events: number; readonly secrets: number }>
}>()("@svc/store/WebhooksRepo") {
  /** @category layers */
  static readonly layer: Layer.Layer<WebhooksRepo, never, SqlClient.SqlClient> = Layer.effect(
    WebhooksRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const requireOrg = (orgId: OrgId) =>
        Effect.flatMap(
          sql`SELECT 1 FROM orgs WHERE org_id = ${orgId}`,
          (rows) => rows.length > 0 ? Effect.void : Effect.fail(new OrgNotFound({ orgId, message: `no org ${orgId}` }))
        )

      const setOrgWebhook = (orgId: OrgId, url: string, events: ReadonlyArray<string> | undefined, now: number) =>
        Effect.gen(function*() {
          const bad = checkUrl(url) ?? (events === undefined ? undefined : checkEvents(events))
          if (bad !== undefined) return yield* new InvalidWebhookSetting({ message: bad })
          yield* requireOrg(orgId)
          const unique = events === undefined ? null : [...new Set(events)]
          yield* sql.withTransaction(Effect.andThen(
            sql`
              INSERT INTO webhook_settings (org_id, webhook_url, webhook_events, updated_timestamp)
              VALUES (${orgId}, ${url}, ${unique}::text[], ${now})
              ON CONFLICT (org_id) DO UPDATE
                SET webhook_url = EXCLUDED.webhook_url, webhook_events = EXCLUDED.webhook_events,
                    updated_timestamp = EXCLUDED.updated_timestamp`,
            sql`INSERT INTO webhook_orgs (org_id) VALUES (${orgId}) ON CONFLICT DO NOTHING`
          ))
          return { webhook_url: url, webhook_events: unique ?? [...EVENTS] }
        }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("WebhooksRepo.setOrgWebhook"))

      const setAgentWebhook = (orgId: OrgId, agentId: string, version: number, url: string) =>
        Effect.gen(function*() {
          const bad = checkUrl(url)
          if (bad !== undefined) return yield* new InvalidWebhookSetting({ message: bad })
          yield* sql.withTransaction(Effect.andThen(
            sql`UPDATE agents SET webhook_url = ${url}
                WHERE org_id = ${orgId} AND agent_id = ${agentId} AND version = ${version}`,
            sql`INSERT INTO webhook_orgs (org_id) VALUES (${orgId}) ON CONFLICT DO NOTHING`
          ))
        }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("WebhooksRepo.setAgentWebhook"))

      const createSecret = (orgId: OrgId, graceMs: number, now: number) =>
        Effect.gen(function*() {
          yield* requireOrg(orgId)
          // 32 random bytes: as strong as an API key (the vendor signs with the API key itself)
          const secret = `whsec_${crypto.randomBytes(32).toString("base64url")}`
          yield* sql`
            INSERT INTO webhook_secrets (org_id, secret, created_timestamp, active_from)
            SELECT ${orgId}, ${secret}, ${now},
                   CASE WHEN EXISTS (SELECT 1 FROM webhook_secrets WHERE org_id = ${orgId})
                        THEN ${now + Math.max(0, graceMs)}::int8 ELSE ${now}::int8 END`
          return secret
        }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("WebhooksRepo.createSecret"))

      const claim = (o: ClaimOptions) =>
        sql<{
          event_seq: string
          event_id: string
          org_id: OrgId
          call_id: CallId
          event: string
          url: string
          timeout_ms: number
          body: string
          attempts: number
          first_attempt_at: string
          secret: string | null
          next_secret: string | null
        }>`
          WITH RECURSIVE orgs(org_id) AS (
            (SELECT org_id FROM webhook_events WHERE state = 'pending' ORDER BY org_id LIMIT 1)
            UNION ALL
            SELECT (SELECT e.org_id FROM webhook_events e
                    WHERE e.state = 'pending' AND e.org_id > orgs.org_id ORDER BY e.org_id LIMIT 1)
            FROM orgs WHERE orgs.org_id IS NOT NULL
          ), busy AS (
            SELECT * FROM unnest(${[...o.inFlight.keys()]}::text[], ${
          [...o.inFlight.values()].map(String)
        }::text[]::int4[]) AS b(org_id, n)
          ), picked AS (
            SELECT c.event_seq FROM (
              SELECT orgs.org_id, ${o.perOrg} - COALESCE(busy.n, 0) AS room FROM orgs
              LEFT JOIN busy ON busy.org_id = orgs.org_id
              WHERE orgs.org_id IS NOT NULL AND ${o.perOrg} - COALESCE(busy.n, 0) > 0
              ORDER BY (orgs.org_id <= ${o.after}), orgs.org_id
            ) g
            CROSS JOIN LATERAL (
              SELECT e.event_seq FROM webhook_events e
              WHERE e.org_id = g.org_id AND e.state = 'pending' AND e.due_at <= ${o.now}
                -- a per-row probe of webhook_events_pending_call (migration 0013 says why it is written so: the
                -- org is compared in a form no index serves, OFFSET 0 keeps it from becoming an anti join)
                AND NOT EXISTS (
                  SELECT 1 FROM webhook_events p
                  WHERE p.call_id = e.call_id AND p.event_seq < e.event_seq AND p.state = 'pending'
                    AND (p.org_id || '') = e.org_id
                  OFFSET 0)
              ORDER BY e.due_at LIMIT g.room
            ) c
            LIMIT ${o.limit}
          ), locked AS (
            -- the few picked rows by primary key; the re-checks (after the lock) are written so that no other index
            -- matches them: with stale statistics the planner once scanned webhook_events_due for them instead
            SELECT e.event_seq FROM webhook_events e
            WHERE e.event_seq = ANY(ARRAY(SELECT event_seq FROM picked))
              AND (e.state || '') = 'pending' AND (e.due_at + 0) <= ${o.now}
            FOR UPDATE SKIP LOCKED
          )
          UPDATE webhook_events e
          SET due_at = ${o.now} + e.timeout_ms + ${o.leaseMarginMs}, attempts = e.attempts + 1,
              lease_owner = ${o.owner}, first_attempt_at = COALESCE(e.first_attempt_at, ${o.now})
          WHERE e.event_seq = ANY(ARRAY(SELECT event_seq FROM locked))
          RETURNING e.event_seq::text, e.event_id, e.org_id, e.call_id, e.event, e.url, e.timeout_ms, e.body,
                    e.attempts, e.first_attempt_at::text,
                    (SELECT s.secret FROM webhook_secrets s WHERE s.org_id = e.org_id AND s.active_from <= ${o.now}
                     ORDER BY s.active_from DESC, s.secret_id DESC LIMIT 1) AS secret,
                    (SELECT s.secret FROM webhook_secrets s WHERE s.org_id = e.org_id AND s.active_from > ${o.now}
                     ORDER BY s.active_from DESC, s.secret_id DESC LIMIT 1) AS next_secret`.pipe(
          Effect.map((rows) =>
            rows
              .map((r): ClaimedEvent => ({
                eventSeq: r.event_seq,
                eventId: r.event_id,
                orgId: r.org_id,
                callId: r.call_id,
                event: r.event,
                url: r.url,
                timeoutMs: r.timeout_ms,
                body: r.body,
                attempts: r.attempts,
                firstAttemptAt: Number(r.first_attempt_at),
                secret: r.secret ?? undefined,
                nextSecret: r.next_secret ?? undefined
              }))
              // RETURNING has no order; a call's events are claimed one at a time anyway
              .sort((a, b) => Number(a.eventSeq) - Number(b.eventSeq))
          ),
          Effect.orDie,
          Effect.withSpan("WebhooksRepo.claim")
        )

      const complete = (owner: string, now: number, results: ReadonlyArray<AttemptResult>) =>
        results.length === 0 ? Effect.succeed(0) : sql<{ n: string }>`
          WITH done AS (
            UPDATE webhook_events e
            SET state = r.state, due_at = r.due_at, lease_owner = NULL,
                last_status = r.status, last_error = r.error,
                finished_at = CASE WHEN r.state = 'pending' THEN NULL ELSE ${now}::int8 END,
                -- the newest HISTORY attempts: drop the oldest when full, append this one
                history = CASE WHEN jsonb_array_length(e.history) >= ${HISTORY} THEN e.history - 0 ELSE e.history END
                  || jsonb_build_array(jsonb_strip_nulls(jsonb_build_object(
                    'at', ${now}::int8, 'status', r.status, 'error', r.error, 'ms', r.millis)))
            FROM unnest(
              ${results.map((r) => r.eventSeq)}::text[]::int8[], ${results.map((r) => r.state)}::text[],
              ${results.map((r) => String(r.dueAt))}::text[]::int8[],
              ${column(results.map((r) => r.status === undefined ? null : String(r.status)))}::text[]::int4[],
              ${column(results.map((r) => r.error ?? null))}::text[], ${
          results.map((r) => String(r.millis))
        }::text[]::int4[]
            ) AS r(event_seq, state, due_at, status, error, millis)
            WHERE e.event_seq = r.event_seq AND e.lease_owner = ${owner} AND e.state = 'pending'
            RETURNING 1
          )
          SELECT count(*)::text AS n FROM done`.pipe(
          Effect.map((rows) => Number(rows[0]?.n ?? 0)),
          Effect.orDie,
          Effect.withSpan("WebhooksRepo.complete")
        )

      const deliveries = (orgId: OrgId, callId: CallId | undefined, limit: number) =>
        sql<{
          event_id: string
          call_id: string
          event: string
          url: string
          state: string
          attempts: number
          last_status: number | null
          last_error: string | null
          due_at: string
          finished_at: string | null
          history: ReadonlyArray<unknown>
        }>`
          SELECT event_id, call_id, event, url, state, attempts, last_status, last_error, due_at::text,
                 finished_at::text, history
          FROM webhook_events
          WHERE org_id = ${orgId} ${callId === undefined ? sql`` : sql`AND call_id = ${callId}`}
          ORDER BY event_seq DESC LIMIT ${limit}`.pipe(
          Effect.map((rows) =>
            rows.map((r): Delivery => ({
              event_id: r.event_id,
              call_id: r.call_id,
              event: r.event,
              url: r.url,
              state: r.state,
              attempts: r.attempts,
              last_status: r.last_status,
              last_error: r.last_error,
              next_retry_timestamp: r.state === "pending" ? Number(r.due_at) : null,
              finished_timestamp: r.finished_at === null ? null : Number(r.finished_at),
              history: r.history
            }))
          ),
          Effect.orDie
        )

      const stats = sql<{ pending: string; age: number | null }>`
        SELECT count(*)::text AS pending,
               extract(epoch FROM clock_timestamp() - min(enqueued_at))::float8 AS age
        FROM webhook_events WHERE state = 'pending'`.pipe(
        Effect.map((rows) => ({ pending: Number(rows[0]?.pending ?? 0), oldestAgeSeconds: rows[0]?.age ?? 0 })),
        Effect.orDie
      )

      const prune = (now: number, retentionMs: number, limit: number) =>
        Effect.gen(function*() {
          const cutoff = now - retentionMs
          // SKIP LOCKED: a worker delivering (or another worker pruning) holds its rows; they wait for the next round
          const events = yield* sql<{ n: number }>`
            WITH doomed AS (
              SELECT event_seq FROM webhook_events
              WHERE enqueued_at < to_timestamp(${cutoff}::float8 / 1000) AND state <> 'pending'
                AND finished_at < ${cutoff}
              LIMIT ${limit}
              FOR UPDATE SKIP LOCKED
            ), deleted AS (
              DELETE FROM webhook_events e USING doomed d WHERE e.event_seq = d.event_seq RETURNING 1
            )
            SELECT count(*)::int AS n FROM deleted`
          // the secret signing x-svc-signature is each org's newest active one (WebhooksRepo.claim); older ones are
          // past their grace period. Secrets not yet active (the next one) stay.
          const secrets = yield* sql<{ n: number }>`
            WITH current AS (
              SELECT DISTINCT ON (org_id) org_id, active_from, secret_id FROM webhook_secrets
              WHERE active_from <= ${now} ORDER BY org_id, active_from DESC, secret_id DESC
            ), deleted AS (
              DELETE FROM webhook_secrets s USING current c
              WHERE s.org_id = c.org_id AND (s.active_from, s.secret_id) < (c.active_from, c.secret_id)
              RETURNING 1
            )
            SELECT count(*)::int AS n FROM deleted`
          return { events: events[0]?.n ?? 0, secrets: secrets[0]?.n ?? 0 }
        }).pipe(Effect.orDie, Effect.withSpan("WebhooksRepo.prune"))

      return WebhooksRepo.of({
        setOrgWebhook,
        setAgentWebhook,
        createSecret,
        claim,
        complete,
        deliveries,
        stats,
        prune
      })
    })
  )
}
