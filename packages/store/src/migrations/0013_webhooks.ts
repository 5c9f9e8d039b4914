/**
 * Webhooks (issue 13, part 4; decision records docs/decisions/0520-0524): where an org's events go, the secret
 * that signs them, and the outbox of events still to deliver.
 *
 * - `webhook_settings`: the org's default target (`admin set-webhook`), used when neither the task's
 *   `agent_override.agent` nor the agent names a `webhook_url`.
 * - `agents` gains the agent's own `webhook_url` / `webhook_events` / `webhook_timeout_ms` (`admin add-agent
 *   --webhook-url`): the vendor's agent settings of the same names (vendor facts §2.3).
 * - `webhook_secrets`: the org's signing secrets. Signing needs the secret itself, so it is stored as is, not hashed
 *   (decision 0521). A new secret starts signing `x-svc-signature` at `active_from` (after a grace period, while the
 *   previous one still signs it and the new one signs `x-svc-signature-next`).
 * - `webhook_orgs`: the orgs that have, or may have, a webhook target anywhere (default, agent or a task's override).
 *   The outbox trigger looks at it first, so an org without webhooks pays one hash probe per statement, nothing per
 *   call. Rows are never removed (a stale row costs the resolution of a statement's calls, nothing more).
 * - `webhook_events`: the outbox. One row per event to deliver, written by the trigger on `calls` in the same
 *   transaction as the call state change (so an event exists exactly when its change committed), with the exact
 *   body that is signed and sent (text: jsonb would not keep the bytes), the resolved URL and timeout, and the
 *   delivery state. `due_at` is both the next retry time and the lease: a worker that claims an event moves it past
 *   the attempt's timeout, so a worker killed mid-delivery leaves it due again once that passes (at least once).
 *
 * Events (decision 0520): `call_started` when a call becomes `ongoing`, or reaches `ended` without having been seen
 * `ongoing` (a connected call whose start was never recorded apart); `call_ended` when it reaches a final status
 * (`ended`, `error`, `not_connected`); `call_analyzed` when it is final and its get-call shape has `call_analysis`
 * and did not before (with the end when both arrive in one statement). The `call_ended` body leaves out
 * `call_analysis` (vendor facts §2.2: "call_ended has no call_analysis; call_analyzed has it").
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE webhook_settings (
      org_id text PRIMARY KEY REFERENCES orgs ON DELETE CASCADE,
      webhook_url text,
      -- NULL: the vendor's default events (call_started, call_ended, call_analyzed)
      webhook_events text[],
      webhook_timeout_ms integer CHECK (webhook_timeout_ms > 0),
      updated_timestamp bigint NOT NULL
    )`
  yield* sql`
    ALTER TABLE agents
      ADD COLUMN webhook_url text,
      ADD COLUMN webhook_events text[],
      ADD COLUMN webhook_timeout_ms integer CHECK (webhook_timeout_ms > 0)`
  yield* sql`
    CREATE TABLE webhook_secrets (
      secret_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs ON DELETE CASCADE,
      secret text NOT NULL,
      created_timestamp bigint NOT NULL,
      -- from then on it signs x-svc-signature; before, x-svc-signature-next
      active_from bigint NOT NULL
    )`
  yield* sql`CREATE INDEX webhook_secrets_org ON webhook_secrets (org_id, active_from DESC)`
  yield* sql`CREATE TABLE webhook_orgs (org_id text PRIMARY KEY)`

  yield* sql`
    CREATE TABLE webhook_events (
      event_seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      -- sent as x-svc-event-id: the receiver's de-duplication key, the same on every attempt. 'evt_' + a random
      -- UUID: unique without a unique index (which every event would pay for on each state change)
      event_id text NOT NULL,
      org_id text NOT NULL,
      call_id text NOT NULL,
      event text NOT NULL CHECK (event IN ('call_started', 'call_ended', 'call_analyzed')),
      url text NOT NULL,
      timeout_ms integer NOT NULL CHECK (timeout_ms > 0),
      body text NOT NULL,
      -- pending -> delivered (2xx) | gone (410) | failed (given up after 24 h of attempts)
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'gone', 'failed')),
      -- database time of the call change: only for queue age (the worker's own times come from its clock)
      enqueued_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      -- worker clock, ms: next attempt or end of the current attempt's lease; 0 = due at once
      due_at bigint NOT NULL DEFAULT 0,
      -- worker clock, ms, of the first attempt: the 24 h budget runs from it
      first_attempt_at bigint,
      attempts integer NOT NULL DEFAULT 0,
      lease_owner text,
      last_status integer,
      last_error text,
      -- the last attempts, newest last: [{at, status, error, ms}] (at most 10)
      history jsonb NOT NULL DEFAULT '[]',
      finished_at bigint
    )`
  // the claim: due events per org, in due order
  yield* sql`CREATE INDEX webhook_events_due ON webhook_events (org_id, due_at) WHERE state = 'pending'`
  // ordering per call: an earlier pending event holds the later ones back. Its own partial index, so the claim's
  // check is an index probe whatever the statistics say (a queue table changes faster than ANALYZE sees it; with
  // the (org_id, due_at) index the planner once walked all of an org's pending rows per candidate). Led by call_id
  // and probed without an indexable org condition, so that no other index can serve the probe.
  yield* sql`
    CREATE INDEX webhook_events_pending_call ON webhook_events (call_id, event_seq) WHERE state = 'pending'`
  // admin webhook-deliveries --call, newest first. By org alone it walks the primary key backwards: an operator's
  // command, not worth a fifth index every event pays for twice (insert, and each state change)
  yield* sql`CREATE INDEX webhook_events_call ON webhook_events (org_id, call_id, event_seq)`

  // The target of a call's events (decision 0522): the task's agent_override.agent settings field by field over
  // the agent's, and the org's default when neither names a URL. An explicit `webhook_url: null` in the override
  // removes the agent's URL for that call (the vendor: "null removes it"), leaving the org's default.
  yield* sql.unsafe(`
    CREATE FUNCTION webhook_target(c calls) RETURNS TABLE (url text, events text[], timeout_ms integer)
    LANGUAGE sql STABLE AS $fn$
      WITH o AS (
        SELECT t.agent_override->'agent' AS a FROM batch_call_tasks t WHERE t.task_id = c.task_id
      ), ag AS (
        SELECT g.webhook_url, g.webhook_events, g.webhook_timeout_ms FROM agents g
        WHERE g.org_id = c.org_id AND g.agent_id = c.agent_id
        ORDER BY (g.version::text = to_jsonb(c)->>'agent_version') DESC, g.version DESC
        LIMIT 1
      ), s AS (
        SELECT w.webhook_url, w.webhook_events, w.webhook_timeout_ms FROM webhook_settings w WHERE w.org_id = c.org_id
      ), agent_level AS (
        SELECT
          CASE WHEN (SELECT a FROM o) ? 'webhook_url' THEN (SELECT a->>'webhook_url' FROM o)
               ELSE (SELECT webhook_url FROM ag) END AS url,
          CASE WHEN jsonb_typeof((SELECT a->'webhook_events' FROM o)) = 'array'
               THEN ARRAY(SELECT jsonb_array_elements_text((SELECT a->'webhook_events' FROM o)))
               ELSE (SELECT webhook_events FROM ag) END AS events,
          COALESCE(
            CASE WHEN jsonb_typeof((SELECT a->'webhook_timeout_ms' FROM o)) = 'number'
                 THEN greatest(1, ((SELECT a->>'webhook_timeout_ms' FROM o))::numeric)::integer END,
            (SELECT webhook_timeout_ms FROM ag)
          ) AS timeout_ms
      )
      SELECT
        COALESCE(l.url, (SELECT webhook_url FROM s)),
        COALESCE(
          l.events,
          CASE WHEN l.url IS NULL THEN (SELECT webhook_events FROM s) END,
          ARRAY['call_started', 'call_ended', 'call_analyzed']
        ),
        COALESCE(l.timeout_ms, (SELECT webhook_timeout_ms FROM s), 10000)
      FROM agent_level l
    $fn$`)

  // The events one call's change raises, in the order they are delivered (see the header).
  yield* sql.unsafe(`
    CREATE FUNCTION webhook_call_events(prev_status text, prev_analyzed boolean, status text, analyzed boolean)
    RETURNS TABLE (event text, ord integer) LANGUAGE sql IMMUTABLE AS $fn$
      SELECT 'call_started', 1
        WHERE (status = 'ongoing' AND prev_status IS DISTINCT FROM 'ongoing'
               AND (prev_status IS NULL OR prev_status = 'registered'))
           OR (status = 'ended' AND (prev_status IS NULL OR prev_status = 'registered'))
      UNION ALL
      SELECT 'call_ended', 2
        WHERE status IN ('ended', 'error', 'not_connected')
          AND (prev_status IS NULL OR prev_status NOT IN ('ended', 'error', 'not_connected'))
      UNION ALL
      SELECT 'call_analyzed', 3
        WHERE status IN ('ended', 'error', 'not_connected') AND analyzed
          AND NOT (coalesce(prev_status IN ('ended', 'error', 'not_connected'), false) AND prev_analyzed)
    $fn$`)

  // Writes the outbox rows of one statement's changes: (prev, new) pairs as rows of calls. Only orgs in
  // webhook_orgs are looked at; ordered by call then event, so event_seq follows delivery order.
  yield* sql.unsafe(`
    CREATE FUNCTION webhook_enqueue_insert() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM webhook_orgs) THEN RETURN NULL; END IF;
      INSERT INTO webhook_events (event_id, org_id, call_id, event, url, timeout_ms, body)
      SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), n.org_id, n.call_id, e.event, t.url, t.timeout_ms,
             jsonb_build_object('event', e.event, 'call',
               CASE WHEN e.event = 'call_analyzed' THEN j.call ELSE j.call - 'call_analysis' END)::text
      FROM fresh n
      CROSS JOIN LATERAL (SELECT call_json(n) AS call) j
      CROSS JOIN LATERAL webhook_call_events(NULL, false, n.call_status,
        jsonb_typeof(j.call->'call_analysis') = 'object') e
      CROSS JOIN LATERAL webhook_target(n) t
      WHERE n.org_id IN (SELECT org_id FROM webhook_orgs) AND t.url IS NOT NULL AND e.event = ANY(t.events)
      ORDER BY n.org_id, n.call_id, e.ord;
      RETURN NULL;
    END $fn$`)
  yield* sql.unsafe(`
    CREATE FUNCTION webhook_enqueue_update() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM webhook_orgs) THEN RETURN NULL; END IF;
      INSERT INTO webhook_events (event_id, org_id, call_id, event, url, timeout_ms, body)
      SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), n.org_id, n.call_id, e.event, t.url, t.timeout_ms,
             jsonb_build_object('event', e.event, 'call',
               CASE WHEN e.event = 'call_analyzed' THEN j.call ELSE j.call - 'call_analysis' END)::text
      FROM changed n
      JOIN previous p ON p.org_id = n.org_id AND p.call_id = n.call_id
      CROSS JOIN LATERAL (SELECT call_json(n) AS call) j
      CROSS JOIN LATERAL webhook_call_events(p.call_status, jsonb_typeof(call_json(p)->'call_analysis') = 'object',
        n.call_status, jsonb_typeof(j.call->'call_analysis') = 'object') e
      CROSS JOIN LATERAL webhook_target(n) t
      WHERE n.org_id IN (SELECT org_id FROM webhook_orgs) AND t.url IS NOT NULL AND e.event = ANY(t.events)
      ORDER BY n.org_id, n.call_id, e.ord;
      RETURN NULL;
    END $fn$`)
  yield* sql`
    CREATE TRIGGER calls_webhooks_insert AFTER INSERT ON calls
      REFERENCING NEW TABLE AS fresh FOR EACH STATEMENT EXECUTE FUNCTION webhook_enqueue_insert()`
  yield* sql`
    CREATE TRIGGER calls_webhooks_update AFTER UPDATE ON calls
      REFERENCING OLD TABLE AS previous NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION webhook_enqueue_update()`

  // A task whose override names a webhook URL puts its org on the gate list. Row-level with WHEN: tasks without
  // one (nearly all) cost one expression each and queue no trigger event.
  yield* sql.unsafe(`
    CREATE FUNCTION webhook_orgs_from_task() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM webhook_orgs WHERE org_id = NEW.org_id) THEN
        INSERT INTO webhook_orgs (org_id) VALUES (NEW.org_id) ON CONFLICT DO NOTHING;
      END IF;
      RETURN NULL;
    END $fn$`)
  yield* sql`
    CREATE TRIGGER batch_call_tasks_webhook_orgs AFTER INSERT ON batch_call_tasks
      FOR EACH ROW WHEN (NEW.agent_override->'agent'->>'webhook_url' IS NOT NULL)
      EXECUTE FUNCTION webhook_orgs_from_task()`
})
