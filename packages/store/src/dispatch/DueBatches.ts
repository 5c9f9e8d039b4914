/**
 * Which batches are due (docs/decisions/0401-scheduler-row-leasing.md): a dispatch pass looks at the batches whose
 * `next_dispatch_at` has come and learns when the next waiting one does, in one statement; a batch outside its call
 * window is postponed to the window's next opening.
 */
import { CanonicalCallTimeWindow } from "@svc/domain/CallWindow.ts"
import type { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Effect, Schema } from "effect"
import type { SqlClient } from "effect/sql"

/**
 * A batch whose `next_dispatch_at` has come: its trigger time has passed and it was not waiting for a later window
 * opening.
 *
 * @category models
 */
export interface DueBatch {
  readonly batchCallId: BatchCallId
  readonly orgId: OrgId
  readonly fromNumber: string
  readonly reservedConcurrency: number
  /** The batch's cap on its own calls in flight (decision 0549); `undefined` = none. */
  readonly maxConcurrency?: number | undefined
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

interface DueRow {
  /** Branded as they are read: a row is where the scheduler's batch and org ids enter. */
  readonly batch_call_id: BatchCallId
  readonly org_id: OrgId
  readonly from_number: string
  readonly reserved_concurrency: number
  readonly max_concurrency: number | null
  readonly call_time_window: unknown
  readonly next_dispatch_at: number
  readonly policy_version: number
}

/** A row of `findDue`: a due batch, or only `next` (all else NULL) when none is due. */
type LookRow = { readonly [K in keyof DueRow]: DueRow[K] | null } & { readonly next: number | null }

const decodeWindow = Schema.decodeUnknownSync(CanonicalCallTimeWindow)

/** The statements over due batches, on `sql`; each layer built keeps its own cache of decoded windows. */
export const make = (sql: SqlClient.SqlClient) => {
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

  // One statement per pass for both questions: the dispatcher used to ask for the next wake time in a second
  // statement after its claims, whose answer waited behind the dials the claims had just started (Node's one
  // thread); that kept the loop from claiming the slots a recorder had freed meanwhile (~4 ms of a 20 ms cycle).
  // The outer row always exists (an aggregate), so `next` comes back when no batch is due.
  // Lease expiries are not wake times: the earliest lease across all orgs has no index to read it from (the
  // dialling index leads with org_id), so it cost a scan of every task in flight on each idle pass; measured at
  // ~4.5 ms a pass with 1,000 calls in flight, a tenth of PostgreSQL's time with two workers. The poll interval
  // bounds how late an expired lease is taken up instead (lease + at most one poll; docs/decisions/0401).
  const findDue = (now: number, limit: number) =>
    sql<LookRow>`
      SELECT d.batch_call_id, d.org_id, d.from_number, d.reserved_concurrency, d.max_concurrency, d.call_time_window,
        d.next_dispatch_at, d.policy_version, u.next
      FROM (
        SELECT min(next_dispatch_at)::float8 AS next FROM batch_calls
        WHERE status IN ('scheduled', 'in_progress') AND next_dispatch_at > ${now}
      ) u
      LEFT JOIN LATERAL (
        SELECT batch_call_id, org_id, from_number, reserved_concurrency, max_concurrency, call_time_window,
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
            maxConcurrency: found.max_concurrency ?? undefined,
            window: windowOf(found),
            nextDispatchAt: found.next_dispatch_at,
            policyVersion: found.policy_version
          })
        }
        return { due, next: rows[0]?.next ?? undefined }
      }),
      Effect.orDie,
      Effect.withSpan("DispatchRepo.findDue")
    )

  const postpone = (batches: ReadonlyArray<{ readonly batchCallId: BatchCallId; readonly at: number }>) =>
    batches.length === 0 ? Effect.void : sql`
      UPDATE batch_calls b SET next_dispatch_at = u.at
      FROM unnest(${batches.map((b) => b.batchCallId)}::text[], ${
      batches.map((b) => String(b.at))
    }::text[]::int8[]) AS u(id, at)
      WHERE b.batch_call_id = u.id`.pipe(Effect.asVoid, Effect.orDie, Effect.withSpan("DispatchRepo.postpone"))

  return { findDue, postpone }
}
