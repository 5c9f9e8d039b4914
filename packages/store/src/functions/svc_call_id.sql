-- svc_call_id: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0012_call_lifecycle (its live text).
CREATE OR REPLACE FUNCTION svc_call_id(p_task_id bigint)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
RETURN ('call_'::text || md5(('svc-call:'::text || (p_task_id)::text)))
