/**
 * The scheduler's statements over batch calls and their tasks (issue 5; docs/decisions/0401-scheduler-row-leasing.md):
 * which batches are due, claiming tasks under an org's concurrency limit, leases, and the transitions into and
 * out of `unknown`. Workers coordinate only through these rows; nothing here keeps state in memory that
 * another worker would need.
 *
 * Invariants:
 * - A task is `dialling` only with a lease (owner, expiry); the claim that sets it commits before the dial.
 * - Calls in flight of an org (tasks `dialling` or `unknown`: an `unknown` task may be a live call) change upward
 *   only inside the org's claim transaction (for one open batch, one statement: `scheduler_claim`, migration 0010),
 *   which holds the advisory lock `(ORG_LOCK, hashtext(org))` and counts them after the lock is granted; so
 *   concurrent workers can never start more than the limit allows (DispatchAllocation). A claim waits for the lock
 *   at most ORG_LOCK_WAIT_MS, then claims nothing (`busy`).
 * - `dialling` -> `unknown` when the lease expired, or at once when its owner is known to be dead (a worker on the
 *   same machine whose process is gone: the scheduler's WorkerIdentity); `unknown` -> `pending` only after the dialer said no call was
 *   placed with the task's key, under the org's lock (so a batch that had run dry is woken in the same step).
 * - A batch leaves `scheduled`/`in_progress` only for `completed`, once none of its tasks is pending or in flight.
 */
import { CanonicalCallTimeWindow } from "@svc/domain/CallWindow.ts"
import { attemptKey } from "@svc/domain/models/RetryPolicy.ts"
import type { DialRequest } from "@svc/domain/ports/Dialer.ts"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { effectiveOf, type EffectivePolicy } from "../policies/CallingPolicyRepo.ts"
import { allocate, type AllocationCandidate, freeSlots } from "./DispatchAllocation.ts"

/**
 * `pg_advisory_xact_lock(ORG_LOCK, hashtext(org_id))`: the first key is the scheduler's namespace ("svc:org"),
 * fixed forever. Two orgs whose ids hash alike only share a lock, which costs a little waiting, nothing else.
 *
 * @category models
 */
export const ORG_LOCK = 0x5356_4f52

/**
 * Longest a claim waits for its org's lock (held by another worker's claim, which takes a few ms) before it gives up
 * with `busy`.
 *
 * @category models
 */
export const ORG_LOCK_WAIT_MS = 250

/**
 * How long a batch with nothing left to claim (its last calls still in flight) is left alone before it is looked
 * at again. Completion and the return of a task to `pending` wake it earlier; this is the fallback.
 *
 * @category models
 */
export const IDLE_RECHECK_MS = 60_000

/**
 * A batch whose `next_dispatch_at` has come: its trigger time has passed and it was not waiting for a later window
 * opening.
 *
 * @category models
 */
export interface DueBatch {
  readonly batchCallId: string
  readonly orgId: string
  readonly fromNumber: string
  readonly reservedConcurrency: number
  /** `undefined` = no call window: any time. */
  readonly window: CanonicalCallTimeWindow | undefined
  readonly nextDispatchAt: number
  /**
   * The version of the org's calling-policy override (0: none), read with the batch so that a policy change reaches
   * the next claim (CallingPolicyRepo, decision 0628).
   */
  readonly policyVersion: number
}

/**
 * A task claimed for dialling: its lease and the request that carries its overrides.
 *
 * @category models
 */
export interface ClaimedTask {
  readonly taskId: string
  readonly orgId: string
  readonly batchCallId: string
  readonly taskIndex: number
  /** When the batch became dispatchable (the lag metric runs from here to the dial). */
  readonly dueAt: number
  readonly leaseExpiresAt: number
  readonly request: DialRequest
}

/**
 * A batch's legal groups at the claim's instant (issue 15, decision 0623): those whose tasks may be dialled now,
 * and the others with the instant each opens next (legal hours and the batch's window).
 *
 * @category models
 */
export interface BatchLegality {
  /**
   * `legal` and `blocked` together are every legal group of the batch (the claim reads "no group blocked" as "every
   * pending task may be dialled").
   */
  readonly legal: ReadonlyArray<number>
  readonly blocked: ReadonlyArray<{ readonly group: number; readonly opensAt: number }>
  /**
   * The attempt cap of each group that has one (issue 15 item 4, decision 0624): at most `limit` attempts per
   * rolling 24 h to one number across the org's batches; `label` names it in `state_reason` ("FL 3 per 24h").
   */
  readonly caps?: ReadonlyArray<GroupCap> | undefined
}

/**
 * A legal group's attempt cap, as the claim enforces it (migration 0023).
 *
 * @category models
 */
export interface GroupCap {
  readonly group: number
  readonly limit: number
  readonly label: string
}

/**
 * One legal group of a batch as stored at its creation (migration 0022).
 *
 * @category models
 */
export interface StoredLegalGroup {
  readonly batchCallId: string
  readonly group: number
  readonly zones: ReadonlyArray<string>
  readonly ruleIds: ReadonlyArray<string>
}

/** @category models */
export interface ClaimOptions {
  readonly owner: string
  readonly now: number
  readonly leaseMs: number
  /** Most tasks claimed from one batch in one transaction. */
  readonly maxPerBatch: number
  /**
   * Legal groups per batch id: a batch's tasks are claimed only from its `legal` groups (and its unconstrained
   * tasks); a batch missing from the map has only its unconstrained tasks claimed. Without the map nothing is
   * constrained: the dispatcher always passes it (decision 0623); tests of other rules may leave it out.
   */
  readonly legal?: ReadonlyMap<string, BatchLegality> | undefined
}

/** @category models */
export interface ClaimResult {
  readonly claimed: ReadonlyArray<ClaimedTask>
  /** Tasks set to `skipped` (their number belongs to a `do_not_call` contact). */
  readonly skipped: number
  /** Tasks left pending because their number reached its attempt cap (`not_before` set; decision 0624). */
  readonly deferred: number
  /** Batches that completed in this transaction (nothing pending, nothing in flight). */
  readonly completed: ReadonlyArray<string>
  /** The org's lock stayed taken for longer than ORG_LOCK_WAIT_MS: nothing was claimed, try again shortly. */
  readonly busy: boolean
  /**
   * A batch stopped at `maxPerBatch` while the org still had free slots for it: claim again at once. False when the
   * slots ran out (the next claim would find none; calls ending free them and wake the loop).
   */
  readonly more: boolean
  /** When batches that ran dry with calls still in flight are looked at again (IDLE_RECHECK_MS), if any did. */
  readonly rechecksAt: number | undefined
}

/**
 * An `unknown` task taken for reconciliation by one worker (its lease is the time of the next look).
 *
 * @category models
 */
export interface UnknownTask {
  readonly taskId: string
  readonly orgId: string
  readonly batchCallId: string
  readonly fromNumber: string
  readonly toNumber: string
  /** Which call of the task is in doubt (its key: `attemptKey(taskId, attempt)`; decision 0625). */
  readonly attempt: number
}

/**
 * What a dispatch pass sees when it looks at the batches: those due now, and when the next one waiting becomes due.
 *
 * @category models
 */
export interface DueView {
  /** Batches due at the time looked at, oldest first. */
  readonly due: ReadonlyArray<DueBatch>
  /** The earliest `next_dispatch_at` after that time (a trigger time or a window opening), if any batch waits. */
  readonly next: number | undefined
}

// ---------------------------------------------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------------------------------------------

interface DueRow {
  readonly batch_call_id: string
  readonly org_id: string
  readonly from_number: string
  readonly reserved_concurrency: number
  readonly call_time_window: unknown
  readonly next_dispatch_at: number
  readonly policy_version: number
}

/** A row of `look`: a due batch, or only `next` (all else NULL) when none is due. */
type LookRow = { readonly [K in keyof DueRow]: DueRow[K] | null } & { readonly next: number | null }

interface ClaimRow {
  readonly task_id: string
  readonly task_index: number
  readonly to_number: string
  /** `deferred`: at its attempt cap, left pending (migration 0023; `call_id` then holds its `state_reason`). */
  readonly state: "dialling" | "skipped" | "deferred"
  readonly override_agent_id: string | null
  readonly override_agent_version: number | null
  readonly override_agent_version_name: string | null
  readonly agent_override: Record<string, Schema.Json> | null
  readonly dynamic_variables: Record<string, string> | null
  readonly metadata: Record<string, Schema.Json> | null
  readonly custom_sip_headers: Record<string, string> | null
  /** svc's id for the call (`svc_call_id`, migration 0012); null for a skipped task. */
  readonly call_id: string | null
  /** Which call of the task this is, from 1 (retries: migration 0024, decision 0625). */
  readonly call_attempt: number
}

/** A row of `scheduler_claim` (migrations 0010, 0012): a claimed task, or the summary (task columns NULL). */
type ClaimFunctionRow = { readonly [K in keyof ClaimRow]: ClaimRow[K] | null } & {
  readonly org_limit: number | null
  readonly org_in_flight: number | null
}

const decodeWindow = Schema.decodeUnknownSync(CanonicalCallTimeWindow)

/** The dial request of a claimed row: the batch's from_number and the task's overrides, absent keys omitted. */
const toRequest = (orgId: string, batch: DueBatch, row: ClaimRow): DialRequest => {
  const request: {
    -readonly [K in keyof DialRequest]: DialRequest[K]
  } = {
    // the task id for its first call, as before retries; `<task id>:<n>` for its n-th (decision 0625)
    idempotency_key: attemptKey(row.task_id, row.call_attempt),
    call_id: row.call_id ?? "",
    org_id: orgId,
    batch_call_id: batch.batchCallId,
    from_number: batch.fromNumber,
    to_number: row.to_number
  }
  if (row.override_agent_id !== null) request.override_agent_id = row.override_agent_id
  if (row.override_agent_version !== null) request.override_agent_version = row.override_agent_version
  else if (row.override_agent_version_name !== null) request.override_agent_version = row.override_agent_version_name
  if (row.agent_override !== null) request.agent_override = row.agent_override
  if (row.dynamic_variables !== null) request.dynamic_variables = row.dynamic_variables
  if (row.metadata !== null) request.metadata = row.metadata
  if (row.custom_sip_headers !== null) request.custom_sip_headers = row.custom_sip_headers
  return request
}

/** A claim that took nothing: the org is gone, or (`busy`) its lock stayed taken past ORG_LOCK_WAIT_MS. */
const nothingClaimed = (busy: boolean): ClaimResult => ({
  claimed: [],
  skipped: 0,
  deferred: 0,
  completed: [],
  busy,
  more: false,
  rechecksAt: undefined
})

/**
 * `scheduler_claim`'s `p_groups` for a batch: NULL (every pending task) without a legality map or when none of the
 * batch's groups is blocked, else the batch's legal groups (none when the map does not have it: only its
 * unconstrained tasks).
 *
 * NULL when nothing is blocked is the common case by day, and the cheaper claim: one walk of the batch's pending
 * index, where the per-group path walks the pending-by-group index once per group, then looks each candidate up
 * again to lock it. The scheduler bench measured the per-group path at +15 µs a task (137 against 120-ish µs, 1.14x)
 * on batches with no legal group at all (docs/benchmarks.md, "Recipient zones and legal hours").
 */
const groupsParam = (legal: ReadonlyMap<string, BatchLegality> | undefined, batchCallId: string) => {
  if (legal === undefined) return null
  const own = legal.get(batchCallId)
  if (own === undefined) return []
  return own.blocked.length === 0 ? null : [...own.legal]
}

const noCaps: ReadonlyArray<GroupCap> = []

/** The batch's group caps (none without a legality map: nothing constrained). */
const capsOf = (legal: ReadonlyMap<string, BatchLegality> | undefined, batchCallId: string) =>
  legal?.get(batchCallId)?.caps ?? noCaps

/** A statement that waited longer than its `lock_timeout` (lockOrg's bound). */
/**
 * How long an attempt record is kept: the caps count a number's claims over a rolling 24 h (the claim's window,
 * migration 0023), plus an hour for workers whose clocks disagree. The claim drops a number's own older records as
 * it dials the number again; the sweep drops those of numbers never dialled again.
 */
export const ATTEMPTS_KEPT_MS = 25 * 3_600_000

const isLockTimeout = (error: SqlError.SqlError) => error.cause._tag === "LockTimeoutError"

// ---------------------------------------------------------------------------------------------------------------
// Service
// ---------------------------------------------------------------------------------------------------------------

/**
 * Dispatch statements on PostgreSQL. SQL and row-decoding failures are defects (house style §5.3): the worker's
 * loops log them and try again.
 *
 * @category services
 */
export class DispatchRepo extends Context.Service<DispatchRepo, {
  /**
   * `dialling` tasks whose lease expired become `unknown`; returns how many. Rows another statement holds are skipped
   * (never waited for): a later pass takes them if they are still expired.
   */
  readonly expireLeases: (now: number) => Effect.Effect<number>
  /** The workers that hold a lease on a `dialling` task now. */
  readonly leaseOwners: Effect.Effect<ReadonlyArray<string>>
  /**
   * The `dialling` tasks of these owners (workers known to be dead) become `unknown` at once, due for
   * reconciliation now, whatever their leases say; returns how many.
   */
  readonly releaseOwners: (owners: ReadonlyArray<string>, now: number) => Effect.Effect<number>
  /**
   * Deletes the attempt records (`number_attempts`, decision 0624) that no cap can count any more: older than the
   * caps' 24 h window by `ATTEMPTS_KEPT_MS`; returns how many.
   */
  readonly sweepAttempts: (now: number) => Effect.Effect<number>
  /** Batches due at `now` (at most `limit`), and when the next waiting one becomes due; one statement. */
  readonly look: (now: number, limit: number) => Effect.Effect<DueView>
  /** Moves each batch's `next_dispatch_at` to the given time (its window's next opening). */
  readonly postpone: (
    batches: ReadonlyArray<{ readonly batchCallId: string; readonly at: number }>
  ) => Effect.Effect<void>
  /** Claims tasks of the org's open, due batches, sharing the free slots fairly; one transaction. */
  readonly claim: (
    orgId: string,
    batches: ReadonlyArray<DueBatch>,
    options: ClaimOptions
  ) => Effect.Effect<ClaimResult>
  /**
   * Extends the leases this owner holds on `dialling` tasks; returns the ids it renewed. A row another statement
   * holds (being recorded, reconciled or expired) is skipped, not waited for, and not returned.
   */
  readonly extendLeases: (
    owner: string,
    taskIds: ReadonlyArray<string>,
    until: number
  ) => Effect.Effect<ReadonlyArray<string>>
  /** Takes `unknown` tasks due for a look at the dialer, leasing them to `owner` until `now + recheckMs`. */
  readonly claimUnknown: (
    owner: string,
    now: number,
    recheckMs: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<UnknownTask>>
  /**
   * `unknown` (or `dialling`) tasks of `owner` that were never placed go back to `pending`, and their batches are
   * woken; under each org's lock. An org whose lock stays taken past ORG_LOCK_WAIT_MS is left for a later look (its
   * tasks are not counted).
   */
  readonly returnToPending: (owner: string, taskIds: ReadonlyArray<string>, now: number) => Effect.Effect<number>
  /** `dialling` tasks of `owner` become `unknown` at once (released on shutdown; reconciled by whoever is left). */
  readonly releaseToUnknown: (owner: string, taskIds: ReadonlyArray<string>, now: number) => Effect.Effect<number>
  /** Completes the batches among these that have nothing pending or in flight; returns them. */
  readonly completeIfDone: (batchCallIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
  /**
   * Sets the `state_reason` of a legal group's pending tasks (why they wait: `legal_hours: ...`), or clears a
   * `legal_hours` reason when `reason` is null; one statement, rows already right are not written. Returns how many
   * changed.
   */
  readonly setLegalReason: (batchCallId: string, group: number, reason: string | null) => Effect.Effect<number>
  /** The legal groups of these batches (immutable once created: callers may keep them). */
  readonly legalGroups: (batchCallIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StoredLegalGroup>>
  /**
   * The effective calling policies of these orgs (CallingPolicyRepo.effectiveOf; an org without an override is
   * absent: the default policy, version 0). Callers keep them by version (`DueBatch.policyVersion`).
   */
  readonly orgPolicies: (orgIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, EffectivePolicy>>
}>()("@svc/store/DispatchRepo") {
  /** @category layers */
  static readonly layer: Layer.Layer<DispatchRepo, never, SqlClient.SqlClient> = Layer.effect(
    DispatchRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      // Canonical windows are immutable: decode each batch's once (and keep the object, which CallWindow
      // compiles once per object).
      const windows = new Map<string, CanonicalCallTimeWindow | undefined>()
      const windowOf = (row: DueRow) => {
        if (windows.has(row.batch_call_id)) return windows.get(row.batch_call_id)
        if (windows.size > 10_000) windows.clear()
        const window = row.call_time_window === null ? undefined : decodeWindow(row.call_time_window)
        windows.set(row.batch_call_id, window)
        return window
      }

      // Lease renewal and expiry never wait for a row: each takes the rows it can lock and skips the rest. Both change
      // many rows in one statement, in whatever order their plans visit them, and so do the recorder and another
      // worker's expiry: two of them waiting on each other's rows was a deadlock (PostgreSQL aborted one after 1 s;
      // seen in CI as a renewal failing right after an outage). A row skipped here is being changed by whoever holds
      // it (recorded, reconciled, renewed); the next heartbeat (a third of the lease) or maintenance pass looks again.
      const expireLeases = (now: number) =>
        sql<{ n: number }>`
          WITH expired AS (
            UPDATE batch_call_tasks SET state = 'unknown'
            WHERE task_id = ANY(ARRAY(
                SELECT task_id FROM batch_call_tasks
                WHERE state = 'dialling' AND lease_expires_at < ${now}
                FOR UPDATE SKIP LOCKED))
              AND state = 'dialling' AND lease_expires_at < ${now}
            RETURNING 1
          )
          SELECT count(*)::int4 AS n FROM expired`.pipe(
          Effect.map((rows) => rows[0]?.n ?? 0),
          Effect.orDie,
          Effect.withSpan("DispatchRepo.expireLeases")
        )

      // The partial index of calls in flight holds exactly the dialling tasks; its entries are read, as the expiry
      // reads them (SchedulerPlans.integration.test.ts counts the scans)
      const leaseOwners = sql<{ lease_owner: string }>`
          SELECT DISTINCT lease_owner FROM batch_call_tasks
          WHERE state = 'dialling' AND lease_owner IS NOT NULL`.pipe(
        Effect.map((rows) => rows.map((r) => r.lease_owner)),
        Effect.orDie,
        Effect.withSpan("DispatchRepo.leaseOwners")
      )

      const releaseOwners = (owners: ReadonlyArray<string>, now: number) =>
        owners.length === 0 ? Effect.succeed(0) : sql<{ n: number }>`
          WITH released AS (
            UPDATE batch_call_tasks SET state = 'unknown', lease_expires_at = ${now}
            WHERE state = 'dialling' AND lease_owner = ANY(${owners}::text[])
            RETURNING 1
          )
          SELECT count(*)::int4 AS n FROM released`.pipe(
          Effect.map((rows) => rows[0]?.n ?? 0),
          Effect.orDie,
          Effect.withSpan("DispatchRepo.releaseOwners")
        )

      const sweepAttempts = (now: number) =>
        sql<{ n: number }>`
          WITH swept AS (
            DELETE FROM number_attempts WHERE attempted_at < ${now - ATTEMPTS_KEPT_MS} RETURNING 1
          )
          SELECT count(*)::int4 AS n FROM swept`.pipe(
          Effect.map((rows) => rows[0]?.n ?? 0),
          Effect.orDie,
          Effect.withSpan("DispatchRepo.sweepAttempts")
        )

      // One statement per pass for both questions: the dispatcher used to ask for the next wake time in a second
      // statement after its claims, whose answer waited behind the dials the claims had just started (Node's one
      // thread); that kept the loop from claiming the slots a recorder had freed meanwhile (~4 ms of a 20 ms cycle).
      // The outer row always exists (an aggregate), so `next` comes back when no batch is due.
      // Lease expiries are not wake times: the earliest lease across all orgs has no index to read it from (the
      // dialling index leads with org_id), so it cost a scan of every task in flight on each idle pass; measured at
      // ~4.5 ms a pass with 1,000 calls in flight, a tenth of PostgreSQL's time with two workers. The poll interval
      // bounds how late an expired lease is taken up instead (lease + at most one poll; docs/decisions/0401).
      const look = (now: number, limit: number) =>
        sql<LookRow>`
          SELECT d.batch_call_id, d.org_id, d.from_number, d.reserved_concurrency, d.call_time_window,
            d.next_dispatch_at, d.policy_version, u.next
          FROM (
            SELECT min(next_dispatch_at)::float8 AS next FROM batch_calls
            WHERE status IN ('scheduled', 'in_progress') AND next_dispatch_at > ${now}
          ) u
          LEFT JOIN LATERAL (
            SELECT batch_call_id, org_id, from_number, reserved_concurrency, call_time_window,
              next_dispatch_at::float8 AS next_dispatch_at,
              coalesce((SELECT p.version FROM org_calling_policies p WHERE p.org_id = batch_calls.org_id), 0)::float8
                AS policy_version
            FROM batch_calls
            WHERE status IN ('scheduled', 'in_progress') AND next_dispatch_at <= ${now}
            ORDER BY next_dispatch_at
            LIMIT ${limit}
          ) d ON true`.pipe(
          Effect.map((rows): DueView => {
            const due: Array<DueBatch> = []
            for (const row of rows) {
              if (row.batch_call_id === null) continue
              const found = row as DueRow
              due.push({
                batchCallId: found.batch_call_id,
                orgId: found.org_id,
                fromNumber: found.from_number,
                reservedConcurrency: found.reserved_concurrency,
                window: windowOf(found),
                nextDispatchAt: found.next_dispatch_at,
                policyVersion: found.policy_version
              })
            }
            return { due, next: rows[0]?.next ?? undefined }
          }),
          Effect.orDie,
          Effect.withSpan("DispatchRepo.look")
        )

      const postpone = (batches: ReadonlyArray<{ readonly batchCallId: string; readonly at: number }>) =>
        batches.length === 0 ? Effect.void : sql`
          UPDATE batch_calls b SET next_dispatch_at = u.at
          FROM unnest(${batches.map((b) => b.batchCallId)}::text[], ${
          batches.map((b) => String(b.at))
        }::text[]::int8[]) AS u(id, at)
          WHERE b.batch_call_id = u.id`.pipe(Effect.asVoid, Effect.orDie, Effect.withSpan("DispatchRepo.postpone"))

      // One query per state: each has its partial index (batch_call_tasks_dialling, _unknown); `state IN (...)`
      // would make the planner scan the whole task table.
      const inFlightByBatch = (orgId: string) =>
        sql<{ batch_call_id: string; n: number }>`
          SELECT batch_call_id, count(*)::int4 AS n FROM (
            SELECT batch_call_id FROM batch_call_tasks WHERE org_id = ${orgId} AND state = 'dialling'
            UNION ALL
            SELECT batch_call_id FROM batch_call_tasks WHERE org_id = ${orgId} AND state = 'unknown'
          ) t
          GROUP BY batch_call_id`

      // The org's lock, waited for at most ORG_LOCK_WAIT_MS (a claim holds it for a few ms; waiting costs no CPU,
      // where polling cost every worker a pass each time). The bound keeps one stalled transaction from stopping a
      // worker's passes over every other org: past it the statement fails with LockTimeoutError (`isLockTimeout`).
      // `set_config` runs in its own plan node (OFFSET 0), so before the lock is requested; it holds for this
      // transaction only. The org's concurrency limit comes back in the same round trip (undefined: no such org); it
      // is read with the statement's snapshot, taken before the lock was granted, which is fine: claims do not
      // change it.
      const lockOrg = (orgId: string) =>
        sql<{ concurrency_limit: number | null }>`
          SELECT pg_advisory_xact_lock(${ORG_LOCK}, hashtext(${orgId}))::text AS locked,
            (SELECT concurrency_limit FROM orgs WHERE org_id = ${orgId}) AS concurrency_limit
          FROM (SELECT set_config('lock_timeout', ${`${ORG_LOCK_WAIT_MS}ms`}, true) OFFSET 0) s`.pipe(
          Effect.map((rows) => rows[0]?.concurrency_limit ?? undefined)
        )

      // Calls in flight are checked first (CASE evaluates in order): while a batch runs they nearly always exist, and
      // the pending check would walk the index entries of every task already claimed. Each check is a scalar
      // subquery with LIMIT 1 over the columns of its partial index (pending in task order): as EXISTS, the planner
      // was free to hash the check over every task in flight of every org, or to answer "no pending task" with a
      // sequential scan of the task table (seen in a generic plan: 170 ms a call; 4 ms a call on average with two
      // workers), and this runs after every record. A test counts the scans under a generic plan.
      const completeIfDoneStatement = (batchCallIds: ReadonlyArray<string>) =>
        sql<{ batch_call_id: string }>`
          UPDATE batch_calls b SET status = 'completed'
          WHERE b.batch_call_id = ANY(${batchCallIds}::text[]) AND b.status IN ('scheduled', 'in_progress')
            AND CASE
              WHEN (
                SELECT 1 FROM batch_call_tasks t
                WHERE t.org_id = b.org_id AND t.state = 'dialling' AND t.batch_call_id = b.batch_call_id
                LIMIT 1
              ) IS NOT NULL THEN false
              WHEN (
                SELECT 1 FROM batch_call_tasks t
                WHERE t.org_id = b.org_id AND t.state = 'unknown' AND t.batch_call_id = b.batch_call_id
                LIMIT 1
              ) IS NOT NULL THEN false
              ELSE (
                SELECT 1 FROM batch_call_tasks t
                WHERE t.batch_call_id = b.batch_call_id AND t.state = 'pending'
                ORDER BY t.task_index
                LIMIT 1
              ) IS NULL
            END
          RETURNING b.batch_call_id`.pipe(Effect.map((rows) => rows.map((r) => r.batch_call_id)))

      // A batch's claim in one statement (migration 0010 says why, and holds the SQL): the org's lock, its limit
      // and calls in flight counted after the lock, then up to `max` of the batch's pending tasks in task order,
      // within the batch's ceiling. The rows are taken by primary key whatever the plan, and the do-not-call check
      // runs once per row (DispatchClaims.integration.test.ts counts both under a generic plan). The function
      // returns the tasks, then a summary row (task_id NULL) with the limit and the calls in flight before the
      // claim; undefined here: no such org.
      const claimRows = (
        orgId: string,
        batch: DueBatch,
        max: number,
        owner: string,
        until: number,
        now: number,
        legal: ReadonlyMap<string, BatchLegality> | undefined
      ) => {
        const caps = capsOf(legal, batch.batchCallId)
        // the cap arrays only when the batch has capped groups: NULL costs the function nothing (decision 0624)
        return sql<ClaimFunctionRow>`
          SELECT * FROM scheduler_claim(${ORG_LOCK}::int4, ${orgId}, ${`${ORG_LOCK_WAIT_MS}ms`},
            ${batch.batchCallId}, ${batch.reservedConcurrency}::int4, ${max}::int4, ${owner}, ${until}::int8,
            ${batch.fromNumber}, ${now}::int8, ${groupsParam(legal, batch.batchCallId)}::int4[],
            ${caps.length === 0 ? null : caps.map((c) => c.group)}::int4[],
            ${caps.length === 0 ? null : caps.map((c) => c.limit)}::int4[],
            ${caps.length === 0 ? null : caps.map((c) => c.label)}::text[])`.pipe(
          Effect.map((rows) => {
            const summary = rows[rows.length - 1]
            if (summary === undefined || summary.org_limit === null || summary.org_in_flight === null) return undefined
            return {
              rows: rows.slice(0, -1) as ReadonlyArray<ClaimRow>,
              limit: summary.org_limit,
              inFlight: summary.org_in_flight
            }
          })
        )
      }

      /**
       * Batches that ran dry (nothing pending left to claim) and did not complete (calls still in flight) rest until
       * IDLE_RECHECK_MS from now, each only while no task of it is pending and dialable: a task the claim could not
       * take (locked by another transaction) or one returned to `pending` since the claim keeps the batch due. A
       * batch whose pending tasks all wait on their attempt cap (`not_before`, decision 0624) sleeps until the
       * earliest of those instants instead (it cannot complete before, and a task returned to pending wakes it),
       * read through batch_call_tasks_deferred. Returns the batches that rest and when each is due again. Runs under
       * the org's lock, like every return of a task to `pending` (returnToPending).
       */
      const rest = (batchCallIds: ReadonlyArray<string>, now: number) =>
        sql<{ batch_call_id: string; at: number }>`
          UPDATE batch_calls b SET next_dispatch_at = coalesce((
              SELECT min(t.not_before) FROM batch_call_tasks t
              WHERE t.batch_call_id = b.batch_call_id AND t.state = 'pending' AND t.not_before > ${now}
            ), ${now + IDLE_RECHECK_MS})
          WHERE b.batch_call_id = ANY(${batchCallIds}::text[]) AND b.next_dispatch_at <= ${now}
            AND (
              SELECT 1 FROM batch_call_tasks t
              WHERE t.batch_call_id = b.batch_call_id AND t.state = 'pending'
                AND (t.not_before IS NULL OR t.not_before <= ${now})
              ORDER BY t.task_index
              LIMIT 1
            ) IS NULL
          RETURNING b.batch_call_id, b.next_dispatch_at::float8 AS at`

      /**
       * A batch with nothing dialable left now but pending tasks in groups blocked by legal hours sleeps until the
       * earliest opening among the blocked groups that still have pending tasks (decision 0623), each group asked
       * through batch_call_tasks_pending_by_group, or until the earliest `not_before` of its tasks waiting on their
       * attempt cap (decision 0624) if that is sooner. Only while no task of a legal group (or an unconstrained one)
       * is pending and dialable now: one the claim could not take (locked) keeps the batch due. Returns the wake
       * time, if it sleeps.
       */
      const sleepUntilLegal = (batchCallId: string, legality: BatchLegality | undefined, now: number) =>
        legality === undefined || legality.blocked.length === 0 ? Effect.succeed(undefined) : sql<{ at: number }>`
          WITH w AS (
            SELECT LEAST(min(o.at), (
                SELECT min(t.not_before) FROM batch_call_tasks t
                WHERE t.batch_call_id = ${batchCallId} AND t.state = 'pending' AND t.not_before > ${now}
              )) AS at
            FROM unnest(${legality.blocked.map((b) => b.group)}::int4[],
              ${legality.blocked.map((b) => String(b.opensAt))}::text[]::int8[]) AS o(g, at)
            WHERE (
              SELECT 1 FROM batch_call_tasks t
              WHERE t.batch_call_id = ${batchCallId} AND t.legal_group = o.g AND t.state = 'pending'
              ORDER BY t.task_index
              LIMIT 1
            ) IS NOT NULL
          )
          UPDATE batch_calls b SET next_dispatch_at = w.at
          FROM w
          WHERE b.batch_call_id = ${batchCallId} AND w.at IS NOT NULL AND b.next_dispatch_at <= ${now}
            AND (
              SELECT 1 FROM batch_call_tasks t
              WHERE t.batch_call_id = ${batchCallId} AND t.legal_group IS NULL AND t.state = 'pending'
                AND (t.not_before IS NULL OR t.not_before <= ${now})
              ORDER BY t.task_index
              LIMIT 1
            ) IS NULL
            AND NOT EXISTS (
              SELECT 1 FROM unnest(${[...legality.legal]}::int4[]) AS l(g)
              WHERE (
                SELECT 1 FROM batch_call_tasks t
                WHERE t.batch_call_id = ${batchCallId} AND t.legal_group = l.g AND t.state = 'pending'
                  AND (t.not_before IS NULL OR t.not_before <= ${now})
                ORDER BY t.task_index
                LIMIT 1
              ) IS NOT NULL
            )
          RETURNING w.at::float8 AS at`.pipe(Effect.map((rows) => rows[0]?.at))

      /**
       * Batches that ran dry and did not complete: each sleeps until its legal groups open (`sleepUntilLegal`) when
       * only blocked groups have pending tasks, else rests (`rest`). Returns the earliest time one of them is due
       * again, if any sleeps or rests.
       */
      const restOrSleep = (
        batchCallIds: ReadonlyArray<string>,
        legal: ReadonlyMap<string, BatchLegality> | undefined,
        now: number
      ) =>
        Effect.gen(function*() {
          let at: number | undefined
          const resting: Array<string> = []
          for (const id of batchCallIds) {
            const opens = yield* sleepUntilLegal(id, legal?.get(id), now)
            if (opens === undefined) resting.push(id)
            else if (at === undefined || opens < at) at = opens
          }
          if (resting.length > 0) {
            for (const row of yield* rest(resting, now)) if (at === undefined || row.at < at) at = row.at
          }
          return at
        })

      /**
       * After a one-statement claim found its batch dry: complete it, or let it rest or sleep until its legal groups
       * open (`restOrSleep`), under the org's lock.
       */
      const ranDry = (
        orgId: string,
        batchCallId: string,
        now: number,
        legal: ReadonlyMap<string, BatchLegality> | undefined
      ) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* lockOrg(orgId)
          const completed = yield* completeIfDoneStatement([batchCallId])
          if (completed.length > 0) return { completed, rechecksAt: undefined }
          return { completed, rechecksAt: yield* restOrSleep([batchCallId], legal, now) }
        }))

      /** The claim of an org with one open batch: one statement, then rarely a second (the batch ran dry). */
      const claimOne = (orgId: string, batch: DueBatch, options: ClaimOptions) =>
        Effect.gen(function*() {
          const until = options.now + options.leaseMs
          const result = yield* claimRows(
            orgId,
            batch,
            options.maxPerBatch,
            options.owner,
            until,
            options.now,
            options.legal
          )
          if (result === undefined) return nothingClaimed(false)
          const { inFlight, limit, rows } = result
          const wanted = Math.min(options.maxPerBatch, freeSlots(limit, batch.reservedConcurrency, inFlight))
          const claimed: Array<ClaimedTask> = []
          let skipped = 0
          let deferred = 0
          for (const row of rows) {
            if (row.state === "skipped") {
              skipped++
              continue
            }
            if (row.state === "deferred") {
              deferred++
              continue
            }
            claimed.push({
              taskId: row.task_id,
              orgId,
              batchCallId: batch.batchCallId,
              taskIndex: row.task_index,
              dueAt: batch.nextDispatchAt,
              leaseExpiresAt: until,
              request: toRequest(orgId, batch, row)
            })
          }
          if (wanted > 0 && rows.length < wanted) {
            // under the org's lock no other claim held this batch's pending rows: it has run dry
            const dry = yield* ranDry(orgId, batch.batchCallId, options.now, options.legal)
            return {
              claimed,
              skipped,
              deferred,
              completed: dry.completed,
              busy: false,
              more: false,
              rechecksAt: dry.rechecksAt
            }
          }
          // it took all it asked for: claim again at once if slots are left (its skipped tasks took none)
          const more = wanted > 0 && freeSlots(limit, batch.reservedConcurrency, inFlight + claimed.length) > 0
          return {
            claimed,
            skipped,
            deferred,
            completed: [],
            busy: false,
            more,
            rechecksAt: undefined
          } satisfies ClaimResult
        }).pipe(Effect.catchIf(isLockTimeout, () => Effect.succeed(nothingClaimed(true))))

      const claim = Effect.fn("DispatchRepo.claim")(
        function*(orgId: string, batches: ReadonlyArray<DueBatch>, options: ClaimOptions) {
          if (batches.length === 1) return yield* claimOne(orgId, batches[0]!, options)
          const until = options.now + options.leaseMs
          return yield* sql.withTransaction(Effect.gen(function*() {
            // Another worker holding the lock is claiming for this org right now: wait for it (lockOrg). The limit
            // is read with the lock (claims do not change it); the calls in flight after it, in a new statement
            // whose snapshot includes every claim committed before the lock was granted.
            const limit = yield* lockOrg(orgId)
            if (limit === undefined) return nothingClaimed(false)
            const counts = yield* inFlightByBatch(orgId)
            let orgInFlight = 0
            const inFlight = new Map<string, number>()
            for (const row of counts) {
              orgInFlight += row.n
              inFlight.set(row.batch_call_id, row.n)
            }
            const claimed: Array<ClaimedTask> = []
            let skipped = 0
            let deferred = 0
            const active = new Map(batches.map((b) => [b.batchCallId, b]))
            const claimedPerBatch = new Map<string, number>()
            const exhausted: Array<string> = []
            const capped: Array<DueBatch> = []
            // Allocate, claim, and allocate again what batches could not use (they ran dry, or some of their tasks
            // were skipped), until no slot or no batch is left.
            while (active.size > 0) {
              const candidates: Array<AllocationCandidate> = []
              for (const batch of active.values()) {
                candidates.push({
                  batchCallId: batch.batchCallId,
                  reservedConcurrency: batch.reservedConcurrency,
                  inFlight: inFlight.get(batch.batchCallId) ?? 0
                })
              }
              const grants = allocate(limit, orgInFlight, candidates, Number.POSITIVE_INFINITY)
              if (grants.size === 0) break
              let progressed = false
              for (const [batchCallId, wanted] of grants) {
                const batch = active.get(batchCallId)!
                const budget = options.maxPerBatch - (claimedPerBatch.get(batchCallId) ?? 0)
                const n = Math.min(wanted, budget)
                // the function counts again, under the lock this transaction holds: orgInFlight, which this
                // transaction's own claims have kept up to date
                const rows = n <= 0
                  ? []
                  : (yield* claimRows(orgId, batch, n, options.owner, until, options.now, options.legal))?.rows ?? []
                let dialled = 0
                for (const row of rows) {
                  if (row.state === "skipped") {
                    skipped++
                    continue
                  }
                  if (row.state === "deferred") {
                    deferred++
                    continue
                  }
                  dialled++
                  claimed.push({
                    taskId: row.task_id,
                    orgId,
                    batchCallId,
                    taskIndex: row.task_index,
                    dueAt: batch.nextDispatchAt,
                    leaseExpiresAt: until,
                    request: toRequest(orgId, batch, row)
                  })
                }
                if (rows.length > 0) progressed = true
                orgInFlight += dialled
                inFlight.set(batchCallId, (inFlight.get(batchCallId) ?? 0) + dialled)
                claimedPerBatch.set(batchCallId, (claimedPerBatch.get(batchCallId) ?? 0) + rows.length)
                if (rows.length < n) {
                  // under the org's lock no other claim holds this batch's pending rows: it has run dry
                  exhausted.push(batchCallId)
                  active.delete(batchCallId)
                } else if (n < wanted) {
                  capped.push(batch)
                  active.delete(batchCallId)
                }
              }
              if (!progressed) break
            }
            let completed: ReadonlyArray<string> = []
            let rechecksAt: number | undefined
            if (exhausted.length > 0) {
              completed = yield* completeIfDoneStatement(exhausted)
              const resting = exhausted.filter((id) => !completed.includes(id))
              // nothing to claim until a task returns to pending (which wakes the batch), a blocked legal group
              // opens, or the batch completes
              if (resting.length > 0) rechecksAt = yield* restOrSleep(resting, options.legal, options.now)
            }
            const more = capped.some((b) => freeSlots(limit, b.reservedConcurrency, orgInFlight) > 0)
            return { claimed, skipped, deferred, completed, busy: false, more, rechecksAt }
          })).pipe(
            // the org lock (or, rarely, a row lock after it) was not granted within ORG_LOCK_WAIT_MS: nothing was
            // claimed (the transaction rolled back); the caller looks again shortly
            Effect.catchIf(
              isLockTimeout,
              () => Effect.succeed(nothingClaimed(true))
            )
          )
        },
        Effect.orDie
      )

      const extendLeases = (owner: string, taskIds: ReadonlyArray<string>, until: number) =>
        taskIds.length === 0 ? Effect.succeed([]) : sql<{ task_id: string }>`
          UPDATE batch_call_tasks SET lease_expires_at = ${until}
          -- rows another statement holds are skipped, not waited for (see expireLeases)
          WHERE task_id = ANY(ARRAY(
              SELECT task_id FROM batch_call_tasks
              WHERE task_id = ANY(${taskIds}::text[]::int8[]) AND state = 'dialling' AND lease_owner = ${owner}
              FOR UPDATE SKIP LOCKED))
          RETURNING task_id::text AS task_id`.pipe(
          Effect.map((rows) => rows.map((r) => r.task_id)),
          Effect.orDie,
          Effect.withSpan("DispatchRepo.extendLeases")
        )

      const claimUnknown = (owner: string, now: number, recheckMs: number, limit: number) =>
        sql<
          {
            task_id: string
            org_id: string
            batch_call_id: string
            from_number: string
            to_number: string
            retry_attempt: number
          }
        >`
          UPDATE batch_call_tasks t SET lease_owner = ${owner}, lease_expires_at = ${now + recheckMs}
          -- the ids are taken (and locked) once, whatever the statistics say (CallsRepo's feed explains why), in the
          -- order of the partial index that holds exactly the unknown tasks (batch_call_tasks_unknown, on org_id):
          -- ordered by task_id, the planner walked the primary key looking for them whenever the statistics put a
          -- few thousand among millions of tasks, which read every task when there were none (2-3 s a call, every
          -- pass of every worker; a test reproduces those statistics)
          WHERE t.task_id = ANY(ARRAY(
              SELECT task_id FROM batch_call_tasks
              WHERE state = 'unknown' AND (lease_expires_at IS NULL OR lease_expires_at <= ${now})
              ORDER BY org_id
              LIMIT ${limit}
              FOR UPDATE SKIP LOCKED))
          -- each task's batch by primary key: joined (FROM batch_calls), the generic plan of this prepared statement
          -- hashed the join over a scan of every batch ever created (a test counts the scans). A task never outlives
          -- its batch (trigger batch_calls_delete_tasks), so the batch is there
          RETURNING t.task_id::text AS task_id, t.org_id, t.batch_call_id,
            (SELECT b.from_number FROM batch_calls b WHERE b.batch_call_id = t.batch_call_id) AS from_number,
            t.to_number, t.retry_attempt`.pipe(
          Effect.map((rows) =>
            rows.map((r): UnknownTask => ({
              taskId: r.task_id,
              orgId: r.org_id,
              batchCallId: r.batch_call_id,
              fromNumber: r.from_number,
              toNumber: r.to_number,
              attempt: r.retry_attempt
            }))
          ),
          Effect.orDie,
          Effect.withSpan("DispatchRepo.claimUnknown")
        )

      const returnToPending = Effect.fn("DispatchRepo.returnToPending")(
        function*(owner: string, taskIds: ReadonlyArray<string>, now: number) {
          if (taskIds.length === 0) return 0
          const owners = yield* sql<{ org_id: string }>`
            SELECT DISTINCT org_id FROM batch_call_tasks WHERE task_id = ANY(${taskIds}::text[]::int8[])`
          let returned = 0
          for (const { org_id } of owners) {
            returned += yield* sql.withTransaction(Effect.gen(function*() {
              yield* lockOrg(org_id)
              const rows = yield* sql<{ batch_call_id: string }>`
                UPDATE batch_call_tasks SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL
                WHERE task_id = ANY(${taskIds}::text[]::int8[]) AND org_id = ${org_id}
                  AND state IN ('unknown', 'dialling') AND lease_owner = ${owner}
                RETURNING batch_call_id`
              const batches = [...new Set(rows.map((r) => r.batch_call_id))]
              if (batches.length > 0) {
                yield* sql`
                  UPDATE batch_calls SET next_dispatch_at = LEAST(next_dispatch_at, ${now})
                  WHERE batch_call_id = ANY(${batches}::text[]) AND status IN ('scheduled', 'in_progress')`
              }
              return rows.length
              // the org's lock stayed taken (lockOrg): these tasks keep their state and lease, so the reconciler
              // looks at them again at their next recheck, and a released dialling task's lease expires into it
            })).pipe(Effect.catchIf(isLockTimeout, () => Effect.succeed(0)))
          }
          return returned
        },
        Effect.orDie
      )

      const releaseToUnknown = (owner: string, taskIds: ReadonlyArray<string>, now: number) =>
        taskIds.length === 0 ? Effect.succeed(0) : sql`
          UPDATE batch_call_tasks SET state = 'unknown', lease_expires_at = ${now}
          WHERE task_id = ANY(${taskIds}::text[]::int8[]) AND state = 'dialling' AND lease_owner = ${owner}
          RETURNING 1`.pipe(
          Effect.map((rows) => rows.length),
          Effect.orDie,
          Effect.withSpan("DispatchRepo.releaseToUnknown")
        )

      const completeIfDone = (batchCallIds: ReadonlyArray<string>) =>
        batchCallIds.length === 0
          ? Effect.succeed([])
          : completeIfDoneStatement(batchCallIds).pipe(Effect.orDie, Effect.withSpan("DispatchRepo.completeIfDone"))

      const legalGroups = (batchCallIds: ReadonlyArray<string>) =>
        batchCallIds.length === 0 ? Effect.succeed([]) : sql<
          { batch_call_id: string; legal_group: number; zones: Array<string>; rule_ids: Array<string> }
        >`
          SELECT batch_call_id, legal_group, zones, rule_ids FROM batch_call_legal_groups
          WHERE batch_call_id = ANY(${batchCallIds}::text[])
          ORDER BY batch_call_id, legal_group`.pipe(
          Effect.map((rows) =>
            rows.map((r): StoredLegalGroup => ({
              batchCallId: r.batch_call_id,
              group: r.legal_group,
              zones: r.zones,
              ruleIds: r.rule_ids
            }))
          ),
          Effect.orDie,
          Effect.withSpan("DispatchRepo.legalGroups")
        )

      // Through batch_call_tasks_pending_by_group: the group's pending tasks only. Written when a group's state
      // changes (blocked with a new reason, or open again), not every pass (the Dispatcher remembers what it wrote).
      // `state_reason` is in no index and `state` does not change, so the updates can be HOT. A task waiting on its
      // attempt cap (not_before, decision 0624) keeps its `attempt_cap:` reason: the cap binds until then, and its
      // legal hours are looked at again when it may be claimed.
      const setLegalReason = (batchCallId: string, group: number, reason: string | null) =>
        (reason === null
          ? sql`
            UPDATE batch_call_tasks SET state_reason = NULL
            WHERE batch_call_id = ${batchCallId} AND legal_group = ${group} AND state = 'pending' AND not_before IS NULL
              AND state_reason LIKE 'legal_hours:%'
            RETURNING 1`
          : sql`
            UPDATE batch_call_tasks SET state_reason = ${reason}
            WHERE batch_call_id = ${batchCallId} AND legal_group = ${group} AND state = 'pending' AND not_before IS NULL
              AND state_reason IS DISTINCT FROM ${reason}
            RETURNING 1`).pipe(
            Effect.map((rows) => rows.length),
            Effect.orDie,
            Effect.withSpan("DispatchRepo.setLegalReason")
          )

      const orgPolicies = (orgIds: ReadonlyArray<string>) =>
        orgIds.length === 0
          ? Effect.succeed(new Map<string, EffectivePolicy>())
          : sql<{ org_id: string; override: unknown; version: number }>`
            SELECT org_id, override, version::float8 AS version FROM org_calling_policies
            WHERE org_id = ANY(${orgIds}::text[])`.pipe(
            Effect.map((rows) => new Map(rows.map((r) => [r.org_id, effectiveOf(r.override, r.version)]))),
            Effect.orDie,
            Effect.withSpan("DispatchRepo.orgPolicies")
          )

      return DispatchRepo.of({
        setLegalReason,
        legalGroups,
        orgPolicies,
        expireLeases,
        leaseOwners,
        releaseOwners,
        sweepAttempts,
        postpone,
        claim,
        extendLeases,
        claimUnknown,
        returnToPending,
        releaseToUnknown,
        completeIfDone,
        look
      })
    })
  )
}
