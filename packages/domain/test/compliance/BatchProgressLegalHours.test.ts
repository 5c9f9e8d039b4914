import { assert, describe, it } from "@effect/vitest"
import { batchLegalHours, progressOf, type StoredProgress } from "../../src/compliance/BatchProgressLegalHours.ts"
import { legalHoursOf } from "../../src/compliance/LegalHoursReport.ts"
import { BatchCallProgress } from "../../src/models/BatchCallProgress.ts"
import { BatchCallId } from "../../src/models/Ids.ts"

// A batch's progress with its legal hours explained (decisions 0532, 0623, 0628), as get-batch-call answers it.

const at = Date.parse("2026-12-02T01:30:00Z")

const stored: StoredProgress = {
  batch_call_id: BatchCallId.make("batch_call_1"),
  name: "progress",
  from_number: "+14155550100" as StoredProgress["from_number"],
  status: "in_progress",
  total_task_count: 3,
  tasks: { pending: 3, dialling: 0, unknown: 0, completed: 0, failed: 0, skipped: 0, cancelled: 0 },
  calls_placed: 0,
  calls_in_flight: 0,
  max_concurrency: 2,
  scheduled_timestamp: 1,
  window_open_now: true,
  next_window_opening_timestamp: at,
  estimated_completion_timestamp: at + 240_000,
  completed_timestamp: null,
  cancelled_timestamp: null,
  created_timestamp: 1,
  legal_hours_rows: {
    at,
    window: undefined,
    // 20:30 EST: Miami's two tasks held back by FL 08:00-20:00, one unconstrained
    pending: [{ legal_group: 0, n: 2 }, { legal_group: null, n: 1 }],
    waiting: [],
    groups: [{ legal_group: 0, zones: ["America/New_York"], rule_ids: ["US", "FL"] }],
    policy: { override: { rules: [] }, version: 2 }
  }
}

describe("BatchProgressLegalHours", () => {
  it("answers the stored progress with its legal hours explained at the instant its rows were read for", () => {
    const progress = progressOf(stored)
    assert.instanceOf(progress, BatchCallProgress)
    const { legal_hours, ...rest } = progress
    const { legal_hours_rows: _rows, ...expected } = stored
    assert.deepStrictEqual({ ...rest }, expected)
    assert.notProperty(progress, "legal_hours_rows")
    assert.deepStrictEqual(legal_hours, {
      policy_version: 2,
      unconstrained_tasks: 1,
      dialable_now_tasks: 0,
      held_back: [{ rule: "FL 08:00-20:00", tasks: 2 }],
      never_within_horizon_tasks: 0,
      zone_sets: [{
        zones: ["America/New_York"],
        rules: ["US", "FL"],
        pending_tasks: 2,
        blocked_by: "FL 08:00-20:00",
        state_reason: "legal_hours: FL 08:00-20:00 America/New_York until 2026-12-02T13:00:00Z",
        next_opening_timestamp: Date.parse("2026-12-02T13:00:00Z")
      }]
    })
    assert.deepStrictEqual(legal_hours, batchLegalHours(legalHoursOf(stored.legal_hours_rows)))
  })

  it("keeps a progress without a cap of its own without one", () => {
    const { max_concurrency: _cap, ...uncapped } = stored
    assert.notProperty(progressOf(uncapped), "max_concurrency")
  })
})
