/**
 * Batch progress and cancellation (issue 13, part 3; `GET /get-batch-call/{id}`, `POST /cancel-batch-call/{id}`,
 * BatchProgressRepo; docs/decisions/0533-batch-cancel.md).
 *
 * - `batch_calls.finished_timestamp`: when the batch left `scheduled`/`in_progress` for `completed` or `cancelled`.
 *   A cancel sets it from the server's clock in its own statement; the scheduler's completion statement
 *   (DispatchRepo.completeIfDone) sets only the status, so a row trigger fills in the database's clock then. It
 *   fires once per batch, on that transition only.
 * - A cancelled batch's tasks stay cancelled: a task that goes back to `pending` (DispatchRepo.returnToPending,
 *   after the dialer said an `unknown` task's call was never placed) becomes `cancelled` instead when its batch is.
 *   The cancel and that return both run under the org's advisory lock (DispatchRepo.ORG_LOCK), so one sees the
 *   other's result. The trigger's WHEN clause keeps it off every other task update (the claim's `pending` ->
 *   `dialling`, the recorder's final states). The call the claim registered for that task (migration 0012) was
 *   never placed: it ends `not_connected` with the vendor's reason `manual_stopped` and takes its place in the
 *   finished calls' order (a new `call_seq`, as CallsRepo.recordFinished gives one), instead of staying
 *   `registered` for ever.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE batch_calls ADD COLUMN finished_timestamp bigint`
  yield* sql`
    CREATE FUNCTION batch_calls_finished() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.finished_timestamp := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
      RETURN NEW;
    END $$`
  yield* sql`
    CREATE TRIGGER batch_calls_finished BEFORE UPDATE OF status ON batch_calls
      FOR EACH ROW
      WHEN (NEW.status IN ('completed', 'cancelled') AND OLD.status IN ('scheduled', 'in_progress')
        AND NEW.finished_timestamp IS NULL)
      EXECUTE FUNCTION batch_calls_finished()`
  yield* sql`
    CREATE FUNCTION batch_call_tasks_stay_cancelled() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM batch_calls b WHERE b.batch_call_id = NEW.batch_call_id AND b.status = 'cancelled') THEN
        NEW.state := 'cancelled';
        NEW.state_reason := 'batch_cancelled';
        NEW.lease_owner := NULL;
        NEW.lease_expires_at := NULL;
        UPDATE calls c SET call_status = 'not_connected', disconnection_reason = 'manual_stopped',
          call_seq = nextval('calls_call_seq_seq'::regclass)
        WHERE c.org_id = NEW.org_id AND c.call_id = NEW.call_id AND c.call_status = 'registered';
      END IF;
      RETURN NEW;
    END $$`
  yield* sql`
    CREATE TRIGGER batch_call_tasks_stay_cancelled BEFORE UPDATE OF state ON batch_call_tasks
      FOR EACH ROW WHEN (NEW.state = 'pending' AND OLD.state <> 'pending')
      EXECUTE FUNCTION batch_call_tasks_stay_cancelled()`
})
