// The idempotency sweep (apps/scheduler/src/jobs/IdempotencySweep.ts): under a steady stream of create-batch-call
// requests over three days of TestClock time, the idempotency tables stop growing once their records' lifetimes
// have passed (24 h for an Idempotency-Key, 10 minutes for a keyless request: docs/api.md), instead of one row per
// request forever. Real PostgreSQL; the sweep is the worker's own loop, woken by the clock.
import { assert, describe, it } from "@effect/vitest"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { makeSleepWatch, waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import { BatchCallsRepo, IDEMPOTENCY_KEY_TTL_MS, RETRY_WINDOW_MS } from "@svc/store/batches/BatchCallsRepo.ts"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as IdempotencySweep from "../../src/jobs/IdempotencySweep.ts"
import { DatabaseHealth } from "../../src/runtime/DatabaseHealth.ts"
import { freshNumber, FROM, isolated, seedOrg } from "../fixtures/Fixtures.ts"

const T0 = Date.parse("2026-12-01T00:00:00Z")
const STEP = 30 * 60_000 // a request with a key and one without every 30 minutes
const DAYS = 3

const request = Schema.decodeUnknownSync(CreateBatchCallRequest)

describe("IdempotencySweep", () => {
  it.live(
    "keeps the idempotency tables at their records' lifetime under a steady stream of requests",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const repo = yield* BatchCallsRepo
        yield* TestClock.setTime(T0)
        const orgId = yield* seedOrg()
        const counts = sql<{ keys: number; recent: number }>`
        SELECT (SELECT count(*)::int4 FROM batch_call_idempotency_keys) AS keys,
          (SELECT count(*)::int4 FROM batch_call_recent_requests) AS recent`.pipe(Effect.map((rows) => rows[0]!))
        // the sweep's period is the stream's step here, so each step of the clock wakes it exactly once, at the step's
        // end (the worker's period is SWEEP_EVERY_MS, 10 minutes)
        // the clock moves only once the loop sleeps after its latest sweep: moved while a sweep still runs, the loop
        // would sleep from the later time and miss its wake-up (CI's loaded run met exactly that)
        const sleeps = makeSleepWatch()
        const asleepAfter = (sweeps: number) =>
          waitUntil(
            `the sweep loop asleep after sweep ${sweeps}`,
            Effect.sync(() => sleeps.begun(STEP) === sweeps && sleeps.sleeping(STEP) === 1),
            { state: () => ({ begun: sleeps.begun(STEP), sleeping: sleeps.snapshot() }) }
          )
        yield* Effect.forkScoped(
          IdempotencySweep.loop(STEP).pipe(sleeps.watch, Effect.provide(DatabaseHealth.layer))
        )

        const seen: Array<{ day: number; keys: number; recent: number }> = []
        for (let step = 1; step <= (DAYS * 86_400_000) / STEP; step++) {
          const body = () => request({ from_number: FROM, tasks: [{ to_number: freshNumber() }] })
          yield* repo.create(orgId, "key_test", body(), {
            maxTasks: 10,
            legalGrouper: () => new LegalGrouper(),
            idempotencyKey: `idem-${step}`
          })
          yield* repo.create(orgId, "key_test", body(), { maxTasks: 10, legalGrouper: () => new LegalGrouper() })
          yield* asleepAfter(step)
          yield* TestClock.adjust(STEP)
          const now = T0 + step * STEP
          // the sweep the clock just woke has run once the loop sleeps again; then no record past its lifetime is left
          yield* asleepAfter(step + 1)
          yield* waitUntil(
            `the sweep at ${new Date(now).toISOString()}`,
            sql<{ n: number }>`
            SELECT (SELECT count(*)::int4 FROM batch_call_idempotency_keys
                    WHERE created_timestamp <= ${now - IDEMPOTENCY_KEY_TTL_MS})
                 + (SELECT count(*)::int4 FROM batch_call_recent_requests
                    WHERE seen_timestamp <= ${now - RETRY_WINDOW_MS}) AS n`.pipe(
              Effect.map((rows) => rows[0]!.n === 0)
            )
          )
          if (step % 48 === 0) {
            const c = yield* counts
            seen.push({ day: step / 48, keys: c.keys, recent: c.recent })
          }
        }
        // a key lives 24 h (a record made exactly 24 h ago is expired): of the 48 keys a day, made every 30 minutes
        // from the day's first instant, 47 are alive at the end of each day, on day 3 as on day 1 (without the sweep:
        // 48, 96, 144); a keyless request lives 10 minutes: none of the 30-minute-old ones is left
        assert.deepStrictEqual(seen, [
          { day: 1, keys: 47, recent: 0 },
          { day: 2, keys: 47, recent: 0 },
          { day: 3, keys: 47, recent: 0 }
        ])
        // the batches themselves are kept: only the idempotency records go
        const [batches] = yield* sql<{ n: number }>`SELECT count(*)::int4 AS n FROM batch_calls WHERE org_id = ${orgId}`
        assert.strictEqual(batches!.n, 2 * DAYS * 48)
      }).pipe(isolated),
    120_000
  )
})
