/**
 * One batch's claim as one round trip (issue 5; DispatchRepo.claim, docs/decisions/0401-scheduler-row-leasing.md).
 *
 * The claim transaction was five statements (BEGIN, the org's lock, its calls in flight, the claim, COMMIT), each
 * waiting for the worker's one thread to send the next: while that thread ran the dials of the previous claim, the
 * transaction stood still holding the org's lock, and PostgreSQL had nothing to do. As a function the whole claim is
 * one statement the worker sends and forgets until it answers.
 *
 * The function keeps the transaction's order, and its reason: the calls in flight are counted *after* the lock is
 * granted. A function declared VOLATILE takes a new snapshot for each statement it runs (READ COMMITTED), so the
 * count sees every claim committed before the lock was granted, as the separate statement did; a single plain
 * statement would count with a snapshot taken before it waited for the lock, and could miss a claim that committed
 * meanwhile (and start more calls than the limit).
 *
 * Arguments: the lock key (DispatchRepo.ORG_LOCK), the org, how long to wait for its lock (`lock_timeout`, local
 * to the transaction), the batch, its reserved concurrency, the most tasks to claim, the lease owner and expiry.
 * Rows: the claimed tasks (state `dialling`, or `skipped` for a do-not-call number), then one summary row whose
 * task_id is NULL with the org's limit and its calls in flight before this claim. No rows: no such org. A batch
 * still `scheduled` becomes `in_progress` with its first claimed task.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE FUNCTION scheduler_claim(
      p_lock_key int4, p_org text, p_lock_wait text, p_batch text, p_reserved int4, p_max int4, p_owner text,
      p_until int8
    )
    RETURNS TABLE (
      task_id text, task_index int4, to_number text, state text, override_agent_id text,
      override_agent_version float8, override_agent_version_name text, agent_override jsonb,
      dynamic_variables jsonb, metadata jsonb, custom_sip_headers jsonb, org_limit int4, org_in_flight int4
    )
    LANGUAGE plpgsql VOLATILE AS $fn$
    #variable_conflict use_column
    DECLARE
      v_limit int4;
      v_in_flight int4;
      v_n int4;
      v_dnc boolean;
    BEGIN
      PERFORM set_config('lock_timeout', p_lock_wait, true);
      PERFORM pg_advisory_xact_lock(p_lock_key, hashtext(p_org));
      -- from here on, each statement's snapshot includes every claim committed before the lock was granted
      SELECT o.concurrency_limit INTO v_limit FROM orgs o WHERE o.org_id = p_org;
      IF v_limit IS NULL THEN
        RETURN;
      END IF;
      -- one count per state: each has its partial index (batch_call_tasks_dialling, _unknown)
      SELECT (SELECT count(*) FROM batch_call_tasks t WHERE t.org_id = p_org AND t.state = 'dialling')
          + (SELECT count(*) FROM batch_call_tasks t WHERE t.org_id = p_org AND t.state = 'unknown')
        INTO v_in_flight;
      -- issue 5: the batch's calls never exceed concurrency_limit - reserved_concurrency - the org's other calls
      v_n := least(p_max, v_limit - p_reserved - v_in_flight);
      IF v_n > 0 THEN
        -- most orgs have no do-not-call contact: then no task needs the per-row check (0.8 µs a task)
        v_dnc := EXISTS (SELECT 1 FROM contacts k WHERE k.org_id = p_org AND k.do_not_call);
        -- the rows by primary key whatever the plan, the do-not-call check once per row at most (OFFSET 0 keeps its
        -- subquery from being pulled up and copied into each of the five CASEs)
        RETURN QUERY
          UPDATE batch_call_tasks t SET (state, state_reason, lease_owner, lease_expires_at, attempts) = (
            SELECT CASE WHEN x.dnc THEN 'skipped' ELSE 'dialling' END, CASE WHEN x.dnc THEN 'do_not_call' END,
              CASE WHEN x.dnc THEN NULL ELSE p_owner END, CASE WHEN x.dnc THEN NULL ELSE p_until END,
              t.attempts + CASE WHEN x.dnc THEN 0 ELSE 1 END
            FROM (
              SELECT CASE WHEN v_dnc THEN EXISTS (
                SELECT 1 FROM contacts k WHERE k.org_id = p_org AND k.phone_number = t.to_number AND k.do_not_call
              ) ELSE false END AS dnc
              OFFSET 0
            ) x
          )
          WHERE t.task_id = ANY(ARRAY(
            SELECT p.task_id FROM batch_call_tasks p
            WHERE p.batch_call_id = p_batch AND p.state = 'pending'
            ORDER BY p.task_index
            LIMIT v_n
            FOR UPDATE SKIP LOCKED))
          RETURNING t.task_id::text, t.task_index, t.to_number, t.state, t.override_agent_id,
            t.override_agent_version::float8, t.override_agent_version_name, t.agent_override, t.dynamic_variables,
            t.metadata, t.custom_sip_headers, NULL::int4, NULL::int4;
        -- a batch's first claimed task starts it, in the claim's transaction
        IF FOUND THEN
          UPDATE batch_calls b SET status = 'in_progress' WHERE b.batch_call_id = p_batch AND b.status = 'scheduled';
        END IF;
      END IF;
      RETURN QUERY SELECT NULL::text, NULL::int4, NULL::text, NULL::text, NULL::text, NULL::float8, NULL::text,
        NULL::jsonb, NULL::jsonb, NULL::jsonb, NULL::jsonb, v_limit, v_in_flight;
    END
    $fn$`)
})
