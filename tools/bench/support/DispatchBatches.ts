// Batches for benchmarks of svc-scheduler processes: a fresh org per batch with distinct numbers, the batch's status,
// the contact feed's queue, a checkpoint. Copied from tools/bench/scheduler.bench.ts (its `seedBatch` without the
// window and legal-hours variants, `batchStatus`, `feedQueue`, `checkpoint`), which keeps its own copy unchanged.
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import * as Database from "@svc/store/db/Database.ts"
import { Effect, Layer, ManagedRuntime, type Redacted, References, Schema, type Scope } from "effect"
import { SqlClient } from "effect/sql"

const FROM = "+14155550100"
/** A batch whose unfinished tasks have not changed for this long is stuck. */
const STALL_MS = 120_000

export interface DispatchBatches {
  /**
   * A fresh org (concurrency limit `concurrency`) and one batch of `count` tasks to distinct new numbers, due now:
   * every running worker starts on it at once.
   */
  readonly seedBatch: (count: number) => Promise<{ readonly orgId: string; readonly batchCallId: string }>
  readonly batchStatus: (batchCallId: string) => Promise<string>
  /** Calls not yet applied to their contacts (the workers' contact feed runs beside dispatch). */
  readonly feedQueue: () => Promise<number>
  /**
   * Polls every 20 ms until the batch is completed; fails when its tasks stop moving for `STALL_MS` (a worker that
   * no longer records its calls would otherwise hold the bench forever).
   */
  readonly untilCompleted: (batchCallId: string) => Promise<void>
  /** Polls every 20 ms until every call is applied to its contact. */
  readonly untilFed: () => Promise<void>
  /** A checkpoint, so that one due to earlier batches' WAL does not land in a measured one. */
  readonly checkpoint: () => Promise<void>
  /** Deletes every org (with its batches, tasks, calls and contacts) this made, and closes the pool. */
  readonly close: () => Promise<void>
}

/** The batches' pool on `url` (8 connections) and the orgs it made; `concurrency` is each org's limit. */
export const makeDispatchBatches = (
  url: Redacted.Redacted<string>,
  options: { readonly concurrency: number; readonly name: string }
): DispatchBatches => {
  const runtime = ManagedRuntime.make(
    BatchCallsRepo.layer.pipe(
      Layer.provideMerge(Database.layerFromUrl(url, { maxConnections: 8 })),
      Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "Warn"))
    )
  )
  const run = <A, E>(effect: Effect.Effect<A, E, BatchCallsRepo | SqlClient.SqlClient | Scope.Scope>) =>
    runtime.runPromise(Effect.scoped(effect))
  const orgs: Array<string> = []
  let serial = 0

  const seedBatch = (count: number) =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const orgId = OrgId.make(`org_bench_${options.name}_${process.pid}_${++serial}`)
      orgs.push(orgId)
      yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
                 VALUES (${orgId}, 'scaling benchmark', ${options.concurrency}, 0)`
      yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, ${FROM}, 0)`
      const repo = yield* BatchCallsRepo
      const request = Schema.decodeUnknownSync(CreateBatchCallRequest)({
        from_number: FROM,
        tasks: Array.from({ length: count }, (_, i) => ({
          // not NANP: NANP numbers wait for their legal hours (decision 0623), which would make the figures depend
          // on the time of day the bench runs at
          to_number: `+44${String(100 + serial % 900)}${String(i).padStart(7, "0")}`,
          svc_llm_dynamic_variables: { first_name: `Customer ${i}` }
        }))
      })
      const batch = yield* repo.create(orgId, "bench_key", request, {
        maxTasks: count,
        legalGrouper: () => new LegalGrouper()
      }).pipe(Effect.orDie)
      return { orgId, batchCallId: batch.batch_call_id }
    }))

  const batchStatus = (batchCallId: string) =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ status: string }>`SELECT status FROM batch_calls WHERE batch_call_id = ${batchCallId}`
      return row!.status
    }))

  const feedQueue = () =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ n: number }>`SELECT count(*)::int4 AS n FROM contact_feed`
      return row!.n
    }))

  const pause = () => new Promise((resolve) => setTimeout(resolve, 20))

  /** The batch's tasks by state, e.g. "pending 2000, dialling 1000". */
  const taskStates = (batchCallId: string) =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ state: string; n: number }>`
        SELECT state, count(*)::int4 AS n FROM batch_call_tasks WHERE batch_call_id = ${batchCallId} GROUP BY state
        ORDER BY state`
      return rows.map((r) => `${r.state} ${r.n}`).join(", ")
    }))

  return {
    seedBatch,
    batchStatus,
    feedQueue,
    untilCompleted: async (batchCallId) => {
      let seen = ""
      let since = performance.now()
      for (let polls = 1; await batchStatus(batchCallId) !== "completed"; polls++) {
        await pause()
        // every ~5 s: have the tasks moved?
        if (polls % 250 !== 0) continue
        const states = await taskStates(batchCallId)
        if (states !== seen) {
          seen = states
          since = performance.now()
        } else if (performance.now() - since > STALL_MS) {
          throw new Error(`batch ${batchCallId} stuck for ${STALL_MS / 1000} s: ${states}`)
        }
      }
    },
    untilFed: async () => {
      while (await feedQueue() > 0) await pause()
    },
    checkpoint: () =>
      run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CHECKPOINT`
      })),
    close: async () => {
      // deleting an org deletes its batches' tasks (trigger), contacts and calls
      await run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        for (const orgId of orgs) {
          yield* sql`DELETE FROM batch_calls WHERE org_id = ${orgId}`
          yield* sql`DELETE FROM orgs WHERE org_id = ${orgId}`
        }
      }))
      await runtime.dispose()
    }
  }
}
