-- webhook_enqueue_insert: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0013_webhooks; a new row has no previous status, so it can make any event.
CREATE OR REPLACE FUNCTION webhook_enqueue_insert()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM webhook_orgs) THEN RETURN NULL; END IF;
      INSERT INTO webhook_events (event_id, org_id, call_id, event, url, timeout_ms, body)
      SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), n.org_id, n.call_id, d.event, d.url, d.timeout_ms, d.body
      FROM fresh n
      CROSS JOIN LATERAL webhook_transition_events(n, n.call_status, NULL, false) d
      WHERE n.org_id IN (SELECT org_id FROM webhook_orgs)
      ORDER BY n.org_id, n.call_id, d.ord;
      RETURN NULL;
    END $function$
