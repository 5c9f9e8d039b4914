/**
 * The org's advisory lock (docs/decisions/0401-scheduler-row-leasing.md): every claim of an org's tasks, every return
 * of its tasks to `pending` and every cancel of its batches (BatchProgressRepo) runs under it, so the calls in flight
 * counted after it is granted are the calls in flight.
 */
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { Effect } from "effect"
import type { SqlClient, SqlError } from "effect/sql"

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

/** A statement that waited longer than its `lock_timeout` (lockOrg's bound). */
export const isLockTimeout = (error: SqlError.SqlError) => error.cause._tag === "LockTimeoutError"

/**
 * The org's lock, waited for at most ORG_LOCK_WAIT_MS (a claim holds it for a few ms; waiting costs no CPU,
 * where polling cost every worker a pass each time). The bound keeps one stalled transaction from stopping a
 * worker's passes over every other org: past it the statement fails with LockTimeoutError (`isLockTimeout`).
 * `set_config` runs in its own plan node (OFFSET 0), so before the lock is requested; it holds for this
 * transaction only. The org's concurrency limit comes back in the same round trip (undefined: no such org); it
 * is read with the statement's snapshot, taken before the lock was granted, which is fine: claims do not
 * change it.
 *
 * @category models
 */
export const lockOrg = (sql: SqlClient.SqlClient, orgId: OrgId) =>
  sql<{ concurrency_limit: number | null }>`
    SELECT pg_advisory_xact_lock(${ORG_LOCK}, hashtext(${orgId}))::text AS locked,
      (SELECT concurrency_limit FROM orgs WHERE org_id = ${orgId}) AS concurrency_limit
    FROM (SELECT set_config('lock_timeout', ${`${ORG_LOCK_WAIT_MS}ms`}, true) OFFSET 0) s`.pipe(
    Effect.map((rows) => rows[0]?.concurrency_limit ?? undefined)
  )
