/**
 * Campaign control and suppression (decisions 0549, 0550): schema only (dependency rule 4).
 *
 * - A batch may be `paused` (svc extension `POST /pause-batch-call/{id}`): `paused_from` keeps the status it
 *   returns to on resume (`scheduled` or `in_progress`), set exactly while paused. `batch_calls_due` keeps its
 *   predicate (`status IN ('scheduled', 'in_progress')`), so a paused batch is never due and costs no pass.
 * - `max_concurrency` (create-batch-call, svc extension, >= 1): the batch's calls in flight never exceed it; NULL =
 *   only the org's limit and the batch's reserve bind.
 * - `suppressions`: an org's do-not-call list (`POST /create-suppression`, the registry import). One row per number
 *   (E.164), so the claim's check of a task is one probe of the primary key.
 * - `scheduler_claim` changes its result (the batch's calls in flight and whether it may be claimed at all): its
 *   signature changes, so the old one is dropped here and the functions pass creates the new one from
 *   `functions/scheduler_claim.sql` (decision 0017).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE batch_calls DROP CONSTRAINT batch_calls_status_check`
  yield* sql`
    ALTER TABLE batch_calls
      ADD CONSTRAINT batch_calls_status_check
        CHECK (status IN ('scheduled', 'in_progress', 'paused', 'completed', 'cancelled')),
      ADD COLUMN paused_from text CHECK (paused_from IN ('scheduled', 'in_progress')),
      ADD CONSTRAINT batch_calls_paused_from CHECK ((status = 'paused') = (paused_from IS NOT NULL)),
      ADD COLUMN max_concurrency integer CHECK (max_concurrency >= 1)`
  yield* sql`
    CREATE TABLE suppressions (
      org_id text NOT NULL REFERENCES orgs ON DELETE CASCADE,
      -- E.164, as tasks' to_number is stored: the claim probes (org_id, to_number)
      phone_number text NOT NULL,
      reason text,
      -- where it came from: api, opt_out (a call's update), or an import's --source (e.g. national_dnc)
      source text NOT NULL,
      created_timestamp bigint NOT NULL,
      PRIMARY KEY (org_id, phone_number)
    )`
  yield* sql`
    DROP FUNCTION scheduler_claim(integer, text, text, text, integer, integer, text, bigint, text, bigint, integer[],
      integer[], integer[], text[])`
})
