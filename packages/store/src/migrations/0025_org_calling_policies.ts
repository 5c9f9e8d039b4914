/**
 * Organisations' calling policies (issue 15, "Legal hours": "Per-org override of the policy (stricter always allowed;
 * looser only with an explicit, audited admin flag)"; docs/decisions/0628-org-calling-policy.md).
 *
 * - `org_calling_policies`: the org's current override (CallingPolicy.PolicyOverride as JSON, `allowLooser`
 *   included when an admin approved a looser row) and its version, which rises by one at every change. The
 *   scheduler reads the version with each due batch and re-resolves a batch's legal groups when it changed.
 * - `org_calling_policy_audit`: every change, kept: who approved a looser row and why, and which rows were looser
 *   than the default policy at the time. Never updated or deleted by svc.
 *
 * `batch_call_legal_groups.rule_ids` now holds a group's candidate jurisdictions ("US", the area code's states, the
 * contact's address state) whether or not the policy has a row for them; rows written before hold the subset that
 * had a row under the default policy, which resolves to the same rules under it.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE org_calling_policies (
      org_id text PRIMARY KEY REFERENCES orgs ON DELETE CASCADE,
      override jsonb NOT NULL,
      version bigint NOT NULL CHECK (version > 0),
      updated_timestamp bigint NOT NULL
    )`
  yield* sql`
    CREATE TABLE org_calling_policy_audit (
      audit_id bigserial PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs ON DELETE CASCADE,
      version bigint NOT NULL,
      at bigint NOT NULL,
      action text NOT NULL CHECK (action IN ('set', 'clear')),
      override jsonb,
      -- the rows looser than the default policy, one line each (empty: stricter or equal)
      loosenings text[] NOT NULL DEFAULT '{}',
      approved_by text,
      reason text
    )`
  yield* sql`CREATE INDEX org_calling_policy_audit_org ON org_calling_policy_audit (org_id, audit_id)`
})
