// update-call's opt_out (decision 0552): the call's field and the suppression of its number (source opt_out) commit in
// one transaction or not at all; opt_out alone is taken while the call is in progress (the vendor's members are not);
// false clears the call's field and never removes a suppression; a number that is not E.164 writes nothing.
import { assert, layer } from "@effect/vitest"
import { CallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Cause, Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { CallsApiRepo } from "../../src/calls/CallsApiRepo.ts"
import { CursorKeys } from "../../src/db/CursorKeys.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const CALL_O1 = CallId.make("call_o1")
const CALL_LIVE = CallId.make("call_live")
const CALL_O3 = CallId.make("call_o3")
const CALL_A = CallId.make("call_a")
const CALL_EXT = CallId.make("call_ext")

const ORG_O1 = OrgId.make("org_o1")
const ORG_O2 = OrgId.make("org_o2")
const ORG_O3 = OrgId.make("org_o3")
const ORG_O4 = OrgId.make("org_o4")
const ORG_O5 = OrgId.make("org_o5")

const Layers = CallsApiRepo.layer.pipe(Layer.provide(CursorKeys.layer), Layer.provideMerge(TestDatabase.layer))

const addOrg = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp) VALUES (${orgId}, ${orgId}, 10, 0)`
  )

const addCall = (orgId: string, callId: string, toNumber: string, status: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO calls (org_id, call_id, from_number, to_number, call_status, metadata, recorded_timestamp)
      VALUES (${orgId}, ${callId}, '+14155550100', ${toNumber}, ${status}, '{"crm":"c1"}'::jsonb, 1)`)

const stored = (orgId: string, callId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    // NULL is "never said" (migration 0032: no stored default), read as false
    sql<{ opt_out: boolean; metadata: unknown }>`
      SELECT opt_out IS TRUE AS opt_out, metadata FROM calls WHERE org_id = ${orgId} AND call_id = ${callId}`.pipe(
      Effect.map((rows) => rows[0]!)
    ))

const suppressions = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ phone_number: string; reason: string | null; source: string; created_timestamp: number }>`
      SELECT phone_number, reason, source, created_timestamp::float8 AS created_timestamp FROM suppressions
      WHERE org_id = ${orgId} ORDER BY phone_number`.pipe(Effect.map((rows) => rows.map((r) => ({ ...r }))))
  )

layer(Layers)("CallsApiRepo.update with opt_out", (it) => {
  it.effect("opt_out true sets the call's field and suppresses its number (source opt_out) with the call", () =>
    Effect.gen(function*() {
      yield* addOrg("org_o1")
      yield* addCall("org_o1", "call_o1", "+14155550101", "ended")
      const repo = yield* CallsApiRepo
      const call = yield* repo.update(ORG_O1, CALL_O1, { opt_out: true }, 5_000)
      assert.strictEqual(call["opt_out"], true)
      // the rest of the call is as it was
      assert.deepStrictEqual(call["metadata"], { crm: "c1" })
      assert.strictEqual((yield* stored("org_o1", "call_o1")).opt_out, true)
      assert.deepStrictEqual(yield* suppressions("org_o1"), [{
        phone_number: "+14155550101",
        reason: "opted out during call call_o1",
        source: "opt_out",
        created_timestamp: 5_000
      }])
      // get-call shows it; a call that never opted out has no opt_out member at all (the vendor's shape)
      assert.strictEqual((yield* repo.get(ORG_O1, CALL_O1))["opt_out"], true)
      yield* addCall("org_o1", "call_o2", "+14155550102", "ended")
      assert.notProperty(yield* repo.get(ORG_O1, CallId.make("call_o2")), "opt_out")
    }))

  it.effect("opt_out alone is taken while the call is in progress; with metadata it is refused and writes nothing", () =>
    Effect.gen(function*() {
      yield* addOrg("org_o2")
      yield* addCall("org_o2", "call_live", "+14155550201", "registered")
      yield* addCall("org_o2", "call_live2", "+14155550202", "ongoing")
      const repo = yield* CallsApiRepo
      const refused = yield* Effect.flip(
        repo.update(ORG_O2, CALL_LIVE, { opt_out: true, metadata: { late: true } }, 1)
      )
      assert.strictEqual(refused._tag, "CallInFlight")
      assert.deepStrictEqual(yield* stored("org_o2", "call_live"), { opt_out: false, metadata: { crm: "c1" } })
      assert.deepStrictEqual(yield* suppressions("org_o2"), [])
      // the opt-out heard during the call, reported before it ended
      for (const id of [CALL_LIVE, CallId.make("call_live2")]) {
        const call = yield* repo.update(ORG_O2, id, { opt_out: true }, 2)
        assert.strictEqual(call["opt_out"], true, id)
      }
      assert.deepStrictEqual((yield* suppressions("org_o2")).map((s) => s.phone_number), [
        "+14155550201",
        "+14155550202"
      ])
      // the ended-calls rule still binds metadata alone (unchanged)
      assert.strictEqual(
        (yield* Effect.flip(repo.update(ORG_O2, CALL_LIVE, { metadata: 1 }, 3)))._tag,
        "CallInFlight"
      )
    }))

  it.effect("with metadata on an ended call, both are written in the one transaction", () =>
    Effect.gen(function*() {
      yield* addOrg("org_o3")
      yield* addCall("org_o3", "call_o3", "+14155550301", "not_connected")
      const repo = yield* CallsApiRepo
      const call = yield* repo.update(ORG_O3, CALL_O3, { opt_out: true, metadata: { crm: "c2" } }, 1)
      assert.deepStrictEqual([call["opt_out"], call["metadata"]], [true, { crm: "c2" }])
      // JSON null as metadata is stored as the vendor's clear (as without opt_out)
      const cleared = yield* repo.update(ORG_O3, CALL_O3, { opt_out: true, metadata: null }, 2)
      assert.notProperty(cleared, "metadata")
      assert.strictEqual((yield* suppressions("org_o3")).length, 1)
    }))

  it.effect("opt_out false clears the call's field and leaves the suppression; a listed number keeps its row", () =>
    Effect.gen(function*() {
      yield* addOrg("org_o4")
      yield* addCall("org_o4", "call_a", "+14155550401", "ended")
      yield* addCall("org_o4", "call_b", "+14155550402", "ended")
      const sql = yield* SqlClient.SqlClient
      // the second number was on the list already (the registry import)
      yield* sql`INSERT INTO suppressions (org_id, phone_number, reason, source, created_timestamp)
                 VALUES ('org_o4', '+14155550402', NULL, 'national_dnc', 7)`
      const repo = yield* CallsApiRepo
      yield* repo.update(ORG_O4, CALL_A, { opt_out: true }, 10)
      const back = yield* repo.update(ORG_O4, CALL_A, { opt_out: false }, 20)
      assert.notProperty(back, "opt_out")
      assert.strictEqual((yield* stored("org_o4", "call_a")).opt_out, false)
      yield* repo.update(ORG_O4, CallId.make("call_b"), { opt_out: true }, 30)
      assert.deepStrictEqual(yield* suppressions("org_o4"), [
        {
          phone_number: "+14155550401",
          reason: "opted out during call call_a",
          source: "opt_out",
          created_timestamp: 10
        },
        { phone_number: "+14155550402", reason: null, source: "national_dnc", created_timestamp: 7 }
      ])
      assert.strictEqual((yield* stored("org_o4", "call_b")).opt_out, true)
    }))

  it.effect("a call placed to a number that is not E.164, another org's call, an unknown call: nothing written", () =>
    Effect.gen(function*() {
      yield* addOrg("org_o5")
      yield* addOrg("org_o6")
      yield* addCall("org_o5", "call_ext", "1234", "ended")
      yield* addCall("org_o5", "call_o5", "+14155550501", "ended")
      const repo = yield* CallsApiRepo
      const ext = yield* Effect.flip(repo.update(ORG_O5, CALL_EXT, { opt_out: true, metadata: { x: 1 } }, 1))
      assert.deepStrictEqual([ext._tag, ext.call_id, "to_number" in ext ? ext.to_number : undefined], [
        "OptOutNotE164",
        "call_ext",
        "1234"
      ])
      assert.deepStrictEqual(yield* stored("org_o5", "call_ext"), { opt_out: false, metadata: { crm: "c1" } })
      // false asks for no suppression, so the number's form does not matter
      assert.notProperty(yield* repo.update(ORG_O5, CALL_EXT, { opt_out: false }, 1), "opt_out")
      assert.strictEqual(
        (yield* Effect.flip(repo.update(OrgId.make("org_o6"), CallId.make("call_o5"), { opt_out: true }, 1)))._tag,
        "CallNotFound"
      )
      assert.strictEqual(
        (yield* Effect.flip(repo.update(ORG_O5, CallId.make("call_none"), { opt_out: true }, 1)))._tag,
        "CallNotFound"
      )
      assert.strictEqual((yield* stored("org_o5", "call_o5")).opt_out, false)
      assert.deepStrictEqual(yield* suppressions("org_o5"), [])
      assert.deepStrictEqual(yield* suppressions("org_o6"), [])
    }))

  it.effect("a suppression that cannot be written rolls the call's field back (one transaction)", () =>
    Effect.gen(function*() {
      yield* addOrg("org_o7")
      yield* addCall("org_o7", "call_o7", "+14155550701", "ended")
      const sql = yield* SqlClient.SqlClient
      // an insert into suppressions that fails, injected for this org only
      yield* sql`
        CREATE FUNCTION test_refuse_suppression() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.org_id = 'org_o7' THEN RAISE EXCEPTION 'suppression refused by the test'; END IF;
          RETURN NEW;
        END $$`
      yield* sql`CREATE TRIGGER test_refuse_suppression BEFORE INSERT ON suppressions
                 FOR EACH ROW EXECUTE FUNCTION test_refuse_suppression()`
      const repo = yield* CallsApiRepo
      const exit = yield* Effect.exit(
        repo.update(OrgId.make("org_o7"), CallId.make("call_o7"), { opt_out: true, metadata: { crm: "c9" } }, 1)
      )
      yield* sql`DROP TRIGGER test_refuse_suppression ON suppressions`
      yield* sql`DROP FUNCTION test_refuse_suppression()`
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause), "the failed insert is a defect")
      assert.deepStrictEqual(yield* stored("org_o7", "call_o7"), { opt_out: false, metadata: { crm: "c1" } })
      assert.deepStrictEqual(yield* suppressions("org_o7"), [])
    }))
})
