/**
 * Pre-dial webhooks in PostgreSQL (decision 0553; migration 0031 has the table): an org's setting, the targets the
 * scheduler's workers cache, and the statement that undoes a claimed attempt the check did not allow.
 *
 * Invariants:
 * - A check runs after the claim committed (task `dialling` under its lease, its call `registered`) and before the
 *   dial. An answer other than allow undoes exactly that claim's attempt, under the org's lock (as every return of a
 *   task to `pending` runs: decision 0401), and only while the task is still `dialling` under the checking worker's
 *   lease: a task whose lease expired meanwhile is the reconciler's (it finds no call and returns it to pending), so
 *   no two actors ever undo or dial one attempt.
 * - After the undo the task reads as if the attempt had never been claimed: `attempts` 0 and no `registered` call row
 *   of the attempt (the next claim registers it again, under the same call id), `call_id` back to the previous
 *   attempt's (none for a first attempt), and the claim's `number_attempts` record gone (no call was made, so it
 *   counts against no attempt cap). A refusal then ends the task `skipped` (`predial_refused: <reason>`), as the
 *   claim's own skips end; an unavailable check leaves it `pending` until `not_before` (`predial_unavailable`), and
 *   its batch is due at that instant (the batch waits with it: decision 0553).
 * - Inserting a `registered` call enqueues no webhook event (webhook_call_events yields none for it), so there is no
 *   outbox row to take back, and deleting the row fires no trigger.
 */
import type { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { ORG_LOCK, ORG_LOCK_WAIT_MS } from "../dispatch/index.ts"
import { OrgNotFound } from "../orgs/index.ts"

/**
 * Bounds of a check's timeout: at least 100 ms (a network round trip), at most 10 s, well inside the claim's lease
 * (30 s by default, `Lease.safetyMs` before its end being the last moment a dial may start).
 *
 * @category models
 */
export const TIMEOUT_MS = { min: 100, max: 10_000, default: 3_000 } as const

/** @category errors */
export class InvalidPredialSetting extends Schema.TaggedError<InvalidPredialSetting>()("InvalidPredialSetting", {
  message: Schema.String
}) {}

/** @category models */
export interface PredialSetting {
  readonly predial_webhook_url: string
  readonly timeout_ms: number
}

/**
 * A signing secret of the org (decision 0521) with the instant it starts signing `x-svc-signature`.
 *
 * @category models
 */
export interface SigningSecret {
  readonly secret: string
  readonly activeFrom: number
}

/**
 * An org's pre-dial target as a worker caches it: the secrets are the one signing at load time and any newer ones, so
 * the worker picks the signing and the `-next` secret at send time (a rotation's switch is exact, not cache-stale).
 *
 * @category models
 */
export interface PredialTarget {
  readonly orgId: OrgId
  readonly url: string
  readonly timeoutMs: number
  readonly secrets: ReadonlyArray<SigningSecret>
}

/**
 * What a check decided, for the undo: a refusal (final) or a wait until `notBefore`.
 *
 * @category models
 */
export type Verdict =
  | { readonly _tag: "Refused"; readonly reason: string }
  | { readonly _tag: "Unavailable"; readonly notBefore: number }

/**
 * A claimed attempt to undo: the task, its owner's lease, and the claim's instant (its `number_attempts` record).
 *
 * @category models
 */
export interface ClaimedAttempt {
  readonly taskId: string
  readonly orgId: OrgId
  readonly claimedAt: number
}

/** The state reasons the undo writes (decision 0553). @category models */
export const reasons = {
  refused: (reason: string) => `predial_refused: ${reason}`,
  unavailable: "predial_unavailable"
} as const

/** `http:` or `https:` with a host and no credentials: the call webhooks' rule for a URL (decision 0523). */
const checkUrl = (url: string): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return `predial webhook url "${url}" is not an absolute URL`
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return `predial webhook url "${url}" must use http or https`
  }
  if (parsed.username !== "" || parsed.password !== "") {
    return `predial webhook url "${url}" must not contain credentials`
  }
  return undefined
}

/**
 * Pre-dial settings and undo. SQL failures are defects (house style §5.3).
 *
 * @category services
 */
export class PredialRepo extends Context.Service<PredialRepo, {
  /**
   * Sets the org's pre-dial webhook. The org must have a webhook secret already (`create-webhook-secret`): an
   * unsigned check could not be told from a forgery, and a check that cannot be signed never allows a dial.
   */
  readonly set: (
    orgId: OrgId,
    url: string,
    timeoutMs: number,
    now: number
  ) => Effect.Effect<PredialSetting, OrgNotFound | InvalidPredialSetting>
  /** Removes the org's pre-dial webhook; returns whether it had one. */
  readonly clear: (orgId: OrgId) => Effect.Effect<boolean>
  /** The org's setting, if any. */
  readonly get: (orgId: OrgId) => Effect.Effect<PredialSetting | undefined>
  /** Every org's target with its secrets at `now` (the workers' cache; one statement). */
  readonly targets: (now: number) => Effect.Effect<ReadonlyArray<PredialTarget>>
  /**
   * Undoes a claimed attempt the check did not allow (see the module notes), under the org's lock; returns the
   * task's batch when it applied, undefined when the task was no longer `dialling` under `owner`'s lease (or the
   * org's lock stayed taken past ORG_LOCK_WAIT_MS: the lease then runs out and the reconciler returns the task).
   */
  readonly undo: (
    owner: string,
    attempt: ClaimedAttempt,
    verdict: Verdict,
    now: number
  ) => Effect.Effect<BatchCallId | undefined>
}>()("@svc/store/PredialRepo") {
  /** @category layers */
  static readonly layer: Layer.Layer<PredialRepo, never, SqlClient.SqlClient> = Layer.effect(
    PredialRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const set = (orgId: OrgId, url: string, timeoutMs: number, now: number) =>
        Effect.gen(function*() {
          const bad = checkUrl(url) ??
            (Number.isInteger(timeoutMs) && timeoutMs >= TIMEOUT_MS.min && timeoutMs <= TIMEOUT_MS.max
              ? undefined
              : `timeout_ms must be a whole number of milliseconds from ${TIMEOUT_MS.min} to ${TIMEOUT_MS.max}`)
          if (bad !== undefined) return yield* new InvalidPredialSetting({ message: bad })
          const [org] = yield* sql<{ has_secret: boolean }>`
            SELECT EXISTS (SELECT 1 FROM webhook_secrets s WHERE s.org_id = o.org_id) AS has_secret
            FROM orgs o WHERE o.org_id = ${orgId}`
          if (org === undefined) return yield* new OrgNotFound({ orgId, message: `no org ${orgId}` })
          if (!org.has_secret) {
            return yield* new InvalidPredialSetting({
              message: `org ${orgId} has no webhook secret: create one first (admin create-webhook-secret); ` +
                `pre-dial checks are signed with it`
            })
          }
          yield* sql`
            INSERT INTO org_predial_webhooks (org_id, url, timeout_ms, updated_timestamp)
            VALUES (${orgId}, ${url}, ${timeoutMs}, ${now})
            ON CONFLICT (org_id) DO UPDATE
              SET url = EXCLUDED.url, timeout_ms = EXCLUDED.timeout_ms, updated_timestamp = EXCLUDED.updated_timestamp`
          return { predial_webhook_url: url, timeout_ms: timeoutMs }
        }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("PredialRepo.set"))

      const clear = (orgId: OrgId) =>
        sql`DELETE FROM org_predial_webhooks WHERE org_id = ${orgId} RETURNING 1`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie,
          Effect.withSpan("PredialRepo.clear")
        )

      const get = (orgId: OrgId) =>
        sql<{ url: string; timeout_ms: number }>`
          SELECT url, timeout_ms FROM org_predial_webhooks WHERE org_id = ${orgId}`.pipe(
          Effect.map((rows) =>
            rows[0] === undefined ? undefined : { predial_webhook_url: rows[0].url, timeout_ms: rows[0].timeout_ms }
          ),
          Effect.orDie,
          Effect.withSpan("PredialRepo.get")
        )

      const targets = (now: number) =>
        // org_id is branded as it is read: a row is where the scheduler's org ids enter
        sql<{ org_id: OrgId; url: string; timeout_ms: number; secrets: Array<{ s: string; a: number }> | null }>`
          SELECT p.org_id, p.url, p.timeout_ms,
            -- the secret signing now (the newest active one, as WebhooksRepo.claim picks it) and every newer one
            (SELECT jsonb_agg(jsonb_build_object('s', s.secret, 'a', s.active_from) ORDER BY s.active_from, s.secret_id)
              FROM webhook_secrets s
              WHERE s.org_id = p.org_id AND (s.active_from > ${now} OR s.secret_id = (
                SELECT c.secret_id FROM webhook_secrets c WHERE c.org_id = p.org_id AND c.active_from <= ${now}
                ORDER BY c.active_from DESC, c.secret_id DESC LIMIT 1))) AS secrets
          FROM org_predial_webhooks p`.pipe(
          Effect.map((rows) =>
            rows.map((r): PredialTarget => ({
              orgId: r.org_id,
              url: r.url,
              timeoutMs: r.timeout_ms,
              secrets: (r.secrets ?? []).map((x) => ({ secret: x.s, activeFrom: Number(x.a) }))
            }))
          ),
          Effect.orDie,
          Effect.withSpan("PredialRepo.targets")
        )

      const undo = (owner: string, attempt: ClaimedAttempt, verdict: Verdict, now: number) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`
            SELECT pg_advisory_xact_lock(${ORG_LOCK}, hashtext(${attempt.orgId}))::text AS locked
            FROM (SELECT set_config('lock_timeout', ${`${ORG_LOCK_WAIT_MS}ms`}, true) OFFSET 0) s`
          const refused = verdict._tag === "Refused"
          const rows = yield* sql<{ batch_call_id: BatchCallId }>`
            WITH t AS (
              SELECT task_id, org_id, batch_call_id, to_number, retry_attempt, call_id FROM batch_call_tasks
              WHERE task_id = ${attempt.taskId}::int8 AND org_id = ${attempt.orgId} AND state = 'dialling'
                AND lease_owner = ${owner}
              FOR UPDATE
            ), undone AS (
              UPDATE batch_call_tasks b
              SET state = ${refused ? "skipped" : "pending"},
                state_reason = ${refused ? reasons.refused(verdict.reason) : reasons.unavailable},
                lease_owner = NULL, lease_expires_at = NULL,
                not_before = ${refused ? null : verdict.notBefore}::int8,
                attempts = 0,
                -- the previous attempt's call id, as scheduler_claim derives each attempt's (decision 0625): none
                -- before the first, svc_call_id for the first, the md5 form for a retry
                call_id = CASE WHEN t.retry_attempt = 1 THEN NULL
                  WHEN t.retry_attempt = 2 THEN svc_call_id(t.task_id)
                  ELSE 'call_' || md5('svc-call:' || t.task_id::text || ':' || (t.retry_attempt - 1)::text) END
              FROM t
              WHERE b.task_id = t.task_id
              RETURNING b.batch_call_id
            ), unregistered AS (
              -- the attempt's call never rang: only its registered row goes (no trigger on DELETE; the INSERT
              -- enqueued no webhook event)
              DELETE FROM calls c USING t
              WHERE c.org_id = t.org_id AND c.call_id = t.call_id AND c.call_status = 'registered'
            ), uncounted AS (
              -- the claim's attempt record, if its group is capped (decision 0624): no call, no attempt
              DELETE FROM number_attempts x USING t
              WHERE x.org_id = t.org_id AND x.to_number = t.to_number AND x.attempted_at = ${attempt.claimedAt}
                AND x.task_id = t.task_id
            ), waiting AS (
              -- the batch waits with its task: due at not_before, earlier or later than it was. Earlier, since it may
              -- be resting until a recheck; later, so that while the org's receiver is away each batch is probed
              -- once per backoff (one claim's tasks), not claimed and undone task after task in between
              UPDATE batch_calls b SET next_dispatch_at = ${refused ? now : verdict.notBefore}::int8
              FROM t
              WHERE ${!refused}::boolean AND b.batch_call_id = t.batch_call_id AND b.status IN ('scheduled', 'in_progress')
            )
            SELECT batch_call_id FROM undone`
          return rows[0]?.batch_call_id
        })).pipe(
          // the org's lock stayed taken: leave the task dialling; its lease ends and the reconciler returns it
          Effect.catchIf(
            (error) => error.cause._tag === "LockTimeoutError",
            () => Effect.succeed(undefined)
          ),
          Effect.orDie,
          Effect.withSpan("PredialRepo.undo")
        )

      return PredialRepo.of({ set, clear, get, targets, undo })
    })
  )
}
