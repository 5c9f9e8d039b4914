// `admin import --kind calls` in process against a real PostgreSQL (issue 13, part 5): finished calls in the
// get-call shape read back unchanged through call_json, the contacts they belong to are updated as the contact feed
// does, and everything svc cannot keep is refused with its line, all or nothing.
import { assert, layer } from "@effect/vitest"
import { OrgId } from "@svc/domain/models/Ids.ts"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Importer } from "../../src/admin/Import.ts"

const TestLayer = Importer.layer.pipe(Layer.provideMerge(TestDatabase.layer))

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-call-import-"))
let files = 0
const fileOf = (lines: ReadonlyArray<unknown>) => {
  const file = path.join(dir, `calls-${++files}.jsonl`)
  fs.writeFileSync(file, lines.map((l) => typeof l === "string" ? l : JSON.stringify(l)).join("\n"))
  return file
}

const addOrg = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, ${orgId}, 0)`
  )

const importCalls = (orgId: string, lines: ReadonlyArray<unknown>, chunkSize?: number) =>
  Effect.flatMap(
    Importer,
    (importer) =>
      importer.importFile(
        OrgId.make(orgId),
        "calls",
        fileOf(lines),
        chunkSize === undefined ? undefined : { chunkSize }
      )
  )

const callJson = (orgId: string, callId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ call: unknown }>`SELECT call_json(c) AS call FROM calls c WHERE org_id = ${orgId} AND call_id = ${callId}`
        .pipe(Effect.map((rows) => rows[0]?.call))
  )

const contacts = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ phone_number: string; conversation_count: number; last: string | null }>`
      SELECT phone_number, conversation_count, last_conversation_timestamp::text AS last FROM contacts
      WHERE org_id = ${orgId} ORDER BY phone_number`.pipe(
        Effect.map((rows) =>
          rows.map((r) => [r.phone_number, r.conversation_count, r.last === null ? null : Number(r.last)])
        )
      )
  )

const ended = {
  call_id: "call_vendor_1",
  call_type: "phone_call",
  direction: "outbound",
  call_status: "ended",
  agent_id: "agent_1",
  agent_version: 3,
  batch_call_id: "batch_old",
  from_number: "+14155550100",
  to_number: "+14155550111",
  metadata: { crm: { id: 7 }, note: null },
  svc_llm_dynamic_variables: { name: "Ann" },
  custom_sip_headers: { "X-Tenant": "a" },
  start_timestamp: 1_700_000_000_000,
  end_timestamp: 1_700_000_060_000,
  duration_ms: 60_000,
  disconnection_reason: "user_hangup",
  call_analysis: {
    call_summary: "booked",
    in_voicemail: false,
    user_sentiment: "Positive",
    call_successful: true,
    custom_analysis_data: { slot: "tue 10:00", score: 4 }
  }
}

layer(TestLayer, { timeout: 60_000 })("admin import --kind calls", (it) => {
  it.effect("keeps each call as given (get-call reads it back) and updates the contacts they belong to", () =>
    Effect.gen(function*() {
      yield* addOrg("org_calls")
      yield* TestClock.setTime(9_000_000)
      const sql = yield* SqlClient.SqlClient
      yield* sql`
        INSERT INTO contacts (org_id, contact_id, phone_number, conversation_count, last_conversation_timestamp,
          created_timestamp, user_modified_timestamp)
        VALUES ('org_calls', 'c1', '+14155550111', 2, 1_800_000_000_000, 0, 0)`
      const imported = yield* importCalls("org_calls", [
        ended,
        // a second call to the same contact, minimal: no agent, analysis, metadata
        {
          call_id: "call_vendor_2",
          call_status: "error",
          from_number: "+14155550100",
          to_number: "+14155550111",
          start_timestamp: 1_900_000_000_000
        },
        // busy counts (a placed call, as in the feed); a new number gets a contact
        {
          call_id: "call_vendor_3",
          call_status: "not_connected",
          disconnection_reason: "dial_busy",
          from_number: "+14155550100",
          to_number: "+14155550122",
          start_timestamp: 1_600_000_000_000
        },
        // a dial the carrier refused is no conversation: recorded, counted on no contact
        {
          call_id: "call_vendor_4",
          call_status: "not_connected",
          disconnection_reason: "invalid_destination",
          from_number: "+14155550100",
          to_number: "+14155550133"
        }
      ], 2)
      assert.strictEqual(imported, 4)
      assert.deepStrictEqual(yield* callJson("org_calls", "call_vendor_1"), ended)
      assert.deepStrictEqual(yield* callJson("org_calls", "call_vendor_2"), {
        call_id: "call_vendor_2",
        call_type: "phone_call",
        direction: "outbound",
        call_status: "error",
        from_number: "+14155550100",
        to_number: "+14155550111",
        start_timestamp: 1_900_000_000_000,
        call_analysis: { custom_analysis_data: {} }
      })
      assert.deepStrictEqual(yield* contacts("org_calls"), [
        ["+14155550111", 4, 1_900_000_000_000],
        ["+14155550122", 1, 1_600_000_000_000]
      ])
      const recorded = yield* sql<{ recorded: string }>`
        SELECT min(recorded_timestamp)::text AS recorded FROM calls WHERE org_id = 'org_calls'`
      assert.strictEqual(Number(recorded[0]?.recorded), 9_000_000)
    }))

  it.effect("refuses what svc cannot keep, each with its line, and imports nothing", () =>
    Effect.gen(function*() {
      yield* addOrg("org_bad_calls")
      const base = { call_status: "ended", from_number: "+14155550100", to_number: "+14155550111" }
      const message = yield* Effect.flip(importCalls("org_bad_calls", [
        { ...base, call_id: "a", transcript: "hello" },
        { ...base, call_id: "b", direction: "inbound" },
        { ...base, call_id: "c", call_status: "registered" },
        { ...base, call_id: "d", call_type: "web_call" },
        { ...base, call_id: "e", call_analysis: { custom_analysis_data: { call_summary: "x" } } },
        { ...base, call_id: "f", disconnection_reason: "hung_up" },
        { ...base, call_id: "g", metadata: { big: "x".repeat(50_001) } },
        { ...base, call_id: "h", metadata: { nul: "a\u0000" } },
        { ...base, call_id: "k" },
        { ...base, call_id: "i", call_analysis: { sentiment: "Positive" } },
        { ...base, call_id: "j", to_number: "555" },
        { ...base, call_id: "k" }
      ])).pipe(Effect.map((error) => error.message))
      assert.include(message, "line 1: transcript is not a known field")
      assert.include(message, "line 2: direction must be \"outbound\"")
      assert.include(message, "line 3: call_status must be a finished call's status")
      assert.include(message, "line 4: call_type must be \"phone_call\"")
      assert.include(message, "line 5: call_analysis.custom_analysis_data.call_summary is a member of call_analysis")
      assert.include(message, "line 6: disconnection_reason must be one of")
      assert.include(message, "line 7: metadata must be at most 50000 bytes")
      assert.include(message, "line 8: metadata must not contain U+0000")
      assert.include(message, "line 12: call_id k is also on line 9")
      assert.include(message, "line 10: call_analysis.sentiment is not a known field")
      assert.include(message, "line 11: to_number must be an E.164 number")
      const sql = yield* SqlClient.SqlClient
      const count = yield* sql<{ n: number }>`SELECT count(*)::int4 AS n FROM calls WHERE org_id = 'org_bad_calls'`
      assert.strictEqual(count[0]?.n, 0)
    }))

  it.effect("refuses a call id the org already has, naming its line, and leaves calls and contacts as they were", () =>
    Effect.gen(function*() {
      yield* addOrg("org_again")
      const lines = Array.from({ length: 7 }, (_, i) => ({
        ...ended,
        call_id: `call_${i}`,
        to_number: "+14155550177"
      }))
      assert.strictEqual(yield* importCalls("org_again", lines.slice(0, 5)), 5)
      assert.deepStrictEqual(yield* contacts("org_again"), [["+14155550177", 5, 1_700_000_000_000]])
      const again = yield* Effect.flip(importCalls("org_again", lines, 3))
      // the first chunk (lines 1-3) collides: its lines are named
      assert.include(again.message, "nothing imported: line 1: call_id call_0 already exists in the org")
      assert.include(again.message, "line 3: call_id call_2 already exists in the org")
      const sql = yield* SqlClient.SqlClient
      const count = yield* sql<{ n: number }>`SELECT count(*)::int4 AS n FROM calls WHERE org_id = 'org_again'`
      assert.strictEqual(count[0]?.n, 5)
      assert.deepStrictEqual(yield* contacts("org_again"), [["+14155550177", 5, 1_700_000_000_000]])
      // the lines not yet imported go in
      assert.strictEqual(yield* importCalls("org_again", lines.slice(5)), 2)
      assert.deepStrictEqual(yield* contacts("org_again"), [["+14155550177", 7, 1_700_000_000_000]])
    }))
})
