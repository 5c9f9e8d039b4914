/**
 * Bulk-seeds `calls` by SQL for the list-calls plan tests and benchmark (issue 13, performance): one
 * `INSERT ... SELECT generate_series` per org, every value derived from the row number by `hashint8extended`, so
 * the same plan gives the same rows. Not a product path: the rows skip the dispatcher and look like what it writes.
 *
 * The shape of an org's calls, in the order they happened (the heap order, as after real dialling):
 * - one call every 2 s from `now - calls * 2 s`, so an org of 1,000,000 spans 23 days; `start_timestamp` is the
 *   time plus up to 1.5 s of jitter;
 * - 3 % without a batch (imported or placed elsewhere); 20 % in one long-running batch `{org}_batch_big`; the rest
 *   in small batches of about 1,000 calls, 8 running side by side in each stretch of 8,000 calls
 *   (`{org}_batch_{n}`);
 * - 10 agents (the first two take half the calls), versions 1-3; 4 caller numbers; 300,000 callee numbers (a
 *   number is called about 3 times in an org of 1,000,000);
 * - status: the last 200 calls are in flight (`registered`, then `ongoing`: no start yet / started); of the
 *   rest 72 % `ended`, 25 % `not_connected`, 3 % `error`, with the vendor's disconnection reasons for each;
 * - ended calls have analysis data (`call_successful`, `user_sentiment`, `in_voicemail`, `call_summary`, and the
 *   custom `booked` and `score`); 30 % of calls carry metadata (`campaign`, `customer_id`); batch calls carry
 *   dynamic variables (`first_name`).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** @category models */
export interface CallsSeedPlan {
  readonly orgId: string
  readonly calls: number
}

/** The batch ids of an org's seeded calls: the big one and the n-th small one. */
export const bigBatch = (orgId: string) => `${orgId}_batch_big`
export const smallBatch = (orgId: string, n: number) => `${orgId}_batch_${n}`

/** Agents of the seeded calls. */
export const agentId = (n: number) => `agent_${n}`

/** The callee number of pool slot `n`. */
export const toNumber = (n: number) => `+1415${String(n).padStart(7, "0")}`

const FINISHED = "('ended', 'not_connected', 'error')"

/**
 * Inserts each plan's calls (rows interleaved only per org: one statement per org), then VACUUM ANALYZE, so the
 * visibility map and statistics are those of a table that has settled (as autovacuum leaves it).
 */
export const load = (plans: ReadonlyArray<CallsSeedPlan>, options: { readonly now: number; readonly seed?: number }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const seed = options.seed ?? 1
    for (const plan of plans) {
      const u = (k: number) =>
        sql.literal(`((hashint8extended(i, ${seed * 16 + k}) & 4294967295)::float8 / 4294967296)`)
      yield* sql`
        INSERT INTO calls (org_id, call_id, task_id, batch_call_id, from_number, to_number, agent_id, agent_version,
          call_status, outcome, disconnection_reason, start_timestamp, end_timestamp, duration_ms, analysis, metadata,
          dynamic_variables, recorded_timestamp)
        SELECT ${plan.orgId}, 'call_' || md5(${plan.orgId} || ':' || i), CASE WHEN batch IS NULL THEN NULL ELSE i END,
          batch, from_number, to_number, agent, version, status,
          CASE status WHEN 'ended' THEN 'answered' WHEN 'error' THEN 'failed'
            WHEN 'not_connected' THEN CASE WHEN reason = 'dial_busy' THEN 'busy' ELSE 'no_answer' END END,
          CASE WHEN status IN ${sql.literal(FINISHED)} THEN reason END,
          CASE WHEN status <> 'registered' THEN started END,
          CASE WHEN status IN ${sql.literal(FINISHED)} THEN started + duration END,
          CASE WHEN status IN ${sql.literal(FINISHED)} THEN duration END,
          CASE WHEN status = 'ended' THEN jsonb_build_object(
            'call_successful', ${u(7)} < 0.4, 'user_sentiment', (ARRAY['Positive', 'Neutral', 'Negative', 'Unknown'])[
              1 + floor(${u(8)} * 4)::int], 'in_voicemail', reason = 'voicemail_reached',
            'call_summary', 'The customer asked about the offer.', 'booked', ${u(9)} < 0.1,
            'score', floor(${u(10)} * 10)::int)
            ELSE '{}'::jsonb END,
          CASE WHEN ${u(11)} < 0.3 THEN jsonb_build_object('campaign', 'spring', 'customer_id', 'cus_' || (i % 50000))
            END,
          CASE WHEN batch IS NOT NULL THEN jsonb_build_object('first_name', 'Ann') END,
          CASE WHEN status IN ${sql.literal(FINISHED)} THEN started + duration ELSE at END
        FROM (
          SELECT i, at, at + floor(${u(1)} * 1500)::int8 AS started,
            CASE WHEN ${u(2)} < 0.03 THEN NULL
              WHEN ${u(2)} < 0.23 THEN ${bigBatch(plan.orgId)}
              ELSE ${plan.orgId} || '_batch_' || ((i / 8000) * 8 + floor(${u(3)} * 8)::int8) END AS batch,
            '+1650555000' || (i % 4) AS from_number,
            '+1415' || lpad(floor(${u(4)} * 300000)::int8::text, 7, '0') AS to_number,
            'agent_' || CASE WHEN ${u(5)} < 0.5 THEN floor(${u(5)} * 4)::int ELSE 2 + floor(${u(5)} * 16 - 8)::int END
              AS agent,
            1 + floor(${u(6)} * 3)::int8 AS version,
            CASE WHEN i >= ${plan.calls} - 100 THEN 'registered'
              WHEN i >= ${plan.calls} - 200 THEN 'ongoing'
              WHEN ${u(12)} < 0.72 THEN 'ended'
              WHEN ${u(12)} < 0.97 THEN 'not_connected'
              ELSE 'error' END AS status,
            CASE WHEN ${u(12)} < 0.72
                THEN (ARRAY['user_hangup', 'agent_hangup', 'voicemail_reached', 'call_transfer'])[1 + floor(${
        u(13)
      } * 4)::int]
              WHEN ${u(12)} < 0.97 THEN (ARRAY['dial_no_answer', 'dial_busy'])[1 + floor(${u(13)} * 2)::int]
              ELSE 'error_unknown' END AS reason,
            CASE WHEN ${u(12)} < 0.72 THEN 5000 + floor(${u(14)} * 300000)::int8 ELSE 0 END AS duration
          FROM (
            SELECT i, ${options.now}::int8 - (${plan.calls}::int8 - i) * 2000 AS at
            FROM generate_series(0::int8, ${plan.calls - 1}::int8) i
          ) s
        ) r`
    }
    yield* sql`VACUUM ANALYZE calls`.pipe(Effect.withSpan("CallsSeed.vacuum"))
  }).pipe(Effect.orDie)
