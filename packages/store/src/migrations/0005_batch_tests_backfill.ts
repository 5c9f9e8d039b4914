/**
 * Batch test jobs (spec: TestCaseBatchJob, read by get-batch-test and v2/list-batch-tests) and the
 * per-org contact-analysis backfill job (spec: BackfillJobStatus; one job per org: the status
 * endpoint takes no id).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE test_case_batch_jobs (
      org_id text NOT NULL REFERENCES orgs ON DELETE CASCADE,
      test_case_batch_job_id text NOT NULL,
      status text NOT NULL CHECK (status IN ('in_progress', 'complete')),
      engine_type text NOT NULL CHECK (engine_type IN ('svc-llm', 'custom-llm', 'conversation-flow')),
      -- llm_id, llm_websocket_url or conversation_flow_id, by engine type
      engine_id text NOT NULL,
      engine_version integer,
      pass_count integer NOT NULL DEFAULT 0 CHECK (pass_count >= 0),
      fail_count integer NOT NULL DEFAULT 0 CHECK (fail_count >= 0),
      error_count integer NOT NULL DEFAULT 0 CHECK (error_count >= 0),
      total_count integer NOT NULL CHECK (total_count >= 0),
      creation_timestamp bigint NOT NULL,
      user_modified_timestamp bigint NOT NULL,
      PRIMARY KEY (org_id, test_case_batch_job_id),
      CHECK (pass_count + fail_count + error_count <= total_count)
    )`
  // v2/list-batch-tests: one engine (and version) of one org, newest first, keyset on (creation, id)
  yield* sql`
    CREATE INDEX test_case_batch_jobs_engine ON test_case_batch_jobs
      (org_id, engine_type, engine_id, engine_version, creation_timestamp DESC, test_case_batch_job_id DESC)`
  yield* sql`
    CREATE TABLE backfill_jobs (
      org_id text PRIMARY KEY REFERENCES orgs ON DELETE CASCADE,
      status text NOT NULL CHECK (status IN ('queued', 'running', 'idle')),
      triggered_by text NOT NULL CHECK (triggered_by IN ('manual', 'cron')),
      start_timestamp bigint NOT NULL,
      succeeded integer NOT NULL DEFAULT 0 CHECK (succeeded >= 0),
      failed integer NOT NULL DEFAULT 0 CHECK (failed >= 0),
      backfill_attributes jsonb NOT NULL,
      backfill_call_filter jsonb,
      user_modified_timestamp bigint NOT NULL
    )`
})
