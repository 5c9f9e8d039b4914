// Sharding by organisation (issue 30 item 5; docs/operations.md "Sharding by organisation (Citus)"): Citus distributes
// a table by one column and enforces a primary key or unique constraint only when it includes that column. For every
// table of the schema, as the migrations leave it, this test states how it would be placed: `distributed` (it has
// `org_id` and every primary key and unique key includes it), `reference` (small, read by every org or before the org
// is known: copied to every node), `local` (the deployment's own bookkeeping, on the coordinator), or `not yet` (it
// belongs to an org but a key lacks `org_id`: what a distribution by org would have to change, named). A new table
// fails the test until it is classified; a `not yet` table whose keys gain `org_id` fails it until it is reclassified.
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

type Placement =
  | { readonly kind: "distributed" }
  | { readonly kind: "reference" | "local" | "not yet"; readonly why: string }

const distributed: Placement = { kind: "distributed" }

const placements: Record<string, Placement> = {
  agents: distributed,
  backfill_jobs: distributed,
  batch_call_idempotency_keys: distributed,
  calls: distributed,
  contact_counts: distributed,
  contact_search: distributed,
  contacts: distributed,
  number_attempts: distributed,
  org_calling_policies: distributed,
  org_predial_webhooks: distributed,
  orgs: distributed,
  phone_numbers: distributed,
  suppressions: distributed,
  test_case_batch_jobs: distributed,
  test_case_definitions: distributed,
  test_case_runs: distributed,
  webhook_orgs: distributed,
  webhook_settings: distributed,
  api_keys: {
    kind: "reference",
    why: "looked up by the key's hash before the org is known (Authorization); one row per key, small"
  },
  carrier_pacing: {
    kind: "reference",
    why: "one row per carrier account, shared by every org's dials (decision 0610)"
  },
  scheduler_cron_ticks: { kind: "local", why: "one row per cron tick of the deployment, not of an org" },
  simulated_dialer_attempts: { kind: "local", why: "the simulated carrier's own records (tests and demos)" },
  simulated_dialer_calls: { kind: "local", why: "the simulated carrier's own records (tests and demos)" },
  svc_functions: { kind: "local", why: "the migrator's record of the SQL functions applied (decision 0017)" },
  svc_migrations: { kind: "local", why: "the migrator's record of the migrations applied" },
  svc_secrets: { kind: "local", why: "the deployment's own secrets" },
  batch_calls: { kind: "not yet", why: "primary key (batch_call_id): becomes (org_id, batch_call_id)" },
  batch_call_tasks: {
    kind: "not yet",
    why: "primary key (task_id) and unique (batch_call_id, task_index): both gain org_id; the claim reads tasks by " +
      "task_id, which stays unique within an org"
  },
  batch_call_legal_groups: {
    kind: "not yet",
    why: "no org_id: gains the batch's org_id, then (org_id, batch_call_id, legal_group)"
  },
  batch_call_recent_requests: {
    kind: "not yet",
    why: "primary key (api_key_id, request_hash): the key determines the org, so (org_id, api_key_id, request_hash)"
  },
  contact_feed: { kind: "not yet", why: "primary key (call_seq): becomes (org_id, call_seq), as calls' own key" },
  org_calling_policy_audit: { kind: "not yet", why: "primary key (audit_id): becomes (org_id, audit_id)" },
  twilio_calls: {
    kind: "not yet",
    why: "no org_id: primary key (idempotency_key) and unique (call_sid); Twilio's callbacks name only the call " +
      "sid, so the row needs its org_id and the callback a lookup by sid (a reference index or the org in the URL)"
  },
  webhook_events: { kind: "not yet", why: "primary key (event_seq): becomes (org_id, event_seq)" },
  webhook_secrets: { kind: "not yet", why: "primary key (secret_id): becomes (org_id, secret_id)" }
}

interface TableKeys {
  readonly table_name: string
  readonly has_org: boolean
  /** The columns of each primary key, unique constraint and unique index. */
  readonly keys: ReadonlyArray<ReadonlyArray<string>>
}

layer(TestDatabase.layer, { timeout: 60_000 })("sharding by organisation", (it) => {
  it.effect("every table is placed: distributed ones have org_id in every key, the others say why", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const tables = yield* sql<TableKeys>`
        SELECT c.relname AS table_name,
          EXISTS (
            SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'org_id' AND NOT a.attisdropped
          ) AS has_org,
          coalesce((
            SELECT json_agg((
              SELECT coalesce(json_agg(a.attname ORDER BY k.ord), '[]'::json)
              FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(n, ord)
              JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.n
            ) ORDER BY i.indexrelid)
            FROM pg_index i WHERE i.indrelid = c.oid AND i.indisunique
          ), '[]'::json) AS keys
        FROM pg_class c
        WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
          -- a partition is placed with its table (calls' partitions, decision 0442)
          AND NOT c.relispartition
        ORDER BY 1`
      // not vacuous: the tables of the product are there
      assert.isAtLeast(tables.length, 30)
      assert.deepStrictEqual(tables.map((t) => t.table_name), Object.keys(placements).sort(), "tables placed")
      for (const table of tables) {
        const placement = placements[table.table_name]!
        const orgInEveryKey = table.has_org && table.keys.length > 0 &&
          table.keys.every((key) => key.includes("org_id"))
        if (placement.kind === "distributed") {
          assert.isTrue(orgInEveryKey, `${table.table_name}: keys ${JSON.stringify(table.keys)} without org_id`)
        } else if (placement.kind === "not yet") {
          assert.isFalse(orgInEveryKey, `${table.table_name} is distributable now: place it as distributed`)
        }
      }
    }))
})
