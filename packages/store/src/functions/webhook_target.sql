-- webhook_target: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0013_webhooks (its live text).
CREATE OR REPLACE FUNCTION webhook_target(c calls)
 RETURNS TABLE(url text, events text[], timeout_ms integer)
 LANGUAGE sql
 STABLE
AS $function$
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
    $function$
