/**
 * Legal hours in dispatch (issue 15, item 3 "Dispatch"; docs/decisions/0623-legal-hours-dispatch.md).
 *
 * At create-batch-call each task gets a `legal_group`: a small integer per batch naming what decides its legal
 * hours (its number's candidate zones and the ids of the rules that apply: LegalGroups in the domain); NULL for an
 * unconstrained task (a non-NANP number, and every task created before this migration). The distinct groups of a
 * batch are stored once in `batch_call_legal_groups`, so the dispatcher evaluates a handful of groups per pass
 * instead of checking tasks, and the claim takes tasks only of the groups that are legal now.
 *
 * The index serves the claim group by group: `batch_call_id = $1 AND legal_group = $g AND state = 'pending' ORDER
 * BY task_index LIMIT n` reads only the group's own pending rows, never those of the blocked groups.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // no default, no rewrite: existing rows read NULL (unconstrained)
  yield* sql`ALTER TABLE batch_call_tasks ADD COLUMN legal_group int4`
  yield* sql`
    CREATE TABLE batch_call_legal_groups (
      batch_call_id text NOT NULL,
      legal_group int4 NOT NULL CHECK (legal_group >= 0),
      -- candidate IANA zones of the group's numbers (RecipientZones), sorted
      zones text[] NOT NULL,
      -- jurisdictions of the rules that apply ("US" federal, state postal codes), resolved against the policy at
      -- dispatch (LegalGroups.rulesOfIds)
      rule_ids text[] NOT NULL,
      PRIMARY KEY (batch_call_id, legal_group)
    )`
  yield* sql`
    CREATE INDEX batch_call_tasks_pending_by_group ON batch_call_tasks (batch_call_id, legal_group, task_index)
    WHERE state = 'pending'`
  // a batch's groups go with it (as its tasks do: trigger batch_calls_delete_tasks, decision 0302)
  yield* sql`
    CREATE FUNCTION batch_calls_delete_legal_groups() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM batch_call_legal_groups g WHERE g.batch_call_id = OLD.batch_call_id;
      RETURN OLD;
    END $$`
  yield* sql`
    CREATE TRIGGER batch_calls_delete_legal_groups AFTER DELETE ON batch_calls
    FOR EACH ROW EXECUTE FUNCTION batch_calls_delete_legal_groups()`
})
