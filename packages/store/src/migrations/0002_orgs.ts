/**
 * Tenancy and the assets requests refer to: organisations, their API keys (stored only as a
 * SHA-256 hash, looked up by it in O(1)), the phone numbers they own (create-batch-call's
 * `from_number` must be one: spec "a number ... that the account owns") and their agents with
 * versions (a task's `override_agent_id` must exist in the org).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE orgs (
      org_id text PRIMARY KEY,
      name text NOT NULL,
      -- calls in flight per org never exceed this (scheduler), minus reserved_concurrency
      concurrency_limit integer NOT NULL DEFAULT 20 CHECK (concurrency_limit > 0),
      created_timestamp bigint NOT NULL
    )`
  yield* sql`
    CREATE TABLE api_keys (
      key_hash bytea PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs ON DELETE CASCADE,
      -- first characters of the key, so an operator can tell keys apart without the secret
      key_prefix text NOT NULL,
      created_timestamp bigint NOT NULL,
      revoked_timestamp bigint
    )`
  yield* sql`CREATE INDEX api_keys_org ON api_keys (org_id)`
  yield* sql`
    CREATE TABLE phone_numbers (
      org_id text NOT NULL REFERENCES orgs ON DELETE CASCADE,
      phone_number text NOT NULL,
      created_timestamp bigint NOT NULL,
      PRIMARY KEY (org_id, phone_number)
    )`
  yield* sql`
    CREATE TABLE agents (
      org_id text NOT NULL REFERENCES orgs ON DELETE CASCADE,
      agent_id text NOT NULL,
      version integer NOT NULL DEFAULT 0 CHECK (version >= 0),
      created_timestamp bigint NOT NULL,
      PRIMARY KEY (org_id, agent_id, version)
    )`
})
