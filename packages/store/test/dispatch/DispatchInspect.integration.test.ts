import { assert, describe, it, layer } from "@effect/vitest"
import { canonicalize } from "@svc/domain/CallWindow.ts"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Effect, Exit, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { BatchCallsRepo } from "../../src/batches/BatchCallsRepo.ts"
import { dialTimes, DispatchInspect } from "../../src/dispatch/DispatchInspect.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const ORG_I = OrgId.make("org_i")
const ORG_J = OrgId.make("org_j")

const MINUTE = 60_000

describe("DispatchInspect.dialTimes", () => {
  it("dials in waves of free slots, one call length apart", () => {
    assert.deepStrictEqual(
      dialTimes({ window: undefined, start: 0, slots: 2, busy: 0, durationMs: 10, count: 5 }),
      [0, 0, 10, 10, 20]
    )
  })

  it("waits for slots held by calls already in flight", () => {
    assert.deepStrictEqual(
      dialTimes({ window: undefined, start: 0, slots: 2, busy: 1, durationMs: 10, count: 3 }),
      [0, 10, 10]
    )
  })

  it("starts no call while the window is closed and resumes at its next opening", () => {
    // 09:00-10:00 UTC every day, calls of 25 minutes, one line: 09:00, 09:25, 09:50, then the next day
    const window = canonicalize({ windows: [{ start: 540, end: 600 }], timezone: "UTC" })
    const day = Date.UTC(2026, 4, 4)
    assert.deepStrictEqual(
      dialTimes({ window, start: day, slots: 1, busy: 0, durationMs: 25 * MINUTE, count: 4 }),
      [day + 540 * MINUTE, day + 565 * MINUTE, day + 590 * MINUTE, day + 86_400_000 + 540 * MINUTE]
    )
  })

  it("dials nothing without a free slot", () => {
    assert.deepStrictEqual(dialTimes({ window: undefined, start: 0, slots: 0, busy: 0, durationMs: 10, count: 5 }), [])
  })
})

const Layers = Layer.mergeAll(BatchCallsRepo.layer, DispatchInspect.layer).pipe(Layer.provideMerge(TestDatabase.layer))

layer(Layers, { timeout: 60_000 })("DispatchInspect", (it) => {
  it.effect("reports task counts, calls in flight, and the window's next opening and closing", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp) VALUES ('org_i', 'i', 4, 0)`
      yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES ('org_i', '+14155550100', 0)`
      yield* sql`
        INSERT INTO contacts (org_id, contact_id, phone_number, do_not_call, created_timestamp, user_modified_timestamp)
        VALUES ('org_i', 'c1', '+12125550002', true, 0, 0)`
      const repo = yield* BatchCallsRepo
      const batch = yield* repo.create(
        ORG_I,
        "key",
        Schema.decodeUnknownSync(CreateBatchCallRequest)({
          from_number: "+14155550100",
          reserved_concurrency: 1,
          call_time_window: { windows: [{ start: 540, end: 1020 }], timezone: "Europe/London", day: ["Monday"] },
          tasks: Array.from({ length: 8 }, (_, i) => ({ to_number: `+1212555000${i}` }))
        }),
        { maxTasks: 100, legalGrouper: () => new LegalGrouper() }
      ).pipe(Effect.orDie)
      yield* sql`
        UPDATE batch_call_tasks SET state = 'dialling', lease_owner = 'w', lease_expires_at = 1
        WHERE batch_call_id = ${batch.batch_call_id} AND task_index = 0`
      yield* sql`
        UPDATE batch_call_tasks SET state = 'completed' WHERE batch_call_id = ${batch.batch_call_id} AND task_index = 1`
      const inspect = yield* DispatchInspect
      // Sunday 2026-05-03 12:00Z: closed (Mondays only); opens Monday 09:00 BST = 08:00Z, closes 17:00 BST = 16:00Z
      const now = Date.UTC(2026, 4, 3, 12, 0)
      const status = yield* inspect.status(ORG_I, batch.batch_call_id, now)
      assert.deepStrictEqual(status.tasks, {
        pending: 6,
        dialling: 1,
        unknown: 0,
        completed: 1,
        failed: 0,
        skipped: 0,
        cancelled: 0
      })
      assert.deepStrictEqual(status.in_flight, {
        batch: 1,
        org: 1,
        concurrency_limit: 4,
        reserved_concurrency: 1,
        max_concurrency: null,
        free_slots: 2
      })
      assert.isFalse(status.paused)
      assert.deepStrictEqual(status.skipped_by_reason, { do_not_call: 0, suppressed: 0 })
      assert.isFalse(status.window_open_now)
      assert.strictEqual(status.next_opening_iso, "2026-05-04T08:00:00.000Z")
      assert.strictEqual(status.next_closing_iso, "2026-05-04T16:00:00.000Z")

      // preview: 3 slots (4 - 1 reserved, no other batch), one held by the call in flight; 2-hour calls
      const preview = yield* inspect.preview(ORG_I, batch.batch_call_id, {
        at: now,
        callDurationMs: 120 * MINUTE,
        show: 4
      })
      assert.strictEqual(preview.pending, 6)
      assert.strictEqual(preview.skipped_do_not_call, 1)
      assert.strictEqual(preview.to_dial, 5)
      assert.strictEqual(preview.first_dial_at_iso, "2026-05-04T08:00:00.000Z")
      assert.deepStrictEqual(preview.tasks.map((t) => [t.task_index, t.dial_at_iso, t.skip]), [
        [2, null, "do_not_call"],
        [3, "2026-05-04T08:00:00.000Z", null],
        [4, "2026-05-04T08:00:00.000Z", null],
        [5, "2026-05-04T08:00:00.000Z", null]
      ])
      assert.strictEqual(preview.last_dial_at_iso, "2026-05-04T10:00:00.000Z")
      assert.deepStrictEqual(preview.periods.map((p) => p.dials), [5])

      const missing = yield* Effect.exit(inspect.status(ORG_I, BatchCallId.make("batch_call_nope"), now))
      assert.isTrue(Exit.isFailure(missing))
    }))

  // issue 31 item 8: batch-status shows a paused batch, its max_concurrency and its suppressed tasks
  it.effect("shows paused, max_concurrency within the free slots, and skipped tasks by reason", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp) VALUES ('org_j', 'j', 10, 0)`
      yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES ('org_j', '+14155550100', 0)`
      const batch = yield* (yield* BatchCallsRepo).create(
        ORG_J,
        "key",
        Schema.decodeUnknownSync(CreateBatchCallRequest)({
          from_number: "+14155550100",
          max_concurrency: 3,
          tasks: Array.from({ length: 6 }, (_, i) => ({ to_number: `+1212555000${i}` }))
        }),
        { maxTasks: 100, legalGrouper: () => new LegalGrouper() }
      ).pipe(Effect.orDie)
      const id = batch.batch_call_id
      yield* sql`
        UPDATE batch_call_tasks SET state = 'dialling', lease_owner = 'w', lease_expires_at = 1
        WHERE batch_call_id = ${id} AND task_index = 0`
      yield* sql`
        UPDATE batch_call_tasks SET state = 'skipped', state_reason = CASE task_index
          WHEN 1 THEN 'suppressed (national_dnc)' WHEN 2 THEN 'suppressed (opt_out)' ELSE 'do_not_call' END
        WHERE batch_call_id = ${id} AND task_index IN (1, 2, 3)`
      const inspect = yield* DispatchInspect
      const running = yield* inspect.status(ORG_J, id, 0)
      assert.isFalse(running.paused)
      assert.deepStrictEqual(running.skipped_by_reason, { do_not_call: 1, suppressed: 2 })
      // the org has 9 free lines, the batch's cap leaves it 3 - 1
      assert.strictEqual(running.in_flight.max_concurrency, 3)
      assert.strictEqual(running.in_flight.free_slots, 2)
      yield* sql`UPDATE batch_calls SET status = 'paused', paused_from = 'in_progress' WHERE batch_call_id = ${id}`
      const paused = yield* inspect.status(ORG_J, id, 0)
      assert.strictEqual(paused.status, "paused")
      assert.isTrue(paused.paused)
      assert.strictEqual(paused.in_flight.free_slots, 0)
    }))
})
