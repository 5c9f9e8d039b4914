/**
 * Finished calls (decision 0401, "Calls feed contacts"): a task's final state and its call with the post-call analysis
 * data are written in one statement, together with an entry in `contact_feed`; a second statement, run in batches
 * off the dispatch path, takes entries from `contact_feed` and applies them to the contacts. Both are single
 * statements, so a crash leaves either all of a step or none of it.
 *
 * Invariants:
 * - A task is finished once, with one call row: only a task still `dialling` or `unknown` is updated, and the call
 *   is inserted only for a task that update finished. A result reported twice (the worker that dialled and a
 *   reconciler that looked the call up) counts once: the second statement waits for the first's row lock, then
 *   finds the task final (READ COMMITTED re-checks the updated row) and inserts nothing. Within one statement,
 *   results are deduplicated by task id first (migration 0009 says why this is not a unique constraint).
 * - Every recorded call reaches its contact exactly once: its feed entry is written with the call and deleted in
 *   the statement that updates the contact (`FOR UPDATE SKIP LOCKED`, so feeders on several workers never share
 *   an entry).
 * - Every fed call adds 1 to its contact's `conversation_count` and moves `last_conversation_timestamp` to the
 *   call's start if later (spec, Contact: "Number of calls and chats with the contact"; every placed call that
 *   ended counts, whatever its outcome).
 * - A number that is no contact yet becomes one (decision in docs/decisions/0401-scheduler-row-leasing.md: the
 *   call history and a later opt-out need a record to live on), unless it is not E.164 (a task that set
 *   `ignore_e164_validation`): a contact's `phone_number` is E.164 (spec, Contact), so such calls are not fed.
 *
 * Why two steps: updating a contact costs more than the rest of a dial's bookkeeping together (the contacts table
 * carries two GIN indexes, and a changed `last_conversation_timestamp` is never a HOT update), and it takes the
 * contact's row lock, which a user's edit or a backfill may hold. Off the dispatch path, neither delays the release
 * of a concurrency slot, and calls to one contact in a batch of entries become one update. Contacts trail their
 * calls by the feeder's period (a fraction of a second).
 */
import { isDisconnectionReason } from "@svc/domain/models/Call.ts"
import { isE164 } from "@svc/domain/models/E164.ts"
import type { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { retryReasonOf } from "@svc/domain/models/RetryPolicy.ts"
import type { CallEnded } from "@svc/domain/ports/Dialer.ts"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { searchTextExpression } from "../contacts/index.ts"

/**
 * A task whose dial is over: `completed` with the call when one was placed and ended, `failed` with a reason
 * (a call that failed, a dial the carrier refused).
 *
 * @category models
 */
export interface FinishedTask {
  readonly taskId: string
  /** As the claimed (or reconciled) task carries them, branded as its row was read. */
  readonly orgId: OrgId
  readonly batchCallId: BatchCallId
  readonly fromNumber: string
  readonly toNumber: string
  readonly state: "completed" | "failed"
  readonly reason: string
  readonly call: CallEnded | undefined
}

/** @category models */
export interface RecordResult {
  /** Tasks finished by this call (the others were already finished). */
  readonly finished: number
  /** Batches of those tasks, branded as the statement returns them. */
  readonly batchCallIds: ReadonlyArray<BatchCallId>
}

/**
 * `pg_try_advisory_xact_lock(FEED_LOCK)` ("svc:feed"): one contact feed runs at a time across all workers. One
 * feeder keeps up with any dispatch rate (a statement applies thousands of calls), and feeders running side by side
 * would only take CPU from dispatch and wait on each other's contact rows.
 *
 * @category models
 */
export const FEED_LOCK = 0x5356_4645

/**
 * A column array as a bind parameter: the driver cannot type an array of only NULLs, so such a column is bound
 * empty, which `unnest` pads with NULLs to the length of the longest array (the same thing).
 */
const column = <A>(values: Array<A | null>): Array<A | null> => values.some((v) => v !== null) ? values : []

/** The tasks with the first result of each task id; the array itself when there are no repeats (the usual case). */
const uniqueByTask = (tasks: ReadonlyArray<FinishedTask>): ReadonlyArray<FinishedTask> => {
  const seen = new Set<string>()
  for (const task of tasks) seen.add(task.taskId)
  if (seen.size === tasks.length) return tasks
  seen.clear()
  return tasks.filter((task) => seen.has(task.taskId) ? false : (seen.add(task.taskId), true))
}

/**
 * The disconnection reason of a dial the carrier refused (`rejected: <reason>`, no call placed): the carrier's
 * reason when it is one of the vendor's (e.g. `invalid_destination`), else `dial_failed` (decision 0510).
 */
const rejectedReason = (reason: string): string => {
  const given = reason.startsWith("rejected: ") ? reason.slice("rejected: ".length) : ""
  return isDisconnectionReason(given) ? given : "dial_failed"
}

/**
 * Calls in PostgreSQL.
 *
 * @category services
 */
export class CallsRepo extends Context.Service<CallsRepo, {
  /** Records finished tasks and their calls, queueing the calls for their contacts; one statement. */
  readonly recordFinished: (tasks: ReadonlyArray<FinishedTask>, now: number) => Effect.Effect<RecordResult>
  /**
   * Applies up to `limit` queued calls to their contacts (oldest first); returns how many calls it applied, or
   * `undefined` when another worker's feed is running (one feeds at a time: see FEED_LOCK).
   */
  readonly feedContacts: (limit: number, now: number) => Effect.Effect<number | undefined>
}>()("@svc/store/CallsRepo") {
  /** @category layers */
  static readonly layer: Layer.Layer<CallsRepo, never, SqlClient.SqlClient> = Layer.effect(
    CallsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const recordFinished = Effect.fn("CallsRepo.recordFinished")(
        function*(given: ReadonlyArray<FinishedTask>, now: number) {
          if (given.length === 0) return { finished: 0, batchCallIds: [] }
          // one result per task, the first: with two input rows for one task, UPDATE ... FROM would apply either,
          // unpredictably
          const tasks = uniqueByTask(given)
          const n = tasks.length
          const ids = new Array<string>(n)
          const states = new Array<string>(n)
          const reasons = new Array<string>(n)
          const callIds = new Array<string | null>(n)
          const fromNumbers = new Array<string>(n)
          const outcomes = new Array<string | null>(n)
          const disconnections = new Array<string | null>(n)
          const starts = new Array<string | null>(n)
          const ends = new Array<string | null>(n)
          const durations = new Array<string | null>(n)
          const agents = new Array<string | null>(n)
          const agentVersions = new Array<string | null>(n)
          const analyses = new Array<CallEnded["analysis"] | null>(n)
          const contactable = new Array<boolean>(n)
          const batchIds = new Array<string>(n)
          const retryReasons = new Array<string | null>(n)
          for (let i = 0; i < n; i++) {
            const task = tasks[i]!
            const call = task.call
            ids[i] = task.taskId
            states[i] = task.state
            reasons[i] = task.reason
            fromNumbers[i] = task.fromNumber
            callIds[i] = call?.call_id ?? null
            outcomes[i] = call?.outcome ?? null
            disconnections[i] = call?.disconnection_reason ?? rejectedReason(task.reason)
            starts[i] = call === undefined ? null : String(Math.round(call.start_timestamp))
            ends[i] = call === undefined ? null : String(Math.round(call.end_timestamp))
            durations[i] = call === undefined ? null : String(Math.round(call.duration_ms))
            agents[i] = call?.agent_id ?? null
            agentVersions[i] = call?.agent_version === undefined ? null : String(Math.round(call.agent_version))
            analyses[i] = call === undefined ? null : call.analysis
            contactable[i] = isE164(task.toNumber)
            batchIds[i] = task.batchCallId
            retryReasons[i] = call === undefined ? null : retryReasonOf(call.outcome, call.disconnection_reason) ?? null
          }
          // Data-modifying CTEs run once and to completion, in one snapshot: the task update decides which results
          // count (a task finished before is left out), the calls insert and the feed entries follow from it.
          // The analysis data go as one JSON array beside the column arrays (ROWS FROM zips them by position): as a
          // text[] of JSON documents every quote was escaped by the driver and parsed twice by PostgreSQL, 1.3 of
          // the ~18.7 µs this statement cost a task (docs/benchmarks.md).
          const rows = yield* sql<{ batch_call_id: BatchCallId; n: number }>`
            WITH r AS (
              SELECT * FROM ROWS FROM (
                unnest(
                  ${ids}::text[]::int8[], ${states}::text[], ${reasons}::text[], ${column(callIds)}::text[],
                  ${fromNumbers}::text[], ${column(outcomes)}::text[], ${column(disconnections)}::text[], ${
            column(starts)
          }::text[]::int8[],
                  ${column(ends)}::text[]::int8[], ${column(durations)}::text[]::int8[], ${column(agents)}::text[],
                  ${column(agentVersions)}::text[]::int8[], ${contactable}::bool[], ${batchIds}::text[],
                  ${column(retryReasons)}::text[]
                ),
                jsonb_array_elements(${JSON.stringify(analyses)}::jsonb)
              ) AS r(task_id, state, reason, call_id, from_number, outcome, disconnection_reason, start_timestamp,
                end_timestamp, duration_ms, agent_id, agent_version, contactable, batch_call_id, retry_reason, analysis)
            ), done AS (
              -- the results of the tasks this statement finishes. The call keeps the id svc gave it at the claim
              -- (migration 0012; a task claimed before that has the carrier's). The statements below read this CTE
              -- alone: joined back to r by task id, they were at the planner's mercy (a nested loop over two CTE
              -- scans is quadratic in the chunk: 25 ms for 500 calls)
              --
              -- A call whose outcome its batch retries (retry_policy, decision 0625) puts its task back to pending
              -- here, in the statement that records the call, with its next attempt due min_spacing_ms after the
              -- call ended: no crash can record the call and lose the retry, or the reverse. The batch is looked up
              -- (and key-share locked) only for such outcomes (p is empty for the rest, which pay nothing), and only
              -- while it runs
              UPDATE batch_call_tasks t
              SET state = CASE WHEN t.retry_attempt < p.tries THEN 'pending' ELSE r.state END,
                state_reason = CASE WHEN t.retry_attempt < p.tries
                  THEN 'retry: ' || r.retry_reason || ', call ' || (t.retry_attempt + 1)::text || ' of '
                    || p.tries::text || ' from '
                    || to_char(to_timestamp(p.due / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                  ELSE r.reason END,
                call_id = coalesce(t.call_id, r.call_id),
                retry_attempt = CASE WHEN t.retry_attempt < p.tries THEN t.retry_attempt + 1 ELSE t.retry_attempt END,
                -- the claim registers the next attempt's call as it registers a first one (attempts = 1)
                attempts = CASE WHEN t.retry_attempt < p.tries THEN 0 ELSE t.attempts END,
                not_before = CASE WHEN t.retry_attempt < p.tries THEN p.due END,
                lease_owner = NULL, lease_expires_at = NULL
              FROM r LEFT JOIN LATERAL (
                SELECT 1 + (b.retry_policy->>'max_retries')::int4 AS tries,
                  coalesce(r.end_timestamp, ${now}::int8) + (b.retry_policy->>'min_spacing_ms')::int8 AS due
                FROM batch_calls b
                WHERE r.retry_reason IS NOT NULL AND b.batch_call_id = r.batch_call_id
                  AND b.status IN ('scheduled', 'in_progress')
                  AND b.retry_policy->'retry_on' @> jsonb_build_array(r.retry_reason)
                -- against a cancel (BatchProgressRepo.cancel locks the batch row FOR UPDATE first): a retry is
                -- scheduled only under a lock on the batch row, so either this statement waits for the cancel and
                -- reads the batch cancelled (no retry), or the cancel waits for this one and then finds the retried
                -- task pending (and cancels it). KEY SHARE conflicts with nothing else that updates batch rows
                FOR KEY SHARE OF b
              ) p ON true
              WHERE t.task_id = r.task_id AND t.state IN ('dialling', 'unknown')
              RETURNING t.task_id, t.not_before, t.org_id, t.batch_call_id, t.to_number, t.call_id, r.from_number,
                coalesce(r.agent_id, t.override_agent_id) AS agent_id,
                coalesce(r.agent_version, t.override_agent_version) AS agent_version, r.outcome,
                r.disconnection_reason, r.start_timestamp, r.end_timestamp, r.duration_ms,
                CASE WHEN jsonb_typeof(r.analysis) = 'object' THEN r.analysis ELSE '{}'::jsonb END AS analysis,
                r.contactable, t.metadata, t.dynamic_variables, t.custom_sip_headers,
                -- the vendor's statuses (decision 0510): a conversation took place -> ended; busy, no answer, or a
                -- dial the carrier refused (no outcome) -> not_connected; a placed call that failed -> error
                CASE r.outcome WHEN 'answered' THEN 'ended' WHEN 'failed' THEN 'error' ELSE 'not_connected'
                END AS call_status
            ), updated AS (
              -- the row the claim registered (by the unique (org_id, call_id) index, once per finished call). No
              -- indexed column changes (call_seq, sort_timestamp and the rest were fixed at the claim), so this is a
              -- HOT update: no index entry is written (migration 0015, decision 0540). RETURNING reads the feed's
              -- columns from both sides, so the feed needs no join
              UPDATE calls c SET call_status = d.call_status, outcome = d.outcome,
                disconnection_reason = coalesce(d.disconnection_reason, 'dial_failed'),
                start_timestamp = d.start_timestamp, end_timestamp = d.end_timestamp, duration_ms = d.duration_ms,
                analysis = d.analysis, agent_id = d.agent_id, agent_version = d.agent_version
              FROM done d
              WHERE c.org_id = d.org_id AND c.call_id = d.call_id AND c.call_status IN ('registered', 'ongoing')
              RETURNING c.call_id, c.call_seq, c.org_id, c.to_number, c.start_timestamp, d.outcome, d.contactable
            ), missing AS (
              -- a call with no registered row (a task claimed before migration 0012 and not for the first time),
              -- with the call_seq it is inserted under. NOT IN is a hashed subplan (one pass over each side): NOT
              -- EXISTS was planned as a nested loop over the two CTE scans, quadratic in the chunk (32 of a
              -- 500-call record's 60 ms; docs/benchmarks.md). No NULLs on either side (calls.call_id is NOT NULL)
              SELECT d.*, nextval('calls_call_seq_seq'::regclass) AS call_seq
              FROM done d
              WHERE d.call_id IS NOT NULL AND d.call_id NOT IN (SELECT u.call_id FROM updated u)
            ), inserted AS (
              INSERT INTO calls (call_seq, org_id, call_id, task_id, batch_call_id, from_number, to_number, agent_id,
                agent_version, call_status, outcome, disconnection_reason, start_timestamp, end_timestamp,
                duration_ms, analysis, metadata, dynamic_variables, custom_sip_headers, recorded_timestamp)
              SELECT m.call_seq, m.org_id, m.call_id, m.task_id, m.batch_call_id, m.from_number, m.to_number,
                m.agent_id, m.agent_version, m.call_status, m.outcome, coalesce(m.disconnection_reason, 'dial_failed'),
                m.start_timestamp, m.end_timestamp, m.duration_ms, m.analysis, m.metadata, m.dynamic_variables,
                m.custom_sip_headers, ${now}
              FROM missing m
              -- a call already final (recorded by an earlier statement) is left as it is. A probe, not ON CONFLICT:
              -- calls is partitioned by recorded_timestamp and no index is unique on (org_id, call_id) across its
              -- partitions (decision 0442); the task update above already lets one statement alone record a task
              WHERE NOT EXISTS (SELECT 1 FROM calls x WHERE x.org_id = m.org_id AND x.call_id = m.call_id)
            ), woken AS (
              -- a batch with a retry due earlier than it would next be looked at is due then (it may be resting or
              -- asleep until a legal opening)
              UPDATE batch_calls b SET next_dispatch_at = w.at
              FROM (SELECT d.batch_call_id, min(d.not_before) AS at FROM done d WHERE d.not_before IS NOT NULL GROUP BY 1) w
              WHERE b.batch_call_id = w.batch_call_id AND b.next_dispatch_at > w.at
            ), queued AS (
              -- only calls that were placed reach the contact (a refused dial is no conversation), under the
              -- call's call_seq; no join (see done)
              INSERT INTO contact_feed (call_seq, org_id, to_number, start_timestamp)
              SELECT u.call_seq, u.org_id, u.to_number, u.start_timestamp
              FROM updated u
              WHERE u.outcome IS NOT NULL AND u.contactable
              UNION ALL
              SELECT m.call_seq, m.org_id, m.to_number, m.start_timestamp
              FROM missing m
              WHERE m.outcome IS NOT NULL AND m.contactable
            )
            SELECT batch_call_id, count(*)::int4 AS n FROM done GROUP BY batch_call_id`
          let finished = 0
          for (const row of rows) finished += row.n
          return { finished, batchCallIds: rows.map((r) => r.batch_call_id) }
        },
        Effect.orDie
      )

      const feed = (limit: number, now: number) =>
        sql<{ fed: number }>`
          WITH taken AS (
            -- ARRAY(...) is evaluated once, before the delete. IN (SELECT ... LIMIT ... SKIP LOCKED) left the plan
            -- to the table's statistics: analysed while the queue was empty, they made it a nested loop that ran
            -- the subquery again for every entry, quadratic in the queue (7,000 entries took 21 s; docs/benchmarks.md)
            DELETE FROM contact_feed WHERE call_seq = ANY(ARRAY(
              SELECT call_seq FROM contact_feed ORDER BY call_seq LIMIT ${limit} FOR UPDATE SKIP LOCKED))
            RETURNING org_id, to_number, start_timestamp
          ), per_contact AS (
            SELECT org_id, to_number, count(*)::int4 AS calls, max(start_timestamp) AS last_start,
              gen_random_uuid()::text AS random_id
            FROM taken
            GROUP BY org_id, to_number
          ), fed AS (
            -- a new contact: an id in the UUID v7 layout of ContactsRepo (creation time in ms first, then random
            -- bits), and search_text computed here rather than by the per-row trigger
            INSERT INTO contacts AS k (org_id, contact_id, phone_number, conversation_count,
              last_conversation_timestamp, created_timestamp, user_modified_timestamp, search_text)
            SELECT p.org_id,
              substr(lpad(to_hex(${now}::int8), 12, '0'), 1, 8) || '-' || substr(lpad(to_hex(${now}::int8), 12, '0'), 9, 4)
                || '-7' || substr(p.random_id, 16, 3) || substr(p.random_id, 19),
              p.to_number, p.calls, p.last_start, ${now}, ${now},
              ${
          sql.literal(searchTextExpression({
            phoneNumber: "p.to_number",
            firstName: "NULL",
            lastName: "NULL",
            externalId: "NULL",
            customFields: "'{}'::jsonb"
          }))
        }
            FROM per_contact p
            -- one lock order for every feeder: concurrent feeds wait for each other, never deadlock
            ORDER BY p.org_id, p.to_number
            ON CONFLICT (org_id, phone_number) DO UPDATE SET
              conversation_count = k.conversation_count + EXCLUDED.conversation_count,
              last_conversation_timestamp = GREATEST(k.last_conversation_timestamp, EXCLUDED.last_conversation_timestamp)
            RETURNING 1
          )
          SELECT count(*)::int4 AS fed FROM taken`.pipe(Effect.map((rows) => rows[0]?.fed ?? 0))

      const feedContacts = (limit: number, now: number) =>
        sql.withTransaction(Effect.gen(function*() {
          const [lock] = yield* sql<{ held: boolean }>`SELECT pg_try_advisory_xact_lock(${FEED_LOCK}) AS held`
          if (lock?.held !== true) return undefined
          return yield* feed(limit, now)
        })).pipe(Effect.orDie, Effect.withSpan("CallsRepo.feedContacts"))

      return CallsRepo.of({ recordFinished, feedContacts })
    })
  )
}
