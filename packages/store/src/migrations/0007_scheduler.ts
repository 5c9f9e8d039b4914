/**
 * What the scheduler worker keeps (issue 5; decision record docs/decisions/0401-scheduler-row-leasing.md):
 *
 * - `calls`: every finished call of a batch, with its outcome and post-call analysis data. One row per task at
 *   most (`UNIQUE (task_id)` here, dropped by migration 0009: the recording statement guarantees it). The
 *   backfill job reads it per org in `call_seq` order (the order calls were recorded).
 * - `contact_feed`: the calls whose contact has not been updated yet, written in the statement that records the
 *   call and deleted in the statement that updates the contact (an outbox): every call reaches its contact exactly
 *   once, off the dispatch path.
 * - `simulated_dialer_calls` / `simulated_dialer_attempts`: the default, simulated carrier's own records (the
 *   calls it placed, one per idempotency key, and every dial request it received). They stand for the
 *   carrier's side of the port, so they survive a restart of the scheduler like a real carrier's would.
 * - `scheduler_cron_ticks`: one row per (job, tick); the worker whose insert wins runs that tick, so a tick
 *   runs once however many workers see it.
 * - `backfill_jobs` gains a lease (a running job belongs to one worker at a time, and a dead worker's job is
 *   taken over when its lease expires) and a resume point (`cursor_call_seq`), plus the range of calls the run
 *   covers (`calls_seq_low`, exclusive, to `calls_seq_high`, inclusive), fixed when the run starts: a restart
 *   continues where the last committed chunk ended, so no call is counted twice.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // No foreign keys to orgs or tasks: calls are written in bulk by the scheduler only, from rows that exist, and a
  // per-row RI check would cost a third of the insert (as for contacts, migration 0003). Deleting an org deletes
  // its calls through the statement trigger below.
  yield* sql`
    CREATE TABLE calls (
      org_id text NOT NULL,
      call_seq bigint GENERATED ALWAYS AS IDENTITY,
      call_id text NOT NULL,
      -- the batch task that placed the call (its idempotency key); NULL for calls from elsewhere
      task_id bigint,
      batch_call_id text,
      from_number text NOT NULL,
      to_number text NOT NULL,
      agent_id text,
      agent_version bigint,
      outcome text NOT NULL CHECK (outcome IN ('answered', 'busy', 'no_answer', 'failed')),
      disconnection_reason text NOT NULL,
      start_timestamp bigint NOT NULL,
      end_timestamp bigint NOT NULL,
      duration_ms bigint NOT NULL CHECK (duration_ms >= 0),
      -- post-call analysis data, name -> string | number | boolean; {} when no conversation took place
      analysis jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(analysis) = 'object'),
      recorded_timestamp bigint NOT NULL,
      PRIMARY KEY (org_id, call_seq),
      UNIQUE (task_id)
    )`
  yield* sql`
    CREATE FUNCTION orgs_delete_calls() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM calls WHERE org_id IN (SELECT org_id FROM gone);
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER orgs_delete_calls AFTER DELETE ON orgs
      REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION orgs_delete_calls()`

  // Rows live for a fraction of a second; ordered by call_seq, so the feeder takes the oldest first and its scan
  // skips the index entries of rows already fed.
  yield* sql`
    CREATE TABLE contact_feed (
      call_seq bigint PRIMARY KEY,
      org_id text NOT NULL,
      to_number text NOT NULL,
      start_timestamp bigint NOT NULL
    )`

  yield* sql`
    CREATE TABLE simulated_dialer_calls (
      idempotency_key text PRIMARY KEY,
      call_id text NOT NULL,
      placed_timestamp bigint NOT NULL,
      -- when the simulated line is free again (placed + the configured latency)
      ends_timestamp bigint NOT NULL,
      -- the CallEnded the carrier reports once the call is over
      result jsonb NOT NULL
    )`
  yield* sql`
    CREATE TABLE simulated_dialer_attempts (
      attempt_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      idempotency_key text NOT NULL,
      attempted_timestamp bigint NOT NULL,
      request jsonb NOT NULL
    )`
  yield* sql`CREATE INDEX simulated_dialer_attempts_key ON simulated_dialer_attempts (idempotency_key)`

  yield* sql`
    CREATE TABLE scheduler_cron_ticks (
      job text NOT NULL,
      tick_timestamp bigint NOT NULL,
      worker text NOT NULL,
      claimed_timestamp bigint NOT NULL,
      PRIMARY KEY (job, tick_timestamp)
    )`

  yield* sql`
    ALTER TABLE backfill_jobs
      ADD COLUMN lease_owner text,
      ADD COLUMN lease_expires_at bigint,
      ADD COLUMN cursor_call_seq bigint NOT NULL DEFAULT 0,
      ADD COLUMN calls_seq_low bigint NOT NULL DEFAULT 0,
      ADD COLUMN calls_seq_high bigint`
  yield* sql`CREATE INDEX backfill_jobs_active ON backfill_jobs (status) WHERE status IN ('queued', 'running')`
})
