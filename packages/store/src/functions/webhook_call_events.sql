-- webhook_call_events: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0013_webhooks (its live text).
CREATE OR REPLACE FUNCTION webhook_call_events(prev_status text, prev_analyzed boolean, status text, analyzed boolean)
 RETURNS TABLE(event text, ord integer)
 LANGUAGE sql
 IMMUTABLE
AS $function$
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
    $function$
