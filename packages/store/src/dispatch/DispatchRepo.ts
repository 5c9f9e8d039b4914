/**
 * The scheduler's statements over batch calls and their tasks (decision 0401):
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
 *
 * One concept a file, composed here into the service the scheduler uses: DueBatches (`findDue`, `postpone`), Claims
 * (`claim`), DryBatches (completion, rest and sleep of a batch that ran dry), Leases (renewal, expiry, release,
 * reconciliation), Attempts (the attempt caps' records), LegalGroupsRepo (groups, policies, reasons) and OrgLock.
 */
import type { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { StoredPolicy } from "../policies/index.ts"
import * as Attempts from "./Attempts.ts"
import * as Claims from "./Claims.ts"
import type { ClaimOptions, ClaimResult } from "./Claims.ts"
import * as DryBatches from "./DryBatches.ts"
import * as DueBatches from "./DueBatches.ts"
import type { DueBatch, DueView } from "./DueBatches.ts"
import * as Leases from "./Leases.ts"
import type { UnknownTask } from "./Leases.ts"
import * as LegalGroupsRepo from "./LegalGroupsRepo.ts"
import type { StoredLegalGroup } from "./LegalGroupsRepo.ts"

// the models and constants callers have always imported from here
export { ATTEMPTS_KEPT_MS } from "./Attempts.ts"
export type { ClaimedTask, ClaimOptions, ClaimResult } from "./Claims.ts"
export { IDLE_RECHECK_MS } from "./DryBatches.ts"
export type { DueBatch, DueView } from "./DueBatches.ts"
export type { UnknownTask } from "./Leases.ts"
export type { BatchLegality, GroupCap, StoredLegalGroup } from "./LegalGroupsRepo.ts"
export { ORG_LOCK, ORG_LOCK_WAIT_MS } from "./OrgLock.ts"

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
  readonly findDue: (now: number, limit: number) => Effect.Effect<DueView>
  /** Moves each batch's `next_dispatch_at` to the given time (its window's next opening). */
  readonly postpone: (
    batches: ReadonlyArray<{ readonly batchCallId: BatchCallId; readonly at: number }>
  ) => Effect.Effect<void>
  /** Claims tasks of the org's open, due batches, sharing the free slots fairly; one transaction. */
  readonly claim: (
    orgId: OrgId,
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
  readonly completeIfDone: (batchCallIds: ReadonlyArray<BatchCallId>) => Effect.Effect<ReadonlyArray<BatchCallId>>
  /**
   * Sets the `state_reason` of a legal group's pending tasks (why they wait: `legal_hours: ...`), or clears a
   * `legal_hours` reason when `reason` is null; one statement, rows already right are not written. Returns how many
   * changed.
   */
  readonly setLegalReason: (batchCallId: BatchCallId, group: number, reason: string | null) => Effect.Effect<number>
  /** The legal groups of these batches (immutable once created: callers may keep them). */
  readonly legalGroups: (batchCallIds: ReadonlyArray<BatchCallId>) => Effect.Effect<ReadonlyArray<StoredLegalGroup>>
  /**
   * The stored calling-policy overrides of these orgs (an org without one is absent: the default policy, version 0);
   * callers decide what each makes of the policy (`effectiveOf`) and keep them by version (`DueBatch.policyVersion`).
   */
  readonly orgPolicies: (orgIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, StoredPolicy>>
}>()("@svc/store/DispatchRepo") {
  /** @category layers */
  static readonly layer: Layer.Layer<DispatchRepo, never, SqlClient.SqlClient> = Layer.effect(
    DispatchRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const dry = DryBatches.make(sql)
      const due = DueBatches.make(sql)
      const claims = Claims.make(sql, dry)
      const leases = Leases.make(sql)
      const attempts = Attempts.make(sql)
      const legal = LegalGroupsRepo.make(sql)

      return DispatchRepo.of({
        setLegalReason: legal.setLegalReason,
        legalGroups: legal.legalGroups,
        orgPolicies: legal.orgPolicies,
        expireLeases: leases.expireLeases,
        leaseOwners: leases.leaseOwners,
        releaseOwners: leases.releaseOwners,
        sweepAttempts: attempts.sweepAttempts,
        postpone: due.postpone,
        claim: claims.claim,
        extendLeases: leases.extendLeases,
        claimUnknown: leases.claimUnknown,
        returnToPending: leases.returnToPending,
        releaseToUnknown: leases.releaseToUnknown,
        completeIfDone: dry.completeIfDone,
        findDue: due.findDue
      })
    })
  )
}
