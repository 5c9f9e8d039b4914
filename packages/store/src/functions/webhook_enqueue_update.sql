-- webhook_enqueue_update: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0013_webhooks (its live text).
CREATE OR REPLACE FUNCTION webhook_enqueue_update()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
    END $function$
