/**
 * What an operator asks about one batch (decision 0401, "Operations"; `npm run admin -- batch-status | batch-preview`):
 *
 * - **status**: tasks per state, the org's and the batch's calls in flight against the limit, whether the window
 *   is open, when it next opens and closes, and when the scheduler looks at the batch next.
 * - **preview**: when the batch's pending tasks would be dialled, given its window, its trigger time, the org's
 *   free slots (`concurrency_limit - reserved_concurrency - calls in flight of other batches`, which are assumed to
 *   go on) and an assumed call duration; `do_not_call` numbers are listed as skipped. Nothing is dialled or
 *   changed. The model is the dispatcher's: a call starts when a slot is free and the window is open, and a call
 *   started before the window closes runs to its end. Other batches of the org that start meanwhile would share
 *   the slots (fair share), which the preview does not foresee.
 *   Legal hours (decision 0623): `legal_hours` reports, per zone set (a legal group), how many pending
 *   tasks it holds, which rule holds them back at the preview's instant and when the group opens next, and per
 *   rule how many tasks are held back, under the org's calling policy (decision 0628); the dial-time simulation
 *   itself reads the window only. The preview answers the rows they are explained from (`StoredPreview`); the
 *   explanation is a compliance decision its caller runs (the domain's `compliance/LegalHoursReport.legalHoursOf`,
 *   then `previewReport`; dependency rule 3).
 */
import { CanonicalCallTimeWindow, isOpen, nextClosing, nextOpening } from "@svc/domain/CallWindow.ts"
import type { LegalHoursRows, LegalHoursSummary } from "@svc/domain/compliance/LegalHoursReport.ts"
import type { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { TaskStates } from "../batches/index.ts"
import { legalHoursRowsOf } from "./LegalHoursRows.ts"

/**
 * No batch with this id in the org.
 *
 * @category errors
 */
export class BatchNotFound extends Schema.TaggedError<BatchNotFound>()("BatchNotFound", {
  batchCallId: Schema.String,
  message: Schema.String
}) {}

/** @category models */
export interface BatchStatusReport {
  readonly batch_call_id: string
  readonly org_id: string
  readonly status: string
  /** Paused (pause-batch-call, decision 0549): no call of it starts until it is resumed. */
  readonly paused: boolean
  readonly total_task_count: number
  readonly tasks: Record<string, number>
  /**
   * Skipped tasks by why: `do_not_call` (the contact's flag), `suppressed` (the org's suppression list, decision
   * 0550), and any other reason as stored.
   */
  readonly skipped_by_reason: Record<string, number>
  readonly in_flight: {
    readonly batch: number
    readonly org: number
    readonly concurrency_limit: number
    readonly reserved_concurrency: number
    /** The batch's own cap (create-batch-call `max_concurrency`), or null. */
    readonly max_concurrency: number | null
    /**
     * Calls this batch could start now: `concurrency_limit - reserved_concurrency - org`, within its
     * `max_concurrency - batch`, at least 0 (0 while paused).
     */
    readonly free_slots: number
  }
  readonly trigger_timestamp: number | null
  readonly window_open_now: boolean
  /** The first instant from now (and not before the trigger time) at which the batch may dial. */
  readonly next_opening: number | null
  readonly next_opening_iso: string | null
  /** When the window next closes after `next_opening`; null without a window. */
  readonly next_closing: number | null
  readonly next_closing_iso: string | null
  readonly next_dispatch_at: number
  readonly next_dispatch_at_iso: string
  readonly as_of: number
}

/** @category models */
export interface PreviewOptions {
  /** The moment the preview starts from (default: now). */
  readonly at: number
  /** Assumed length of each call. */
  readonly callDurationMs: number
  /** How many tasks to list, in dial order. */
  readonly show: number
}

/** @category models */
export interface PreviewReport {
  readonly batch_call_id: string
  readonly as_of: number
  readonly assumptions: {
    readonly call_duration_ms: number
    readonly slots: number
    readonly other_calls_in_flight: number
    readonly batch_calls_in_flight: number
  }
  readonly pending: number
  readonly skipped_do_not_call: number
  readonly to_dial: number
  readonly first_dial_at: number | null
  readonly first_dial_at_iso: string | null
  readonly last_dial_at: number | null
  readonly last_dial_at_iso: string | null
  /** When the last call would end. */
  readonly done_at: number | null
  readonly done_at_iso: string | null
  /** Dials per open period of the window (the first 50 periods). */
  readonly periods: ReadonlyArray<{
    readonly first_dial_at_iso: string
    readonly last_dial_at_iso: string
    readonly closes_at_iso: string | null
    readonly dials: number
  }>
  /** The first `show` pending tasks in task order, with their dial time or why they are skipped. */
  readonly tasks: ReadonlyArray<{
    readonly task_index: number
    readonly to_number: string
    readonly dial_at: number | null
    readonly dial_at_iso: string | null
    readonly skip: "do_not_call" | null
  }>
  /** Why nothing would be dialled, when that is so. */
  readonly note: string | null
  /** Legal hours of the pending tasks at `as_of` (decision 0623). */
  readonly legal_hours: LegalHoursReport
}

/** @category models */
export interface LegalHoursReport {
  /** The version of the org's calling-policy override the report was computed under (0: the default policy). */
  readonly policy_version: number
  /** Pending tasks with no legal-hours constraint (not NANP, or created before legal groups existed). */
  readonly unconstrained: number
  /** Pending constrained tasks that may be dialled at `as_of` (legal in every zone, inside the window). */
  readonly dialable_now: number
  /** Pending tasks held back per binding rule label (`call_window` for the batch's window), largest first. */
  readonly held_back: ReadonlyArray<{ readonly rule: string; readonly tasks: number }>
  /** Pending tasks whose group has no opening within 14 days. */
  readonly never_within_horizon: number
  /** Each zone set (legal group) with pending tasks. */
  readonly zone_sets: ReadonlyArray<{
    readonly zones: ReadonlyArray<string>
    readonly rules: ReadonlyArray<string>
    readonly tasks: number
    /** The binding rule now (`FL 08:00-20:00`, `call_window`), or null when dialable. */
    readonly blocked_by: string | null
    /** The `state_reason` its tasks carry while blocked, or null. */
    readonly state_reason: string | null
    readonly next_opening_iso: string | null
  }>
}

/**
 * A preview as the store reads it: every field of `PreviewReport` but its legal hours, and the rows they are
 * explained from at `as_of`.
 *
 * @category models
 */
export type StoredPreview = Omit<PreviewReport, "legal_hours"> & { readonly legal_hours_rows: LegalHoursRows }

const iso = (ms: number | null | undefined) => ms === null || ms === undefined ? null : new Date(ms).toISOString()

/**
 * The preview with its legal hours: `summary` is the caller's explanation of its rows (`legalHoursOf`).
 *
 * @category encoding
 */
export const previewReport = (stored: StoredPreview, summary: LegalHoursSummary): PreviewReport => {
  const { legal_hours_rows: _rows, ...report } = stored
  return {
    ...report,
    legal_hours: {
      policy_version: summary.policyVersion,
      unconstrained: summary.unconstrained,
      dialable_now: summary.dialableNow,
      held_back: summary.heldBack,
      never_within_horizon: summary.neverWithinHorizon,
      zone_sets: summary.zoneSets.map((z) => ({
        zones: z.zones,
        rules: z.rules,
        tasks: z.tasks,
        blocked_by: z.blockedBy,
        state_reason: z.stateReason,
        next_opening_iso: iso(z.nextOpening)
      }))
    }
  }
}

/** A binary min-heap of numbers (slot free times). */
class MinHeap {
  private readonly items: Array<number> = []
  push(value: number) {
    const items = this.items
    items.push(value)
    let i = items.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (items[parent]! <= value) break
      items[i] = items[parent]!
      i = parent
    }
    items[i] = value
  }
  pop(): number {
    const items = this.items
    const top = items[0]!
    const last = items.pop()!
    if (items.length > 0) {
      let i = 0
      for (;;) {
        const left = 2 * i + 1
        if (left >= items.length) break
        const right = left + 1
        const child = right < items.length && items[right]! < items[left]! ? right : left
        if (items[child]! >= last) break
        items[i] = items[child]!
        i = child
      }
      items[i] = last
    }
    return top
  }
}

/**
 * Dial times of `count` calls under the dispatcher's model: each call takes a free slot when one is free and the
 * window is open; `busy` slots are occupied until `start + durationMs` (calls already in flight). Returns the time
 * of every dial in order, `undefined` entries never (an empty array when there are no slots).
 *
 * @category constructors
 */
export const dialTimes = (options: {
  readonly window: CanonicalCallTimeWindow | undefined
  readonly start: number
  readonly slots: number
  readonly busy: number
  readonly durationMs: number
  readonly count: number
}): Array<number> => {
  const { count, durationMs, slots, start, window } = options
  if (slots <= 0 || count <= 0) return []
  const heap = new MinHeap()
  for (let i = 0; i < slots; i++) heap.push(i < options.busy ? start + durationMs : start)
  const times = new Array<number>(count)
  for (let i = 0; i < count; i++) {
    let t = heap.pop()
    if (window !== undefined && !isOpen(window, t)) t = Option.getOrElse(nextOpening(window, t), () => t)
    times[i] = t
    heap.push(t + durationMs)
  }
  return times
}

const decodeWindow = Schema.decodeUnknownSync(CanonicalCallTimeWindow)

interface BatchRow {
  readonly org_id: string
  readonly status: string
  readonly total_task_count: number
  readonly reserved_concurrency: number
  readonly max_concurrency: number | null
  readonly call_time_window: unknown
  readonly trigger_timestamp: number | null
  readonly next_dispatch_at: number
  readonly concurrency_limit: number
  readonly batch_in_flight: number
  readonly org_in_flight: number
}

/**
 * Read-only views of a batch for operators.
 *
 * @category services
 */
export class DispatchInspect extends Context.Service<DispatchInspect, {
  readonly status: (
    orgId: OrgId,
    batchCallId: BatchCallId,
    now: number
  ) => Effect.Effect<BatchStatusReport, BatchNotFound>
  readonly preview: (
    orgId: OrgId,
    batchCallId: BatchCallId,
    options: PreviewOptions
  ) => Effect.Effect<StoredPreview, BatchNotFound>
}>()("@svc/store/DispatchInspect") {
  /** @category layers */
  static readonly layer: Layer.Layer<DispatchInspect, never, SqlClient.SqlClient> = Layer.effect(
    DispatchInspect,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const batchRow = (orgId: OrgId, batchCallId: BatchCallId) =>
        sql<BatchRow>`
          SELECT b.org_id, b.status, b.total_task_count, b.reserved_concurrency, b.max_concurrency, b.call_time_window,
            b.trigger_timestamp::float8 AS trigger_timestamp, b.next_dispatch_at::float8 AS next_dispatch_at,
            o.concurrency_limit,
            -- one count per state, each on its partial index (state IN (...) would scan every task)
            (SELECT count(*)::int4 FROM batch_call_tasks t
              WHERE t.org_id = b.org_id AND t.batch_call_id = b.batch_call_id AND t.state = 'dialling') +
            (SELECT count(*)::int4 FROM batch_call_tasks t
              WHERE t.org_id = b.org_id AND t.batch_call_id = b.batch_call_id AND t.state = 'unknown')
              AS batch_in_flight,
            (SELECT count(*)::int4 FROM batch_call_tasks t WHERE t.org_id = b.org_id AND t.state = 'dialling') +
            (SELECT count(*)::int4 FROM batch_call_tasks t WHERE t.org_id = b.org_id AND t.state = 'unknown')
              AS org_in_flight
          FROM batch_calls b JOIN orgs o ON o.org_id = b.org_id
          WHERE b.org_id = ${orgId} AND b.batch_call_id = ${batchCallId}`.pipe(
          Effect.orDie,
          Effect.flatMap((rows) =>
            rows[0] === undefined
              ? Effect.fail(
                new BatchNotFound({ batchCallId, message: `no batch call ${batchCallId} in org ${orgId}` })
              )
              : Effect.succeed(rows[0])
          )
        )

      const windowOf = (row: BatchRow) => row.call_time_window === null ? undefined : decodeWindow(row.call_time_window)

      const status = Effect.fn("DispatchInspect.status")(
        function*(orgId: OrgId, batchCallId: BatchCallId, now: number) {
          const row = yield* batchRow(orgId, batchCallId)
          const counts = yield* sql<{ state: string; n: number }>`
          SELECT state, count(*)::int4 AS n FROM batch_call_tasks
          WHERE org_id = ${orgId} AND batch_call_id = ${batchCallId} GROUP BY state`.pipe(Effect.orDie)
          const tasks: Record<string, number> = Object.fromEntries(TaskStates.map((s) => [s, 0]))
          for (const c of counts) tasks[c.state] = c.n
          // the skipped ones by reason, suppressions (`suppressed (<source>)`) together: off batch_call_tasks_by_state
          const reasons = yield* sql<{ reason: string; n: number }>`
          SELECT CASE WHEN state_reason LIKE 'suppressed (%' THEN 'suppressed' ELSE coalesce(state_reason, '') END
            AS reason, count(*)::int4 AS n
          FROM batch_call_tasks WHERE batch_call_id = ${batchCallId} AND state = 'skipped' GROUP BY 1`.pipe(
            Effect.orDie
          )
          const skipped: Record<string, number> = { do_not_call: 0, suppressed: 0 }
          for (const r of reasons) skipped[r.reason] = (skipped[r.reason] ?? 0) + r.n
          const window = windowOf(row)
          const from = Math.max(now, row.trigger_timestamp ?? now)
          const opening = window === undefined ? from : Option.getOrNull(nextOpening(window, from))
          const closing = window === undefined || opening === null
            ? null
            : Option.getOrNull(nextClosing(window, opening))
          return {
            batch_call_id: batchCallId,
            org_id: orgId,
            status: row.status,
            paused: row.status === "paused",
            total_task_count: row.total_task_count,
            tasks,
            skipped_by_reason: skipped,
            in_flight: {
              batch: row.batch_in_flight,
              org: row.org_in_flight,
              concurrency_limit: row.concurrency_limit,
              reserved_concurrency: row.reserved_concurrency,
              max_concurrency: row.max_concurrency,
              free_slots: row.status === "paused" ? 0 : Math.max(
                0,
                Math.min(
                  row.concurrency_limit - row.reserved_concurrency - row.org_in_flight,
                  (row.max_concurrency ?? Number.POSITIVE_INFINITY) - row.batch_in_flight
                )
              )
            },
            trigger_timestamp: row.trigger_timestamp,
            window_open_now: window === undefined || isOpen(window, now),
            next_opening: opening,
            next_opening_iso: iso(opening),
            next_closing: closing,
            next_closing_iso: iso(closing),
            next_dispatch_at: row.next_dispatch_at,
            next_dispatch_at_iso: new Date(row.next_dispatch_at).toISOString(),
            as_of: now
          } satisfies BatchStatusReport
        }
      )

      const preview = Effect.fn("DispatchInspect.preview")(
        function*(orgId: OrgId, batchCallId: BatchCallId, options: PreviewOptions) {
          const row = yield* batchRow(orgId, batchCallId)
          const window = windowOf(row)
          const [counts] = yield* sql<{ pending: number; dnc: number }>`
            SELECT count(*)::int4 AS pending,
              (count(*) FILTER (WHERE EXISTS (
                SELECT 1 FROM contacts k WHERE k.org_id = t.org_id AND k.phone_number = t.to_number AND k.do_not_call
              )))::int4 AS dnc
            FROM batch_call_tasks t
            WHERE t.batch_call_id = ${batchCallId} AND t.state = 'pending'`.pipe(Effect.orDie)
          const listed = yield* sql<{ task_index: number; to_number: string; dnc: boolean }>`
            SELECT t.task_index, t.to_number, EXISTS (
              SELECT 1 FROM contacts k WHERE k.org_id = t.org_id AND k.phone_number = t.to_number AND k.do_not_call
            ) AS dnc
            FROM batch_call_tasks t
            WHERE t.batch_call_id = ${batchCallId} AND t.state = 'pending'
            ORDER BY t.task_index
            LIMIT ${options.show}`.pipe(Effect.orDie)
          const pending = counts?.pending ?? 0
          const skipped = counts?.dnc ?? 0
          // the pending tasks per legal group, explained by the caller at `as_of`
          const legalHours = yield* legalHoursRowsOf(orgId, batchCallId, window, options.at).pipe(
            Effect.provideService(SqlClient.SqlClient, sql)
          )
          const others = row.org_in_flight - row.batch_in_flight
          // the batch's own cap binds too (decision 0549)
          const slots = Math.min(
            Math.max(0, row.concurrency_limit - row.reserved_concurrency - others),
            row.max_concurrency ?? Number.POSITIVE_INFINITY
          )
          const start = Math.max(options.at, row.trigger_timestamp ?? options.at)
          const times = dialTimes({
            window,
            start,
            slots,
            busy: Math.min(slots, row.batch_in_flight),
            durationMs: options.callDurationMs,
            count: pending - skipped
          })
          const periods: Array<PreviewReport["periods"][number]> = []
          let current: { first: number; last: number; closes: number | null; dials: number } | undefined
          for (const t of times) {
            if (current !== undefined && (current.closes === null || t < current.closes)) {
              current.last = t
              current.dials++
              continue
            }
            if (current !== undefined && periods.length < 50) periods.push(toPeriod(current))
            current = {
              first: t,
              last: t,
              closes: window === undefined ? null : Option.getOrNull(nextClosing(window, t)),
              dials: 1
            }
          }
          if (current !== undefined && periods.length < 50) periods.push(toPeriod(current))
          let rank = 0
          const tasks = listed.map((task) => {
            const at = task.dnc ? null : times[rank++] ?? null
            return {
              task_index: task.task_index,
              to_number: task.to_number,
              dial_at: at,
              dial_at_iso: iso(at),
              skip: task.dnc ? "do_not_call" as const : null
            }
          })
          const first = times[0] ?? null
          const last = times[times.length - 1] ?? null
          return {
            batch_call_id: batchCallId,
            as_of: options.at,
            assumptions: {
              call_duration_ms: options.callDurationMs,
              slots,
              other_calls_in_flight: others,
              batch_calls_in_flight: row.batch_in_flight
            },
            pending,
            skipped_do_not_call: skipped,
            to_dial: pending - skipped,
            first_dial_at: first,
            first_dial_at_iso: iso(first),
            last_dial_at: last,
            last_dial_at_iso: iso(last),
            done_at: last === null ? null : last + options.callDurationMs,
            done_at_iso: iso(last === null ? null : last + options.callDurationMs),
            periods,
            tasks,
            note: row.status === "completed" || row.status === "cancelled"
              ? `the batch is ${row.status}: nothing is dialled`
              : slots === 0 && pending - skipped > 0
              ? "no free slot: concurrency_limit - reserved_concurrency - other calls in flight is 0"
              : null,
            legal_hours_rows: legalHours
          } satisfies StoredPreview
        }
      )

      return DispatchInspect.of({ status, preview })
    })
  )
}

const toPeriod = (p: { first: number; last: number; closes: number | null; dials: number }) => ({
  first_dial_at_iso: new Date(p.first).toISOString(),
  last_dial_at_iso: new Date(p.last).toISOString(),
  closes_at_iso: iso(p.closes),
  dials: p.dials
})
