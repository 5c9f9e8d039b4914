/**
 * A call's finish is a HOT update (issue 13 follow-up, the dispatch cost; docs/decisions/0540-calls-hot-finish.md).
 *
 * Since migration 0012 a call row is inserted by the claim (`registered`) and updated by CallsRepo.recordFinished.
 * That update changed three indexed columns (`call_seq`, the primary key, renumbered to "the order calls finished";
 * `sort_timestamp`, from the registration time to the start; `call_status`, the predicate of `calls_in_flight`), so
 * PostgreSQL wrote a new entry in every index of `calls` for it: each call paid its indexes twice, and dispatch cost
 * 6x the bare claim-and-mark loop (docs/benchmarks.md). Here no indexed column changes at the finish, and pages keep
 * room for the finished version, so the update is HOT (heap-only: no index entry at all):
 *
 * - `call_seq` is given once, when the row is inserted, and never changes (the claim: registration order). The
 *   backfill job's ranges stay exact without a renumbering: a run's range ends before the org's first call still in
 *   flight (BackfillRunnerRepo.claimNext), so every call in a range is final when the run fixes it, and a call that
 *   finishes later falls in a later run's range. The contact feed keys its entries by the call's `call_seq`.
 * - `sort_timestamp` (the list order) is fixed when svc registers the call: `registered_timestamp`, the claim's
 *   time, for a call svc dials; the start, for a call written already finished (imports); the time it was written
 *   otherwise. A dialled call keeps the place it had while ringing (the vendor sorts by `start_timestamp`; a call
 *   starts when it is answered, after its registration by the ring time, so dialled calls list in the order svc
 *   registered them: decision 0540).
 * - `calls_in_flight` (partial on `call_status IN ('registered', 'ongoing')`) is dropped: its predicate changes at
 *   every finish. list-calls by an in-flight status walks the org's list index (decision 0511).
 * - `fillfactor = 40`: the claim inserts a chunk's rows together and the recorder finishes them together, so a
 *   page must hold each of its rows twice (registered and finished versions, the old one pruned later). With 40%
 *   filled at the claim, a finished row up to about one and a half times its registered size stays on its page
 *   (CallsLifecycle.integration.test.ts: a 50-character call summary, 40 of 40 HOT; 100, 37; 250, 28; 400, 24). A
 *   larger one is an ordinary update (its index entries written, as before this migration). 30 kept a 250-character
 *   summary HOT but measured slower in the dispatch bench (a bigger table: more buffer writes) and takes more
 *   space (decision 0540, docs/benchmarks.md).
 * - The cancel trigger of migration 0014 ends a never-placed call without renumbering it either.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX calls_in_flight`
  yield* sql`ALTER TABLE calls ADD COLUMN registered_timestamp bigint`
  // rewrites the table and its indexes once; the values of existing rows do not change (registered_timestamp is
  // NULL for them)
  yield* sql`
    ALTER TABLE calls ALTER COLUMN sort_timestamp
      SET EXPRESSION AS (coalesce(registered_timestamp, start_timestamp, recorded_timestamp))`
  yield* sql`ALTER TABLE calls SET (fillfactor = 40)`

  // The claim: as migration 0012 (read its notes and 0010's), plus the call's registered_timestamp.
  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION scheduler_claim(
      p_lock_key int4, p_org text, p_lock_wait text, p_batch text, p_reserved int4, p_max int4, p_owner text,
      p_until int8, p_from text, p_now int8
    )
    RETURNS TABLE (
      task_id text, task_index int4, to_number text, state text, override_agent_id text,
      override_agent_version float8, override_agent_version_name text, agent_override jsonb,
      dynamic_variables jsonb, metadata jsonb, custom_sip_headers jsonb, call_id text, org_limit int4,
      org_in_flight int4
    )
    LANGUAGE plpgsql VOLATILE AS $fn$
    #variable_conflict use_column
    DECLARE
      v_limit int4;
      v_in_flight int4;
      v_n int4;
      v_dnc boolean;
      v_found int4;
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
        -- subquery from being pulled up and copied into each of the CASEs)
        RETURN QUERY
          WITH claimed AS (
            UPDATE batch_call_tasks t SET (state, state_reason, lease_owner, lease_expires_at, attempts, call_id) = (
              SELECT CASE WHEN x.dnc THEN 'skipped' ELSE 'dialling' END, CASE WHEN x.dnc THEN 'do_not_call' END,
                CASE WHEN x.dnc THEN NULL ELSE p_owner END, CASE WHEN x.dnc THEN NULL ELSE p_until END,
                t.attempts + CASE WHEN x.dnc THEN 0 ELSE 1 END,
                CASE WHEN x.dnc THEN t.call_id ELSE svc_call_id(t.task_id) END
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
            RETURNING t.*
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
            c.metadata, c.custom_sip_headers, c.call_id, NULL::int4, NULL::int4
          FROM claimed c;
        -- a batch's first claimed task starts it, in the claim's transaction
        GET DIAGNOSTICS v_found = ROW_COUNT;
        IF v_found > 0 THEN
          UPDATE batch_calls b SET status = 'in_progress' WHERE b.batch_call_id = p_batch AND b.status = 'scheduled';
        END IF;
      END IF;
      RETURN QUERY SELECT NULL::text, NULL::int4, NULL::text, NULL::text, NULL::text, NULL::float8, NULL::text,
        NULL::jsonb, NULL::jsonb, NULL::jsonb, NULL::jsonb, NULL::text, v_limit, v_in_flight;
    END
    $fn$`)

  // Migration 0014's trigger, without the renumbering: the call keeps its call_seq (see the header).
  yield* sql`
    CREATE OR REPLACE FUNCTION batch_call_tasks_stay_cancelled() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM batch_calls b WHERE b.batch_call_id = NEW.batch_call_id AND b.status = 'cancelled') THEN
        NEW.state := 'cancelled';
        NEW.state_reason := 'batch_cancelled';
        NEW.lease_owner := NULL;
        NEW.lease_expires_at := NULL;
        UPDATE calls c SET call_status = 'not_connected', disconnection_reason = 'manual_stopped'
        WHERE c.org_id = NEW.org_id AND c.call_id = NEW.call_id AND c.call_status = 'registered';
      END IF;
      RETURN NEW;
    END $$`
})
