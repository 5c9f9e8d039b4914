-- batch_has_pending_task: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- New with retry-batch-call (decision 0551): whether a batch has a pending task, seen with a snapshot of its own.
-- PL/pgSQL (never inlined) and VOLATILE, so under READ COMMITTED its query takes a fresh snapshot each time it runs,
-- also when the statement that calls it re-checks a row it waited for. The completing statement
-- (DryBatches.completeIfDone) takes no org lock and its own snapshot may predate a retry that put finished tasks
-- back to pending: it then waits for the retry's lock on the batch row and re-checks its conditions on the row's new
-- version, where only this call sees the retry's tasks. One probe of the pending tasks' index.
CREATE OR REPLACE FUNCTION batch_has_pending_task(p_batch text)
 RETURNS boolean
 LANGUAGE plpgsql
 VOLATILE
AS $function$
    BEGIN
      RETURN (
        SELECT 1 FROM batch_call_tasks t
        WHERE t.batch_call_id = p_batch AND t.state = 'pending'
        ORDER BY t.task_index
        LIMIT 1
      ) IS NOT NULL;
    END $function$
