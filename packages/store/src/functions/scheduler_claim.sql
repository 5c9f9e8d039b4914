-- scheduler_claim: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migrations: defined in 0010, 0012, 0015, 0022, 0023, 0024_batch_retries; its signature changed in
-- 0030_campaign_control (pause, max_concurrency and suppressions: decisions 0549, 0550).
CREATE OR REPLACE FUNCTION scheduler_claim(p_lock_key integer, p_org text, p_lock_wait text, p_batch text, p_reserved integer, p_max integer, p_owner text, p_until bigint, p_from text, p_now bigint, p_groups integer[], p_cap_groups integer[] DEFAULT NULL::integer[], p_cap_limits integer[] DEFAULT NULL::integer[], p_cap_labels text[] DEFAULT NULL::text[])
 RETURNS TABLE(task_id text, task_index integer, to_number text, state text, override_agent_id text, override_agent_version double precision, override_agent_version_name text, agent_override jsonb, dynamic_variables jsonb, metadata jsonb, custom_sip_headers jsonb, call_id text, org_limit integer, org_in_flight integer, call_attempt integer, batch_open boolean, batch_in_flight integer)
 LANGUAGE plpgsql
AS $function$
    #variable_conflict use_column
    DECLARE
      v_limit int4;
      v_in_flight int4;
      v_n int4;
      v_dnc boolean;
      v_suppressed boolean;
      v_status text;
      v_batch_max int4;
      v_batch_in_flight int4;
      v_found int4;
      v_ids int8[];
      v_deferred int8[] := '{}';
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
      -- Decision 0549: a paused (or finished) batch is not claimed. Read after the lock: a pause commits under the
      -- same lock, so every claim granted the lock after the pause answered sees it.
      SELECT b.status, b.max_concurrency INTO v_status, v_batch_max FROM batch_calls b WHERE b.batch_call_id = p_batch;
      IF v_status IS NULL OR v_status NOT IN ('scheduled', 'in_progress') THEN
        RETURN QUERY SELECT NULL::text, NULL::int4, NULL::text, NULL::text, NULL::text, NULL::float8, NULL::text,
          NULL::jsonb, NULL::jsonb, NULL::jsonb, NULL::jsonb, NULL::text, v_limit, v_in_flight, NULL::int4, false,
          NULL::int4;
        RETURN;
      END IF;
      -- decision 0401 (spec reserved_concurrency): the batch's calls never exceed concurrency_limit -
      -- reserved_concurrency - the org's other calls
      v_n := least(p_max, v_limit - p_reserved - v_in_flight);
      -- max_concurrency (decision 0549): the batch's own calls in flight, counted under the lock, off
      -- batch_call_tasks_by_state
      IF v_batch_max IS NOT NULL THEN
        SELECT (SELECT count(*) FROM batch_call_tasks t WHERE t.batch_call_id = p_batch AND t.state = 'dialling')
            + (SELECT count(*) FROM batch_call_tasks t WHERE t.batch_call_id = p_batch AND t.state = 'unknown')
          INTO v_batch_in_flight;
        v_n := least(v_n, v_batch_max - v_batch_in_flight);
      END IF;
      IF v_n > 0 THEN
        -- most orgs have no do-not-call contact: then no task needs the per-row check (0.8 µs a task)
        v_dnc := EXISTS (SELECT 1 FROM contacts k WHERE k.org_id = p_org AND k.do_not_call);
        -- the same for the suppression list (decision 0550): an org without one pays one probe a claim. In the list's
        -- key order, not as an EXISTS on org_id (which drops the order): that generic plan read the whole table for an
        -- org with no list beside another org's long one (DispatchClaims.integration.test.ts)
        v_suppressed := coalesce(
          (SELECT true FROM suppressions s WHERE s.org_id = p_org ORDER BY s.org_id, s.phone_number LIMIT 1), false);
        IF p_groups IS NULL THEN
          -- no legal-hours constraint given (migration 0022): every pending task, as before
          v_ids := ARRAY(
            SELECT p.task_id FROM batch_call_tasks p
            WHERE p.batch_call_id = p_batch AND p.state = 'pending' AND (p.not_before IS NULL OR p.not_before <= p_now)
            ORDER BY p.task_index
            LIMIT v_n
            FOR UPDATE SKIP LOCKED);
        ELSE
          -- Only tasks of the legal groups (p_groups) and unconstrained ones (legal_group NULL), group by group
          -- through batch_call_tasks_pending_by_group: one filter over the batch's pending index would walk every
          -- pending task of the blocked groups before it found n dialable ones (most of a 100,000-task batch at
          -- night). Each group gives at most n candidates in task order; the first n of all of them are locked.
          v_ids := ARRAY(
            SELECT p.task_id FROM batch_call_tasks p
            WHERE p.task_id = ANY(ARRAY(
                SELECT c.task_id FROM (
                  (SELECT q.task_id, q.task_index FROM batch_call_tasks q
                    WHERE q.batch_call_id = p_batch AND q.legal_group IS NULL AND q.state = 'pending'
                      AND (q.not_before IS NULL OR q.not_before <= p_now)
                    ORDER BY q.task_index
                    LIMIT v_n)
                  UNION ALL
                  SELECT x.task_id, x.task_index FROM unnest(p_groups) AS g(id) CROSS JOIN LATERAL (
                    SELECT q.task_id, q.task_index FROM batch_call_tasks q
                    WHERE q.batch_call_id = p_batch AND q.legal_group = g.id AND q.state = 'pending'
                      AND (q.not_before IS NULL OR q.not_before <= p_now)
                    ORDER BY q.task_index
                    LIMIT v_n) x
                ) c
                ORDER BY c.task_index
                LIMIT v_n))
              AND p.state = 'pending'
            ORDER BY p.task_index
            FOR UPDATE SKIP LOCKED);
        END IF;
        -- Attempt caps (issue 15 item 4, decision 0624): a candidate of a capped group whose number has had its
        -- group's cap of attempts by this org in the last 24 h (counting the earlier candidates to the same number
        -- in this claim) is not dialled: it waits until the attempt that holds it back leaves the window
        -- (not_before) and says why. Race-free: every claim of the org holds the org's lock (above), and attempts
        -- are written below in the same transaction.
        IF p_cap_groups IS NOT NULL AND cardinality(p_cap_groups) > 0 AND cardinality(v_ids) > 0 THEN
          WITH capped AS (
            SELECT t.task_id AS id, t.to_number AS num, c.lim, c.label,
              row_number() OVER (PARTITION BY t.to_number ORDER BY t.task_index)::int4 AS rn
            FROM batch_call_tasks t
            JOIN unnest(p_cap_groups, p_cap_limits, p_cap_labels) AS c(g, lim, label) ON c.g = t.legal_group
            WHERE t.task_id = ANY(v_ids)
          ), judged AS (
            -- the (n + rn - lim)-th oldest attempt in the window must leave it first; past the stored ones, the
            -- attempts of this claim (at p_now) must
            SELECT k.id, k.label,
              CASE WHEN k.rn <= k.lim THEN a.times[a.n + k.rn - k.lim] + 86400000 ELSE p_now + 86400000 END AS free_at
            FROM capped k CROSS JOIN LATERAL (
              SELECT count(*)::int4 AS n, array_agg(x.attempted_at ORDER BY x.attempted_at) AS times
              FROM number_attempts x
              WHERE x.org_id = p_org AND x.to_number = k.num AND x.attempted_at > p_now - 86400000
            ) a
            WHERE a.n + k.rn > k.lim
          ), deferred AS (
            UPDATE batch_call_tasks t SET not_before = j.free_at,
              state_reason = 'attempt_cap: ' || j.label || ' until '
                || to_char(to_timestamp(j.free_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            FROM judged j
            WHERE t.task_id = j.id
            RETURNING t.task_id AS id
          )
          SELECT coalesce(array_agg(d.id), '{}') INTO v_deferred FROM deferred d;
          IF cardinality(v_deferred) > 0 THEN
            v_ids := ARRAY(SELECT u.id FROM unnest(v_ids) AS u(id) WHERE u.id <> ALL(v_deferred));
            -- reported (state 'deferred') so the caller counts them as taken, not as a batch run dry
            RETURN QUERY
              SELECT t.task_id::text, t.task_index, t.to_number, 'deferred'::text, NULL::text, NULL::float8,
                NULL::text, NULL::jsonb, NULL::jsonb, NULL::jsonb, NULL::jsonb, t.state_reason, NULL::int4, NULL::int4,
                t.retry_attempt, NULL::boolean, NULL::int4
              FROM batch_call_tasks t WHERE t.task_id = ANY(v_deferred);
          END IF;
        END IF;
        -- the rows by primary key whatever the plan, the do-not-call check once per row at most (OFFSET 0 keeps its
        -- subquery from being pulled up and copied into each of the CASEs)
        RETURN QUERY
          WITH claimed AS (
            UPDATE batch_call_tasks t SET not_before = NULL,
              (state, state_reason, lease_owner, lease_expires_at, attempts, call_id) = (
              SELECT CASE WHEN x.skip IS NOT NULL THEN 'skipped' ELSE 'dialling' END, x.skip,
                CASE WHEN x.skip IS NOT NULL THEN NULL ELSE p_owner END,
                CASE WHEN x.skip IS NOT NULL THEN NULL ELSE p_until END,
                t.attempts + CASE WHEN x.skip IS NOT NULL THEN 0 ELSE 1 END,
                -- each attempt's own call id: the first's as before retries existed (migration 0012), a retry's
                -- from the task and its attempt (decision 0625)
                CASE WHEN x.skip IS NOT NULL THEN t.call_id WHEN t.retry_attempt = 1 THEN svc_call_id(t.task_id)
                  ELSE 'call_' || md5('svc-call:' || t.task_id::text || ':' || t.retry_attempt::text) END
              FROM (
                -- why the task is not dialled (NULL: it is): the contact's flag, then the org's suppression list
                -- (decision 0550: 'suppressed (<source>)'), each probed only when the org has any
                SELECT coalesce(
                  CASE WHEN v_dnc AND EXISTS (
                    SELECT 1 FROM contacts k WHERE k.org_id = p_org AND k.phone_number = t.to_number AND k.do_not_call
                  ) THEN 'do_not_call' END,
                  CASE WHEN v_suppressed THEN (
                    SELECT 'suppressed (' || s.source || ')' FROM suppressions s
                    WHERE s.org_id = p_org AND s.phone_number = t.to_number
                  ) END
                ) AS skip
                OFFSET 0
              ) x
            )
            WHERE t.task_id = ANY(v_ids)
            RETURNING t.*
          ), counted AS (
            -- an attempt of a capped group counts from its claim (decision 0624), whatever the dial's outcome
            INSERT INTO number_attempts (org_id, to_number, attempted_at, task_id)
            SELECT p_org, c.to_number, p_now, c.task_id FROM claimed c
            WHERE c.state = 'dialling' AND c.legal_group = ANY(p_cap_groups)
          ), pruned AS (
            -- attempts that left the window are never read again: the number's own are dropped as it is dialled
            DELETE FROM number_attempts x USING claimed c
            WHERE c.state = 'dialling' AND c.legal_group = ANY(p_cap_groups) AND x.org_id = p_org
              AND x.to_number = c.to_number AND x.attempted_at <= p_now - 86400000
          ), registered AS (
            -- call_seq (registration order) and sort_timestamp (from registered_timestamp) never change after this
            -- insert: the finish is a HOT update (migration 0015)
            INSERT INTO calls (org_id, call_id, task_id, batch_call_id, from_number, to_number, agent_id,
              agent_version, call_status, metadata, dynamic_variables, custom_sip_headers, recorded_timestamp,
              registered_timestamp)
            SELECT p_org, c.call_id, c.task_id, p_batch, p_from, c.to_number, c.override_agent_id,
              c.override_agent_version, 'registered', c.metadata, c.dynamic_variables, c.custom_sip_headers, p_now,
              p_now
            FROM claimed c
            WHERE c.state = 'dialling' AND c.attempts = 1
          )
          SELECT c.task_id::text, c.task_index, c.to_number, c.state, c.override_agent_id,
            c.override_agent_version::float8, c.override_agent_version_name, c.agent_override, c.dynamic_variables,
            c.metadata, c.custom_sip_headers,
            -- a skipped task's reason in the call id's place, as a deferred one's (the caller counts suppressions)
            CASE WHEN c.state = 'skipped' THEN c.state_reason ELSE c.call_id END, NULL::int4, NULL::int4,
            c.retry_attempt, NULL::boolean,
            NULL::int4
          FROM claimed c;
        -- a batch's first claimed task starts it, in the claim's transaction
        GET DIAGNOSTICS v_found = ROW_COUNT;
        IF v_found > 0 THEN
          UPDATE batch_calls b SET status = 'in_progress' WHERE b.batch_call_id = p_batch AND b.status = 'scheduled';
        END IF;
      END IF;
      RETURN QUERY SELECT NULL::text, NULL::int4, NULL::text, NULL::text, NULL::text, NULL::float8, NULL::text,
        NULL::jsonb, NULL::jsonb, NULL::jsonb, NULL::jsonb, NULL::text, v_limit, v_in_flight, NULL::int4, true,
        v_batch_in_flight;
    END
    $function$
