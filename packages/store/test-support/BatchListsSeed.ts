/**
 * The data of the list-batch-calls and list-batch-call-tasks plan tests and bench (issue 31 item 3): one batch of
 * 100,000 tasks (95 % completed with a call each, then pending, failed and skipped ones: the rare states last, so
 * that a walk in task order filtering the state would read the whole batch first) among 2,000 batches of one org a
 * minute apart (every fourth cancelled, every fourth in progress, the rest completed, two tasks each) and 500 of
 * another, seeded by SQL, then analysed.
 */
import { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const ORG = OrgId.make("org-big")
export const OTHER = OrgId.make("org-other")
/** The 100,000-task batch, the 1,000th of ORG's batches. */
export const BIG = BatchCallId.make("batch_big")
export const TASKS = 100_000
/** The first batch's creation time; batch i was created i minutes later. */
export const NOW = 1_800_000_000_000

/** Loads the data (the migrations have run). */
export const load = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${ORG}, 'big', 0), (${OTHER}, 'other', 0)`
  // 2,000 batches of ORG a minute apart (every fourth cancelled, every fourth in progress, the rest completed), 500
  // of OTHER interleaved; each batch has 2 tasks but BIG, which has 100,000
  yield* sql`
    INSERT INTO batch_calls (batch_call_id, org_id, api_key_id, from_number, scheduled_timestamp, status,
      total_task_count, next_dispatch_at, created_timestamp)
    SELECT CASE WHEN i = 1000 THEN ${BIG} ELSE 'batch_' || i END, CASE WHEN i > 2000 THEN ${OTHER} ELSE ${ORG} END,
      'key', '+14155550100', ${NOW} + i * 60000,
      CASE WHEN i = 1000 THEN 'in_progress' WHEN i % 4 = 0 THEN 'cancelled' WHEN i % 4 = 1 THEN 'in_progress'
        ELSE 'completed' END,
      CASE WHEN i = 1000 THEN ${TASKS} ELSE 2 END, ${NOW}, ${NOW} + i * 60000
    FROM generate_series(1, 2500) AS i`
  yield* sql`
    INSERT INTO batch_call_tasks (org_id, batch_call_id, task_index, to_number, state, call_id, attempts, metadata)
    SELECT b.org_id, b.batch_call_id, i, '+1415' || lpad(i::text, 7, '0'), 'completed', 'call_' || b.batch_call_id || '_' || i,
      1, jsonb_build_object('n', i)
    FROM batch_calls b, generate_series(0, 1) AS i WHERE b.batch_call_id <> ${BIG}`
  // BIG: tasks 0-94,999 completed with a call, then 3,000 pending, 1,000 failed, 500 skipped, 500 cancelled-looking
  // pending (rare states last: a walk in task order filtering the state would read the whole batch first)
  yield* sql`
    INSERT INTO batch_call_tasks (org_id, batch_call_id, task_index, to_number, state, state_reason, call_id, attempts,
      metadata)
    SELECT ${ORG}, ${BIG}, i, '+1415' || lpad(i::text, 7, '0'),
      CASE WHEN i < 95000 THEN 'completed' WHEN i < 98500 THEN 'pending' WHEN i < 99500 THEN 'failed'
        ELSE 'skipped' END,
      CASE WHEN i >= 99500 THEN 'do_not_call' END,
      CASE WHEN i < 95000 OR (i >= 98500 AND i < 99500) THEN 'call_big_' || i END,
      CASE WHEN i < 95000 OR (i >= 98500 AND i < 99500) THEN 1 ELSE 0 END, jsonb_build_object('n', i)
    FROM generate_series(0, ${TASKS - 1}) AS i`
  yield* sql`
    INSERT INTO calls (org_id, call_id, batch_call_id, from_number, to_number, call_status, outcome,
      disconnection_reason, recorded_timestamp)
    SELECT t.org_id, t.call_id, t.batch_call_id, '+14155550100', t.to_number,
      CASE WHEN t.state = 'failed' THEN 'error' ELSE 'ended' END,
      CASE WHEN t.state = 'failed' THEN 'failed' ELSE 'answered' END,
      CASE WHEN t.state = 'failed' THEN 'error_unknown' ELSE 'user_hangup' END, ${NOW}
    FROM batch_call_tasks t WHERE t.call_id IS NOT NULL`
  yield* sql`ANALYZE batch_calls`
  yield* sql`ANALYZE batch_call_tasks`
  yield* sql`ANALYZE calls`
})
