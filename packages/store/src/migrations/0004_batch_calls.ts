/**
 * Batch calls and their tasks (spec: `POST /create-batch-call`), stored by the server in one transaction and
 * worked on by the scheduler (issue 5): one row per task, claimed with `FOR UPDATE SKIP LOCKED` under a lease,
 * its `task_id` the idempotency key of the dial. Plus the two tables that make retried creates return the
 * first batch (design: "retries of create-batch-call"). Decision record:
 * docs/decisions/0302-batch-call-storage.md.
 *
 * Task states: `pending` (waiting for its batch's trigger time, window and a free slot) -> `dialling` (claimed,
 * lease held, dial in progress) -> `completed` | `failed`; a `dialling` task whose lease expired becomes
 * `unknown` and is reconciled with the dialer before any redial; `skipped` never dials (e.g. `do_not_call`,
 * reason in `state_reason`); `cancelled` when its batch is.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE batch_calls (
      -- random, 128 bits: unguessable, so unique without the org; every read still filters by org_id
      batch_call_id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs ON DELETE CASCADE,
      -- the API key that created it: the retry rule dedupes per key (design: "retries of create-batch-call")
      api_key_id text NOT NULL,
      name text NOT NULL DEFAULT '',
      from_number text NOT NULL,
      -- as requested; NULL = send immediately (spec: trigger_timestamp)
      trigger_timestamp bigint,
      -- trigger_timestamp, else the creation time (design: "scheduled_timestamp", ms)
      scheduled_timestamp bigint NOT NULL,
      -- concurrency the batch leaves to other calls (spec: reserved_concurrency >= 0)
      reserved_concurrency integer NOT NULL DEFAULT 0 CHECK (reserved_concurrency >= 0),
      -- canonical form (domain CallWindow.canonicalize); NULL = no window, any time
      call_time_window jsonb,
      status text NOT NULL DEFAULT 'scheduled'
        CHECK (status IN ('scheduled', 'in_progress', 'completed', 'cancelled')),
      total_task_count integer NOT NULL CHECK (total_task_count > 0),
      -- the scheduler looks at the batch no earlier than this (trigger time, then its window's next opening),
      -- so a waiting batch costs nothing between openings
      next_dispatch_at bigint NOT NULL,
      created_timestamp bigint NOT NULL
    )`
  yield* sql`CREATE INDEX batch_calls_org ON batch_calls (org_id, created_timestamp)`
  yield* sql`
    CREATE INDEX batch_calls_due ON batch_calls (next_dispatch_at)
    WHERE status IN ('scheduled', 'in_progress')`

  // No foreign key to batch_calls: per-row RI checks made the 100,000-task insert ~70% slower (measured, see the
  // decision record). Tasks are only ever written together with their batch, in its transaction, and the trigger
  // below gives ON DELETE CASCADE semantics.
  yield* sql`
    CREATE TABLE batch_call_tasks (
      -- stable and unique: the dial's idempotency key (issue 5, "exactly once")
      task_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      org_id text NOT NULL,
      batch_call_id text NOT NULL,
      -- position in the request's tasks array, from 0
      task_index integer NOT NULL CHECK (task_index >= 0),
      to_number text NOT NULL,
      override_agent_id text,
      -- override_agent_version is a number or a name ("latest", "latest_published", a tag): at most one is set
      -- bigint: the request allows any non-negative JSON integer, not only int4 ones
      override_agent_version bigint CHECK (override_agent_version >= 0),
      override_agent_version_name text,
      agent_override jsonb,
      dynamic_variables jsonb,
      metadata jsonb,
      custom_sip_headers jsonb,
      state text NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'dialling', 'unknown', 'completed', 'failed', 'skipped', 'cancelled')),
      state_reason text,
      lease_owner text,
      lease_expires_at bigint,
      attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      call_id text,
      CHECK (override_agent_version IS NULL OR override_agent_version_name IS NULL),
      CHECK (state <> 'dialling' OR (lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL)),
      UNIQUE (batch_call_id, task_index)
    )`
  // the claim: `WHERE batch_call_id = $1 AND state = 'pending' ORDER BY task_index LIMIT n FOR UPDATE SKIP
  // LOCKED` walks only what is left to dial, however much of the batch is done
  yield* sql`
    CREATE INDEX batch_call_tasks_pending ON batch_call_tasks (batch_call_id, task_index)
    WHERE state = 'pending'`
  // calls in flight per org (the concurrency limit) and expired leases: a small set, read on every tick
  yield* sql`
    CREATE INDEX batch_call_tasks_dialling ON batch_call_tasks (org_id, lease_expires_at)
    WHERE state = 'dialling'`
  yield* sql`CREATE INDEX batch_call_tasks_unknown ON batch_call_tasks (org_id) WHERE state = 'unknown'`
  yield* sql`
    CREATE FUNCTION batch_call_tasks_cascade() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM batch_call_tasks WHERE batch_call_id = OLD.batch_call_id;
      RETURN OLD;
    END
    $$`
  yield* sql`
    CREATE TRIGGER batch_calls_delete_tasks AFTER DELETE ON batch_calls
    FOR EACH ROW EXECUTE FUNCTION batch_call_tasks_cascade()`

  // Idempotency-Key: per org, remembered 24 h (then the key may name a new batch). Deferred foreign key: the
  // key row is claimed first, so that a concurrent request with the same key waits on it instead of inserting
  // a second batch, and the batch row follows in the same transaction.
  yield* sql`
    CREATE TABLE batch_call_idempotency_keys (
      org_id text NOT NULL,
      -- SHA-256 of the key: a client's key may be longer than a btree entry can hold
      key_hash bytea NOT NULL,
      idempotency_key text NOT NULL,
      request_hash bytea NOT NULL,
      batch_call_id text NOT NULL,
      created_timestamp bigint NOT NULL,
      PRIMARY KEY (org_id, key_hash),
      FOREIGN KEY (batch_call_id) REFERENCES batch_calls ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED
    )`
  // Keyless retries: the vendor's client resends the identical body with X-Stainless-Retry-Count > 0 and no key
  // (vendor facts §3). One row per (API key, body): the latest batch created from that body and when that body was
  // last seen; a retry within 10 minutes of the previous attempt repeats the batch.
  yield* sql`
    CREATE TABLE batch_call_recent_requests (
      api_key_id text NOT NULL,
      request_hash bytea NOT NULL,
      org_id text NOT NULL,
      batch_call_id text NOT NULL,
      seen_timestamp bigint NOT NULL,
      PRIMARY KEY (api_key_id, request_hash),
      FOREIGN KEY (batch_call_id) REFERENCES batch_calls ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED
    )`
  // the cascades above, and housekeeping that deletes expired rows by age deletes expired rows by age
  yield* sql`CREATE INDEX batch_call_idempotency_keys_batch ON batch_call_idempotency_keys (batch_call_id)`
  yield* sql`CREATE INDEX batch_call_idempotency_keys_age ON batch_call_idempotency_keys (created_timestamp)`
  yield* sql`CREATE INDEX batch_call_recent_requests_batch ON batch_call_recent_requests (batch_call_id)`
  yield* sql`CREATE INDEX batch_call_recent_requests_age ON batch_call_recent_requests (seen_timestamp)`
})
