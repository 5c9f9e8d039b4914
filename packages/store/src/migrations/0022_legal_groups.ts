/**
 * Legal hours in dispatch (issue 15, item 3 "Dispatch"; docs/decisions/0623-legal-hours-dispatch.md).
 *
 * At create-batch-call each task gets a `legal_group`: a small integer per batch naming what decides its legal
 * hours (its number's candidate zones and the ids of the rules that apply: LegalGroups in the domain); NULL for an
 * unconstrained task (a non-NANP number, and every task created before this migration). The distinct groups of a
 * batch are stored once in `batch_call_legal_groups`, so the dispatcher evaluates a handful of groups per pass
 * instead of checking tasks, and the claim takes tasks only of the groups that are legal now.
 *
 * `scheduler_claim` gains `p_groups int4[]`, the groups legal at the claim's instant (computed by the dispatcher):
 * only their pending tasks and unconstrained ones are claimed. NULL means no constraint (the old behaviour).
 *
 * The index serves the claim group by group: `batch_call_id = $1 AND legal_group = $g AND state = 'pending' ORDER
 * BY task_index LIMIT n` reads only the group's own pending rows, never those of the blocked groups.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // no default, no rewrite: existing rows read NULL (unconstrained)
  yield* sql`ALTER TABLE batch_call_tasks ADD COLUMN legal_group int4`
  yield* sql`
    CREATE TABLE batch_call_legal_groups (
      batch_call_id text NOT NULL,
      legal_group int4 NOT NULL CHECK (legal_group >= 0),
      -- candidate IANA zones of the group's numbers (RecipientZones), sorted
      zones text[] NOT NULL,
      -- jurisdictions of the rules that apply ("US" federal, state postal codes), resolved against the policy at
      -- dispatch (LegalGroups.rulesOfIds)
      rule_ids text[] NOT NULL,
      PRIMARY KEY (batch_call_id, legal_group)
    )`
  yield* sql`
    CREATE INDEX batch_call_tasks_pending_by_group ON batch_call_tasks (batch_call_id, legal_group, task_index)
    WHERE state = 'pending'`
  // a batch's groups go with it (as its tasks do: trigger batch_calls_delete_tasks, decision 0302)
  yield* sql`
    CREATE FUNCTION batch_calls_delete_legal_groups() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM batch_call_legal_groups g WHERE g.batch_call_id = OLD.batch_call_id;
      RETURN OLD;
    END $$`
  yield* sql`
    CREATE TRIGGER batch_calls_delete_legal_groups AFTER DELETE ON batch_calls
    FOR EACH ROW EXECUTE FUNCTION batch_calls_delete_legal_groups()`

  // The claim (migration 0015's; read its notes and 0010's, 0012's) with the legal groups that may be dialled now:
  // a new parameter is a new signature, so the old function goes (as 0012 did)
  yield* sql`DROP FUNCTION scheduler_claim(int4, text, text, text, int4, int4, text, int8, text, int8)`
  yield* sql.unsafe(`
    CREATE FUNCTION scheduler_claim(
      p_lock_key int4, p_org text, p_lock_wait text, p_batch text, p_reserved int4, p_max int4, p_owner text,
      p_until int8, p_from text, p_now int8, p_groups int4[]
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
      v_ids int8[];
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
        IF p_groups IS NULL THEN
          -- no legal-hours constraint given (migration 0022): every pending task, as before
          v_ids := ARRAY(
            SELECT p.task_id FROM batch_call_tasks p
            WHERE p.batch_call_id = p_batch AND p.state = 'pending'
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
                    ORDER BY q.task_index
                    LIMIT v_n)
                  UNION ALL
                  SELECT x.task_id, x.task_index FROM unnest(p_groups) AS g(id) CROSS JOIN LATERAL (
                    SELECT q.task_id, q.task_index FROM batch_call_tasks q
                    WHERE q.batch_call_id = p_batch AND q.legal_group = g.id AND q.state = 'pending'
                    ORDER BY q.task_index
                    LIMIT v_n) x
                ) c
                ORDER BY c.task_index
                LIMIT v_n))
              AND p.state = 'pending'
            ORDER BY p.task_index
            FOR UPDATE SKIP LOCKED);
        END IF;
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
            WHERE t.task_id = ANY(v_ids)
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
})
