import { assert, layer } from "@effect/vitest"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { legalHoursOf } from "@svc/domain/compliance/LegalHoursReport.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { BatchCallsRepo } from "../../src/batches/BatchCallsRepo.ts"
import { DispatchInspect, previewReport, type StoredPreview } from "../../src/dispatch/DispatchInspect.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const ORG_LH = OrgId.make("org_lh")

// batch-preview's legal-hours report (issue 15 item 3: "how many tasks each rule holds back and the next opening
// per zone set"; decision 0623).

const Layers = Layer.mergeAll(BatchCallsRepo.layer, DispatchInspect.layer).pipe(Layer.provideMerge(TestDatabase.layer))

const at = (iso: string) => Date.parse(iso)

/** The preview with its legal hours explained, as its caller (the admin command) does: dependency rule 3. */
const explained = (stored: StoredPreview) => previewReport(stored, legalHoursOf(stored.legal_hours_rows))

layer(Layers, { timeout: 60_000 })("DispatchInspect legal hours", (it) => {
  it.effect("reports per zone set the tasks, the binding rule and the next opening, and per rule the held back", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp) VALUES ('org_lh', 'lh', 4, 0)`
      yield* sql`
        INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES ('org_lh', '+14155550100', 0)`
      const repo = yield* BatchCallsRepo
      const numbers = [
        "+18085550100", // Honolulu
        "+16025550100", // Phoenix
        "+13125550100", // Chicago
        "+12125550100", // New York
        "+12125550101",
        "+13055550100", // Miami
        "+13065550100", // Regina
        "+442071838750" // London: unconstrained
      ]
      const batch = yield* repo.create(
        ORG_LH,
        "key",
        Schema.decodeUnknownSync(CreateBatchCallRequest)({
          from_number: "+14155550100",
          tasks: numbers.map((to_number) => ({ to_number }))
        }),
        { maxTasks: 100, legalGrouper: () => new LegalGrouper() }
      ).pipe(Effect.orDie)
      const inspect = yield* DispatchInspect
      // Tuesday 2026-12-01 13:30Z: 08:30 in New York and Miami, 07:30 in Chicago and Regina, 06:30 in Phoenix,
      // 03:30 in Honolulu
      const preview = explained(
        yield* inspect.preview(ORG_LH, batch.batch_call_id, {
          at: at("2026-12-01T13:30:00Z"),
          callDurationMs: 120_000,
          show: 0
        })
      )
      const report = preview.legal_hours
      assert.strictEqual(report.unconstrained, 1)
      assert.strictEqual(report.dialable_now, 3) // the two New York numbers and Miami
      assert.deepStrictEqual(report.held_back, [{ rule: "US 08:00-21:00", tasks: 4 }])
      assert.strictEqual(report.never_within_horizon, 0)
      const byZone = Object.fromEntries(report.zone_sets.map((z) => [`${z.zones.join("&")} ${z.rules.join(",")}`, z]))
      assert.deepStrictEqual(byZone["Pacific/Honolulu US"], {
        zones: ["Pacific/Honolulu"],
        rules: ["US"],
        tasks: 1,
        blocked_by: "US 08:00-21:00",
        state_reason: "legal_hours: US 08:00-21:00 Pacific/Honolulu until 2026-12-01T18:00:00Z",
        next_opening_iso: "2026-12-01T18:00:00.000Z"
      })
      assert.strictEqual(byZone["America/New_York US"]!.tasks, 2)
      assert.strictEqual(byZone["America/New_York US"]!.blocked_by, null)
      assert.strictEqual(byZone["America/New_York US,FL"]!.next_opening_iso, "2026-12-01T13:30:00.000Z")
      assert.strictEqual(byZone["America/Chicago US"]!.next_opening_iso, "2026-12-01T14:00:00.000Z")
      assert.strictEqual(byZone["America/Regina US"]!.next_opening_iso, "2026-12-01T14:00:00.000Z")
      assert.strictEqual(byZone["America/Phoenix US"]!.next_opening_iso, "2026-12-01T15:00:00.000Z")

      // 20:30 in Miami: FL 08:00-20:00 binds there, federal hours still allow New York
      const evening = explained(
        yield* inspect.preview(ORG_LH, batch.batch_call_id, {
          at: at("2026-12-02T01:30:00Z"),
          callDurationMs: 120_000,
          show: 0
        })
      )
      assert.deepStrictEqual(
        evening.legal_hours.held_back.find((h) => h.rule === "FL 08:00-20:00"),
        { rule: "FL 08:00-20:00", tasks: 1 }
      )
      // a group with no pending task is not listed
      yield* sql`UPDATE batch_call_tasks SET state = 'completed' WHERE to_number = '+18085550100'`
      const later = explained(
        yield* inspect.preview(ORG_LH, batch.batch_call_id, {
          at: at("2026-12-01T13:30:00Z"),
          callDurationMs: 120_000,
          show: 0
        })
      )
      assert.isUndefined(later.legal_hours.zone_sets.find((z) => z.zones.includes("Pacific/Honolulu")))
      assert.deepStrictEqual(later.legal_hours.held_back, [{ rule: "US 08:00-21:00", tasks: 3 }])
    }))
})
