-- webhook_transition_events: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- The outbox rows of one call's change, which both trigger functions on `calls` write (decision 0520): the events
-- the change from the previous status (NULL for a new row) makes (webhook_call_events), those the call's target
-- subscribes to (webhook_target), each with its body. It was spelled out in webhook_enqueue_insert and _update
-- alike. SQL, STABLE and not STRICT, so the planner inlines it into the trigger's statement, which is planned as
-- it was when each trigger held this SELECT; the event id (gen_random_uuid, volatile) stays in the triggers, since
-- a volatile function is never inlined. `status` is c's call_status, given by the caller: read from the whole row
-- here it would stay a field selection per row after inlining, where the triggers had read the column. Its name
-- sorts after call_json, webhook_call_events and webhook_target: the migrator creates changed files in name order,
-- and a SQL body is checked against the functions it calls.
CREATE OR REPLACE FUNCTION webhook_transition_events(c calls, status text, prev_status text, prev_analyzed boolean)
 RETURNS TABLE(event text, ord integer, url text, timeout_ms integer, body text)
 LANGUAGE sql
 STABLE
AS $function$
      SELECT e.event, e.ord, t.url, t.timeout_ms,
             jsonb_build_object('event', e.event, 'call',
               CASE WHEN e.event = 'call_analyzed' THEN j.call ELSE j.call - 'call_analysis' END)::text
      FROM (SELECT call_json(c) AS call) j
      CROSS JOIN LATERAL webhook_call_events(prev_status, prev_analyzed, status,
        jsonb_typeof(j.call->'call_analysis') = 'object') e
      CROSS JOIN LATERAL webhook_target(c) t
      WHERE t.url IS NOT NULL AND e.event = ANY(t.events)
    $function$
