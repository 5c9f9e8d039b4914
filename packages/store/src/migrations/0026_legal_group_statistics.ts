/**
 * Plans of the legal-group claim that hold whatever ANALYZE sampled (decision 0623, "Plans that do not depend on
 * the sample").
 *
 * A legal group is a small integer numbered per batch, and a night-time batch has one group of most of its tasks
 * beside a few small ones. Measured under a generic plan with 10 legal tasks behind 100,000 blocked ones
 * (DispatchLegalGroups.integration.test.ts), two of the sample's accidents made the claim and the ran-dry probe walk
 * the batch's whole pending index, filtering every blocked task (100,011 to 200,023 index entries read to claim 10):
 *
 * - the sample often sees the big group alone (n_distinct 1, most common value 100 %): `legal_group = $n` then looks
 *   like no filter, and the pending index (smaller) wins over the group index: 44 of 80 samples at statistics
 *   targets 1 to 100. Fixing the column's distinct count makes the group index `nd` times cheaper than the filtered
 *   walk whatever the sample saw; the most common values still come from the sample, so a custom plan for the big
 *   group is costed as before. 50 is about the number of groups of a batch spread over the United States (zones x
 *   state rule sets); any value above a few would do, and a higher one only favours the group index, which is never
 *   worse for a group's own tasks.
 * - the unconstrained tasks (`legal_group IS NULL`: non-NANP numbers) of another batch in the sample make the NULL
 *   part look like a few dozen rows of every batch, and a filtered walk in task order can then look cheaper than
 *   the group index plus a sort (4 of 600 samples). An index of the pending unconstrained tasks alone, in task
 *   order, is never costlier than that walk: it holds the same rows in the same order without the others.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE batch_call_tasks ALTER COLUMN legal_group SET (n_distinct = 50)`
  yield* sql`
    CREATE INDEX batch_call_tasks_pending_unconstrained ON batch_call_tasks (batch_call_id, task_index)
    WHERE state = 'pending' AND legal_group IS NULL`
  // the override counts from the next ANALYZE: now, where there are tasks (an empty table analysed would read as
  // known-empty to the planner, not as never analysed, and change the plans of small test databases)
  yield* sql`DO $$ BEGIN IF EXISTS (SELECT 1 FROM batch_call_tasks) THEN ANALYZE batch_call_tasks; END IF; END $$`
})
