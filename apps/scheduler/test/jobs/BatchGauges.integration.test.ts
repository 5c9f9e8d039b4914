// The batches-by-status gauges (issue 31 item 8, decision 0549): svc_batch_calls{status} counts scheduled, in-progress
// and paused batches of every org, as the API reports them; cancelled and completed ones are not counted. Real
// PostgreSQL; counted as differences from a first sample, since the database is shared with the file's other tests.
import { assert, describe, it } from "@effect/vitest"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import { BatchProgressRepo } from "@svc/store/batches/BatchProgressRepo.ts"
import { Effect, Layer, Metric, Schema } from "effect"
import { SqlClient } from "effect/sql"
import * as BatchGauges from "../../src/jobs/BatchGauges.ts"
import { freshNumber, FROM, isolated, seedOrg } from "../fixtures/Fixtures.ts"

const request = Schema.decodeUnknownSync(CreateBatchCallRequest)

const read = Effect.gen(function*() {
  yield* BatchGauges.sample
  const value = (status: string) =>
    Effect.map(Metric.value(Metric.withAttributes(BatchGauges.batches, { status })), (s) => s.value)
  return {
    scheduled: yield* value("scheduled"),
    in_progress: yield* value("in_progress"),
    paused: yield* value("paused")
  }
})

describe("BatchGauges", () => {
  it.live("counts scheduled, in-progress and paused batches, not finished ones", () =>
    Effect.gen(function*() {
      const orgId = yield* seedOrg()
      const batches = yield* BatchCallsRepo
      const progress = yield* BatchProgressRepo
      const sql = yield* SqlClient.SqlClient
      const create = Effect.map(
        batches.create(orgId, "key", request({ from_number: FROM, tasks: [{ to_number: freshNumber() }] }), {
          maxTasks: 10,
          legalGrouper: () => new LegalGrouper()
        }).pipe(Effect.orDie),
        (b) => b.batch_call_id
      )
      const before = yield* read
      const ids = yield* Effect.all([create, create, create, create, create])
      yield* sql`UPDATE batch_calls SET status = 'in_progress' WHERE batch_call_id = ${ids[1]!}`
      yield* progress.pause(orgId, ids[2]!, 1)
      yield* progress.pause(orgId, ids[3]!, 1)
      yield* progress.cancel(orgId, ids[4]!, 1)
      const after = yield* read
      assert.deepStrictEqual(
        {
          scheduled: after.scheduled - before.scheduled,
          in_progress: after.in_progress - before.in_progress,
          paused: after.paused - before.paused
        },
        { scheduled: 1, in_progress: 1, paused: 2 }
      )
      // resumed: back among the running
      yield* progress.resume(orgId, ids[2]!, 2)
      const resumed = yield* read
      assert.strictEqual(resumed.paused - before.paused, 1)
      assert.strictEqual(resumed.scheduled - before.scheduled, 2)
    }).pipe(Effect.provide(Layer.mergeAll(BatchProgressRepo.layer)), isolated), 60_000)
})
