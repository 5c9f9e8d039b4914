/**
 * A batch with nothing left to claim: it completes when none of its tasks is pending or in flight; else it rests
 * (calls still in flight) or sleeps until its blocked legal groups open or its capped tasks may be dialled again
 * (decisions 0623, 0624). Runs under the org's lock, like every return of a task to `pending`.
 */
import type { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { BatchLegality } from "./LegalGroupsRepo.ts"
import { lockOrg } from "./OrgLock.ts"

/**
 * How long a batch with nothing left to claim (its last calls still in flight) is left alone before it is looked
 * at again. Completion and the return of a task to `pending` wake it earlier; this is the fallback.
 *
 * @category models
 */
export const IDLE_RECHECK_MS = 60_000

/** The statements over batches that ran dry, on `sql`. */
export const make = (sql: SqlClient.SqlClient) => {
  // Calls in flight are checked first (CASE evaluates in order): while a batch runs they nearly always exist, and
  // the pending check would walk the index entries of every task already claimed. Each check is a scalar
  // subquery with LIMIT 1 over the columns of its partial index (pending in task order): as EXISTS, the planner
  // was free to hash the check over every task in flight of every org, or to answer "no pending task" with a
  // sequential scan of the task table (seen in a generic plan: 170 ms a call; 4 ms a call on average with two
  // workers), and this runs after every record. A test counts the scans under a generic plan.
  const completeIfDoneStatement = (batchCallIds: ReadonlyArray<BatchCallId>) =>
    sql<{ batch_call_id: BatchCallId }>`
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
            -- decision 0551: then the pending check again, with a snapshot of its own (one more probe of the same
            -- index, only for a batch that looks complete): a retry-batch-call that re-queued finished tasks after
            -- this statement's snapshot was taken committed before this statement got the batch row, which the retry
            -- held, and only a fresh snapshot sees its tasks. Inside the CASE, so it is never evaluated first
            AND NOT batch_has_pending_task(b.batch_call_id)
        END
      RETURNING b.batch_call_id`.pipe(Effect.map((rows) => rows.map((r) => r.batch_call_id)))

  /**
   * Batches that ran dry (nothing pending left to claim) and did not complete (calls still in flight) rest until
   * IDLE_RECHECK_MS from now, each only while no task of it is pending and dialable: a task the claim could not
   * take (locked by another transaction) or one returned to `pending` since the claim keeps the batch due. A
   * batch whose pending tasks all wait on their attempt cap (`not_before`, decision 0624) sleeps until the
   * earliest of those instants instead (it cannot complete before, and a task returned to pending wakes it),
   * read through batch_call_tasks_deferred. Returns the batches that rest and when each is due again. Runs under
   * the org's lock, like every return of a task to `pending` (returnToPending).
   */
  const deferUntilRecheck = (batchCallIds: ReadonlyArray<BatchCallId>, now: number) =>
    sql<{ batch_call_id: BatchCallId; at: number }>`
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
  const sleepUntilLegal = (batchCallId: BatchCallId, legality: BatchLegality | undefined, now: number) =>
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
   * only blocked groups have pending tasks, else rests (`deferUntilRecheck`). Returns the earliest time one of them is due
   * again, if any sleeps or rests.
   */
  const reschedule = (
    batchCallIds: ReadonlyArray<BatchCallId>,
    legal: ReadonlyMap<string, BatchLegality> | undefined,
    now: number
  ) =>
    Effect.gen(function*() {
      let at: number | undefined
      const resting: Array<BatchCallId> = []
      for (const id of batchCallIds) {
        const opens = yield* sleepUntilLegal(id, legal?.get(id), now)
        if (opens === undefined) resting.push(id)
        else if (at === undefined || opens < at) at = opens
      }
      if (resting.length > 0) {
        for (const row of yield* deferUntilRecheck(resting, now)) if (at === undefined || row.at < at) at = row.at
      }
      return at
    })

  /**
   * After a one-statement claim found its batch dry: complete it, or let it rest or sleep until its legal groups
   * open (`reschedule`), under the org's lock.
   */
  const completeOrReschedule = (
    orgId: OrgId,
    batchCallId: BatchCallId,
    now: number,
    legal: ReadonlyMap<string, BatchLegality> | undefined
  ) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* lockOrg(sql, orgId)
      const completed = yield* completeIfDoneStatement([batchCallId])
      if (completed.length > 0) return { completed, rechecksAt: undefined }
      return { completed, rechecksAt: yield* reschedule([batchCallId], legal, now) }
    }))

  const completeIfDone = (batchCallIds: ReadonlyArray<BatchCallId>) =>
    batchCallIds.length === 0
      ? Effect.succeed([])
      : completeIfDoneStatement(batchCallIds).pipe(Effect.orDie, Effect.withSpan("DispatchRepo.completeIfDone"))

  return { completeIfDoneStatement, reschedule, completeOrReschedule, completeIfDone }
}

/** What `make` gives. */
export type DryBatches = ReturnType<typeof make>
