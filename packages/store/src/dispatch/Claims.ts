/**
 * Claiming tasks for dialling (docs/decisions/0401-scheduler-row-leasing.md): under the org's lock, the calls in
 * flight counted after it is granted, the free slots shared among the org's due batches (DispatchAllocation), and
 * each batch's pending tasks taken in task order within its share: for one open batch in one statement
 * (`scheduler_claim`, migration 0010), else one per batch and round of the allocation, in one transaction.
 */
import type { BatchCallId, CallId, OrgId } from "@svc/domain/models/Ids.ts"
import { attemptKey } from "@svc/domain/models/RetryPolicy.ts"
import type { DialRequest } from "@svc/domain/ports/Dialer.ts"
import { Effect, type Schema } from "effect"
import type { SqlClient } from "effect/sql"
import { allocate, type AllocationCandidate, freeSlots } from "./DispatchAllocation.ts"
import type { DryBatches } from "./DryBatches.ts"
import type { DueBatch } from "./DueBatches.ts"
import type { BatchLegality, GroupCap } from "./LegalGroupsRepo.ts"
import { isLockTimeout, lockOrg, ORG_LOCK, ORG_LOCK_WAIT_MS } from "./OrgLock.ts"

/**
 * A task claimed for dialling: its lease and the request that carries its overrides.
 *
 * @category models
 */
export interface ClaimedTask {
  readonly taskId: string
  /** The org of the due batch it was claimed for, branded as that row was read (DueBatches). */
  readonly orgId: OrgId
  readonly batchCallId: BatchCallId
  readonly taskIndex: number
  /** When the batch became dispatchable (the lag metric runs from here to the dial). */
  readonly dueAt: number
  readonly leaseExpiresAt: number
  readonly request: DialRequest
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
  /** Tasks set to `skipped` (their number belongs to a `do_not_call` contact or is suppressed). */
  readonly skipped: number
  /** Of `skipped`, those whose number is on the org's suppression list (decision 0550). */
  readonly suppressed: number
  /** Tasks left pending because their number reached its attempt cap (`not_before` set; decision 0624). */
  readonly deferred: number
  /** Batches that completed in this transaction (nothing pending, nothing in flight). */
  readonly completed: ReadonlyArray<BatchCallId>
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

interface ClaimRow {
  readonly task_id: string
  readonly task_index: number
  readonly to_number: string
  /**
   * `deferred`: at its attempt cap, left pending (migration 0023). A deferred or skipped row's `call_id` holds its
   * `state_reason` instead.
   */
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

/** A row of `scheduler_claim` (migrations 0010, 0012, 0030): a claimed task, or the summary (task columns NULL). */
type ClaimFunctionRow = { readonly [K in keyof ClaimRow]: ClaimRow[K] | null } & {
  readonly org_limit: number | null
  readonly org_in_flight: number | null
  /** Summary: false when the batch may not be claimed (paused or finished; decision 0549). */
  readonly batch_open: boolean | null
  /** Summary: the batch's calls in flight, counted under the lock when it has a `max_concurrency`. */
  readonly batch_in_flight: number | null
}

/** A skipped task's `state_reason` when the suppression list skipped it (scheduler_claim, decision 0550). */
const isSuppression = (reason: string | null) => reason !== null && reason.startsWith("suppressed (")

/** The dial request of a claimed row: the batch's from_number and the task's overrides, absent keys omitted. */
const toRequest = (orgId: OrgId, batch: DueBatch, row: ClaimRow): DialRequest => {
  const request: {
    -readonly [K in keyof DialRequest]: DialRequest[K]
  } = {
    // the task id for its first call, as before retries; `<task id>:<n>` for its n-th (decision 0625)
    idempotency_key: attemptKey(row.task_id, row.call_attempt),
    // a dialling row's call_id is its call's id (svc_call_id): branded as it is read, a type only
    call_id: (row.call_id ?? "") as CallId,
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

/**
 * Sorts the rows one claim statement returned for `batch`: the tasks to dial are appended to `claimed` (their lease
 * runs until `until`), the skipped (`do_not_call`) and deferred (at an attempt cap) ones only counted.
 */
const sortRows = (
  orgId: OrgId,
  batch: DueBatch,
  rows: ReadonlyArray<ClaimRow>,
  until: number,
  claimed: Array<ClaimedTask>
): { readonly skipped: number; readonly suppressed: number; readonly deferred: number } => {
  let skipped = 0
  let suppressed = 0
  let deferred = 0
  for (const row of rows) {
    if (row.state === "skipped") {
      skipped++
      if (isSuppression(row.call_id)) suppressed++
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
  return { skipped, suppressed, deferred }
}

/** A claim that took nothing: the org is gone, or (`busy`) its lock stayed taken past ORG_LOCK_WAIT_MS. */
const nothingClaimed = (busy: boolean): ClaimResult => ({
  claimed: [],
  skipped: 0,
  suppressed: 0,
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
const groupsParam = (legal: ReadonlyMap<string, BatchLegality> | undefined, batchCallId: BatchCallId) => {
  if (legal === undefined) return null
  const own = legal.get(batchCallId)
  if (own === undefined) return []
  return own.blocked.length === 0 ? null : [...own.legal]
}

const noCaps: ReadonlyArray<GroupCap> = []

/** The batch's group caps (none without a legality map: nothing constrained). */
const capsOf = (legal: ReadonlyMap<string, BatchLegality> | undefined, batchCallId: BatchCallId) =>
  legal?.get(batchCallId)?.caps ?? noCaps

/**
 * How many more calls the batch may have in flight by its own `max_concurrency` (decision 0549): unbounded without
 * one; `inFlight` is the batch's calls in flight, counted under the org's lock.
 */
const batchRoom = (batch: DueBatch, inFlight: number) =>
  batch.maxConcurrency === undefined ? Number.POSITIVE_INFINITY : Math.max(0, batch.maxConcurrency - inFlight)

/** The claim's statements, on `sql`; a batch found dry is handed to `dry`. */
export const make = (sql: SqlClient.SqlClient, dry: DryBatches) => {
  const { completeIfDoneStatement, completeOrReschedule, reschedule } = dry

  // One query per state: each has its partial index (batch_call_tasks_dialling, _unknown); `state IN (...)`
  // would make the planner scan the whole task table.
  const inFlightByBatch = (orgId: OrgId) =>
    sql<{ batch_call_id: string; n: number }>`
      SELECT batch_call_id, count(*)::int4 AS n FROM (
        SELECT batch_call_id FROM batch_call_tasks WHERE org_id = ${orgId} AND state = 'dialling'
        UNION ALL
        SELECT batch_call_id FROM batch_call_tasks WHERE org_id = ${orgId} AND state = 'unknown'
      ) t
      GROUP BY batch_call_id`

  // A batch's claim in one statement (migration 0010 says why, and holds the SQL): the org's lock, its limit
  // and calls in flight counted after the lock, then up to `max` of the batch's pending tasks in task order,
  // within the batch's ceiling. The rows are taken by primary key whatever the plan, and the do-not-call check
  // runs once per row (DispatchClaims.integration.test.ts counts both under a generic plan). The function
  // returns the tasks, then a summary row (task_id NULL) with the limit and the calls in flight before the
  // claim; undefined here: no such org.
  const claimRows = (
    orgId: OrgId,
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
          inFlight: summary.org_in_flight,
          open: summary.batch_open !== false,
          batchInFlight: summary.batch_in_flight ?? 0
        }
      })
    )
  }

  /** The claim of an org with one open batch: one statement, then rarely a second (the batch ran dry). */
  const claimOne = (orgId: OrgId, batch: DueBatch, options: ClaimOptions) =>
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
      // no such org, or a batch paused (or finished) since it was seen due: nothing to claim, and not dry
      if (result === undefined || !result.open) return nothingClaimed(false)
      const { batchInFlight, inFlight, limit, rows } = result
      const room = batchRoom(batch, batchInFlight)
      const wanted = Math.min(options.maxPerBatch, freeSlots(limit, batch.reservedConcurrency, inFlight), room)
      const claimed: Array<ClaimedTask> = []
      const { deferred, skipped, suppressed } = sortRows(orgId, batch, rows, until, claimed)
      if (wanted > 0 && rows.length < wanted) {
        // under the org's lock no other claim held this batch's pending rows: it has run dry
        const dry = yield* completeOrReschedule(orgId, batch.batchCallId, options.now, options.legal)
        return {
          claimed,
          skipped,
          suppressed,
          deferred,
          completed: dry.completed,
          busy: false,
          more: false,
          rechecksAt: dry.rechecksAt
        }
      }
      // it took all it asked for: claim again at once if slots are left (its skipped tasks took none)
      const more = wanted > 0 && freeSlots(limit, batch.reservedConcurrency, inFlight + claimed.length) > 0 &&
        room - claimed.length > 0
      return {
        claimed,
        skipped,
        suppressed,
        deferred,
        completed: [],
        busy: false,
        more,
        rechecksAt: undefined
      } satisfies ClaimResult
    }).pipe(Effect.catchIf(isLockTimeout, () => Effect.succeed(nothingClaimed(true))))

  const claim = Effect.fn("DispatchRepo.claim")(
    function*(orgId: OrgId, batches: ReadonlyArray<DueBatch>, options: ClaimOptions) {
      if (batches.length === 1) return yield* claimOne(orgId, batches[0]!, options)
      const until = options.now + options.leaseMs
      return yield* sql.withTransaction(Effect.gen(function*() {
        // Another worker holding the lock is claiming for this org right now: wait for it (lockOrg). The limit
        // is read with the lock (claims do not change it); the calls in flight after it, in a new statement
        // whose snapshot includes every claim committed before the lock was granted.
        const limit = yield* lockOrg(sql, orgId)
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
        let suppressed = 0
        let deferred = 0
        const active = new Map(batches.map((b) => [b.batchCallId, b]))
        const claimedPerBatch = new Map<string, number>()
        const exhausted: Array<BatchCallId> = []
        const capped: Array<DueBatch> = []
        // Allocate, claim, and allocate again what batches could not use (they ran dry, or some of their tasks
        // were skipped), until no slot or no batch is left.
        while (active.size > 0) {
          const candidates: Array<AllocationCandidate<BatchCallId>> = []
          for (const batch of active.values()) {
            candidates.push({
              batchCallId: batch.batchCallId,
              reservedConcurrency: batch.reservedConcurrency,
              inFlight: inFlight.get(batch.batchCallId) ?? 0,
              maxConcurrency: batch.maxConcurrency
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
            const result = n <= 0
              ? undefined
              : yield* claimRows(orgId, batch, n, options.owner, until, options.now, options.legal)
            if (result !== undefined && !result.open) {
              // paused (or finished) since it was seen due: neither dry nor capped, just out of this claim
              active.delete(batchCallId)
              continue
            }
            const rows = result?.rows ?? []
            const before = claimed.length
            const sorted = sortRows(orgId, batch, rows, until, claimed)
            skipped += sorted.skipped
            suppressed += sorted.suppressed
            deferred += sorted.deferred
            const dialled = claimed.length - before
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
        let completed: ReadonlyArray<BatchCallId> = []
        let rechecksAt: number | undefined
        if (exhausted.length > 0) {
          completed = yield* completeIfDoneStatement(exhausted)
          const resting = exhausted.filter((id) => !completed.includes(id))
          // nothing to claim until a task returns to pending (which wakes the batch), a blocked legal group
          // opens, or the batch completes
          if (resting.length > 0) rechecksAt = yield* reschedule(resting, options.legal, options.now)
        }
        const more = capped.some((b) =>
          freeSlots(limit, b.reservedConcurrency, orgInFlight) > 0 &&
          batchRoom(b, inFlight.get(b.batchCallId) ?? 0) > 0
        )
        return { claimed, skipped, suppressed, deferred, completed, busy: false, more, rechecksAt }
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

  return { claim }
}
