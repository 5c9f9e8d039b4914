/**
 * Leases of the tasks being dialled (docs/decisions/0401-scheduler-row-leasing.md): renewal, expiry into `unknown`,
 * release of a dead or stopping worker's tasks, and the reconciler's look at `unknown` tasks, which either go back
 * to `pending` (never placed; under the org's lock) or stay for the next look.
 */
import type { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { isLockTimeout, lockOrg } from "./OrgLock.ts"

/**
 * An `unknown` task taken for reconciliation by one worker (its lease is the time of the next look).
 *
 * @category models
 */
export interface UnknownTask {
  readonly taskId: string
  readonly orgId: OrgId
  readonly batchCallId: BatchCallId
  readonly fromNumber: string
  readonly toNumber: string
  /** Which call of the task is in doubt (its key: `attemptKey(taskId, attempt)`; decision 0625). */
  readonly attempt: number
}

/** The statements over leases, on `sql`. */
export const make = (sql: SqlClient.SqlClient) => {
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
        org_id: OrgId // branded as it is read: a row is where the scheduler's org ids enter
        batch_call_id: BatchCallId
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
      const owners = yield* sql<{ org_id: OrgId }>`
        SELECT DISTINCT org_id FROM batch_call_tasks WHERE task_id = ANY(${taskIds}::text[]::int8[])`
      let returned = 0
      for (const { org_id } of owners) {
        returned += yield* sql.withTransaction(Effect.gen(function*() {
          yield* lockOrg(sql, org_id)
          const rows = yield* sql<{ batch_call_id: BatchCallId }>`
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

  return {
    expireLeases,
    leaseOwners,
    releaseOwners,
    extendLeases,
    claimUnknown,
    returnToPending,
    releaseToUnknown
  }
}
