/**
 * Batch tests that run: test-case definitions, and one run row per definition of a batch test job, which
 * the scheduler leases, runs and finishes (decision 0702). Schema only (docs/architecture.md: migrations after 0027
 * hold no function bodies): the job's counts are recounted from its runs by the statement that finishes a run.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE test_case_definitions (
      org_id text NOT NULL REFERENCES orgs ON DELETE CASCADE,
      test_case_definition_id text NOT NULL,
      -- the engine it is listed under: llm_id, conversation_flow_id or llm_websocket_url by type
      engine_type text NOT NULL CHECK (engine_type IN ('svc-llm', 'custom-llm', 'conversation-flow')),
      engine_id text NOT NULL,
      -- the definition in the API's shape without id and timestamps (decoded with the domain's schema on read)
      definition jsonb NOT NULL,
      creation_timestamp bigint NOT NULL,
      user_modified_timestamp bigint NOT NULL,
      PRIMARY KEY (org_id, test_case_definition_id)
    )`
  // v2/list-test-case-definitions: one engine of one org, newest first, keyset on (creation, id)
  yield* sql`
    CREATE INDEX test_case_definitions_engine ON test_case_definitions
      (org_id, engine_type, engine_id, creation_timestamp DESC, test_case_definition_id DESC)`
  yield* sql`
    CREATE TABLE test_case_runs (
      org_id text NOT NULL,
      test_case_job_id text NOT NULL,
      test_case_batch_job_id text NOT NULL,
      test_case_definition_id text NOT NULL,
      -- position in create-batch-test's list: list-test-runs reads runs in this order
      ordinal integer NOT NULL CHECK (ordinal >= 0),
      definition_snapshot jsonb NOT NULL,
      -- the batch's engine at creation (the URL a run connects to)
      llm_websocket_url text NOT NULL,
      status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'in_progress', 'pass', 'fail', 'error')),
      -- leases taken: a run whose worker died is taken again until the cap (decision 0702)
      attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      lease_owner text,
      lease_expires_at bigint,
      result_explanation text,
      transcript_snapshot jsonb,
      creation_timestamp bigint NOT NULL,
      user_modified_timestamp bigint NOT NULL,
      PRIMARY KEY (org_id, test_case_job_id),
      FOREIGN KEY (org_id, test_case_batch_job_id)
        REFERENCES test_case_batch_jobs (org_id, test_case_batch_job_id) ON DELETE CASCADE,
      UNIQUE (org_id, test_case_batch_job_id, ordinal),
      CHECK ((status = 'in_progress') = (lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL))
    )`
  // the worker's claim: runs not finished, the oldest lease first; finished runs leave the index
  yield* sql`
    CREATE INDEX test_case_runs_due ON test_case_runs (coalesce(lease_expires_at, 0), creation_timestamp)
      WHERE status IN ('pending', 'in_progress')`
})
