import { assert, layer } from "@effect/vitest"
import { defaultPolicy, type JurisdictionRule, type PolicyOverride } from "@svc/domain/compliance/CallingPolicy.ts"
import { decideOverride, effectiveOfStored, looseningsOf } from "@svc/domain/compliance/EffectivePolicy.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Effect, Exit, Layer, Result } from "effect"
import { SqlClient } from "effect/sql"
import { CallingPolicyRepo } from "../../src/policies/CallingPolicyRepo.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const ORG_NOPE = OrgId.make("org_nope")

// Organisations' calling policies (issue 15, "Legal hours": per-org override, stricter always allowed, looser only
// with an explicit, audited admin flag; decision 0628). The repository stores what the domain decided
// (EffectivePolicy.decideOverride, run by the admin command) and returns it as stored; these tests read it back
// through the domain's effectiveOf, as its callers do. Whether a looser row may be set at all is
// packages/domain/test/compliance/EffectivePolicy.test.ts's (and the admin command's test).

const Repo = CallingPolicyRepo.layer.pipe(Layer.provideMerge(TestDatabase.layer))

/** The override as the admin command stores it (accepted by decideOverride, or the test is wrong). */
const decided = (override: PolicyOverride) => Result.getOrThrow(decideOverride(override))
/** The org's effective policy as its readers compute it from the stored row. */
const effectiveNow = (orgId: OrgId) =>
  Effect.gen(function*() {
    const repo = yield* CallingPolicyRepo
    return effectiveOfStored(yield* repo.stored(orgId))
  })

let orgs = 0
const seedOrg = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const orgId = OrgId.make(`org_cp_${process.pid}_${++orgs}`)
  yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, 'Test org', 0)`
  return orgId
})

const fl = defaultPolicy.states.find((r) => r.jurisdiction === "FL")!
/** FL 09:00-19:00, 2 attempts: stricter than the default FL row. */
const flStricter: JurisdictionRule = { ...fl, hours: [{ ...fl.hours[0]!, start: 540, end: 1140 }], attemptsPer24h: 2 }
/** FL 08:00-21:00: looser than the default FL row (20:00). */
const flLooser: JurisdictionRule = { ...fl, hours: [{ ...fl.hours[0]!, end: 1260 }] }
/** A row for NY, which the default policy has none for: compared with the federal row. */
const nyRow: JurisdictionRule = {
  ...defaultPolicy.federal,
  jurisdiction: "NY",
  hours: [{ ...fl.hours[0]!, end: 1200 }]
}

layer(Repo, { timeout: 120_000 })("CallingPolicyRepo", (it) => {
  it.effect("an org without an override dials under the default policy, version 0", () =>
    Effect.gen(function*() {
      const repo = yield* CallingPolicyRepo
      const orgId = yield* seedOrg
      assert.strictEqual(yield* repo.stored(orgId), undefined)
      const effective = yield* effectiveNow(orgId)
      assert.strictEqual(effective.version, 0)
      assert.strictEqual(effective.policy, defaultPolicy)
      assert.strictEqual(effective.override, undefined)
    }))

  it.effect("a stricter override and a row for a new state are accepted, versioned and audited", () =>
    Effect.gen(function*() {
      const repo = yield* CallingPolicyRepo
      const orgId = yield* seedOrg
      const set = yield* repo.set(orgId, decided({ rules: [flStricter, nyRow] }), 1_000)
      assert.strictEqual(set.version, 1)
      const effective = yield* effectiveNow(orgId)
      assert.strictEqual(effective.version, 1)
      assert.deepStrictEqual(effective.policy.states.find((r) => r.jurisdiction === "FL"), flStricter)
      assert.deepStrictEqual(effective.policy.states.find((r) => r.jurisdiction === "NY"), nyRow)
      assert.deepStrictEqual(effective.policy.federal, defaultPolicy.federal)
      // replacing it whole: FL back to the default, the NY row stays only if listed again
      yield* repo.set(orgId, decided({ rules: [nyRow] }), 2_000)
      const again = yield* effectiveNow(orgId)
      assert.strictEqual(again.version, 2)
      assert.deepStrictEqual(again.policy.states.find((r) => r.jurisdiction === "FL"), fl)
      const audit = yield* repo.audit(orgId, 10)
      assert.deepStrictEqual(audit.map((a) => [a.version, a.at, a.action, a.loosenings, a.approved_by]), [
        [2, 2_000, "set", [], null],
        [1, 1_000, "set", [], null]
      ])
    }))

  it.effect("a looser row without approval is refused naming it, before anything is stored", () =>
    Effect.gen(function*() {
      const repo = yield* CallingPolicyRepo
      const orgId = yield* seedOrg
      yield* repo.set(orgId, decided({ rules: [flStricter] }), 1_000)
      const refused = decideOverride({ rules: [flLooser] })
      assert.isTrue(Result.isFailure(refused))
      const error = Result.isFailure(refused) ? refused.failure : undefined
      assert.strictEqual(error?._tag, "LooserThanPolicy")
      assert.match(error?.message ?? "", /override FL/)
      // nothing was written: the stored override, its version and the audit log are the first set's
      const effective = yield* effectiveNow(orgId)
      assert.strictEqual(effective.version, 1)
      assert.deepStrictEqual(effective.policy.states.find((r) => r.jurisdiction === "FL"), flStricter)
      assert.strictEqual((yield* repo.audit(orgId, 10)).length, 1)
    }))

  it.effect("a looser row with the admin's approval is applied, and the audit names who approved it and why", () =>
    Effect.gen(function*() {
      const repo = yield* CallingPolicyRepo
      const orgId = yield* seedOrg
      const override: PolicyOverride = {
        rules: [flLooser],
        allowLooser: { approvedBy: "counsel@example.com", reason: "FL statute amended, ticket 42" }
      }
      yield* repo.set(orgId, decided(override), 3_000)
      const effective = yield* effectiveNow(orgId)
      assert.deepStrictEqual(effective.policy.states.find((r) => r.jurisdiction === "FL"), flLooser)
      const [entry] = yield* repo.audit(orgId, 10)
      assert.strictEqual(entry!.approved_by, "counsel@example.com")
      assert.strictEqual(entry!.reason, "FL statute amended, ticket 42")
      assert.deepStrictEqual(entry!.loosenings, looseningsOf(override))
      assert.isTrue(entry!.loosenings.length > 0)
      assert.isTrue(entry!.loosenings.every((line) => line.startsWith("override FL ")))
    }))

  it.effect("clearing returns the org to the default policy with a higher version; unknown orgs are refused", () =>
    Effect.gen(function*() {
      const repo = yield* CallingPolicyRepo
      const orgId = yield* seedOrg
      yield* repo.set(orgId, decided({ rules: [flStricter] }), 1_000)
      const cleared = yield* repo.clear(orgId, 2_000)
      assert.strictEqual(cleared.version, 2)
      const effective = yield* effectiveNow(orgId)
      assert.strictEqual(effective.version, 2)
      assert.deepStrictEqual(effective.policy, defaultPolicy)
      assert.deepStrictEqual((yield* repo.audit(orgId, 10)).map((a) => a.action), ["clear", "set"])
      const missing = yield* Effect.exit(repo.set(ORG_NOPE, decided({ rules: [flStricter] }), 1))
      assert.isTrue(Exit.isFailure(missing) && JSON.stringify(missing.cause).includes("OrgNotFound"))
      const missingClear = yield* Effect.exit(repo.clear(ORG_NOPE, 1))
      assert.isTrue(Exit.isFailure(missingClear))
    }))

  it.effect("a policy change wakes the org's open batches whose trigger time has passed, and only those", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* CallingPolicyRepo
      const orgId = yield* seedOrg
      const other = yield* seedOrg
      yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, '+14155550100', 0)`
      yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${other}, '+14155550100', 0)`
      const insert = (id: string, org: string, status: string, next: number, trigger: number | null) =>
        sql`INSERT INTO batch_calls (batch_call_id, org_id, api_key_id, name, from_number, status, total_task_count,
              scheduled_timestamp, created_timestamp, next_dispatch_at, trigger_timestamp)
            VALUES (${id}, ${org}, 'key', 'b', '+14155550100', ${status}, 1, 0, 0, ${next}, ${trigger})`
      const tag = `${process.pid}_${orgs}`
      yield* insert(`batch_call_sleeping_${tag}`, orgId, "in_progress", 90_000, null)
      yield* insert(`batch_call_future_${tag}`, orgId, "scheduled", 90_000, 80_000)
      yield* insert(`batch_call_done_${tag}`, orgId, "completed", 90_000, null)
      yield* insert(`batch_call_other_${tag}`, other, "in_progress", 90_000, null)
      yield* repo.set(orgId, decided({ rules: [flStricter] }), 10_000)
      const rows = yield* sql<{ batch_call_id: string; next: number }>`
        SELECT batch_call_id, next_dispatch_at::float8 AS next FROM batch_calls
        WHERE batch_call_id LIKE ${`%_${tag}`} ORDER BY batch_call_id`
      assert.deepStrictEqual(rows.map((r) => [r.batch_call_id.split("_")[2], r.next]), [
        ["done", 90_000],
        ["future", 90_000],
        ["other", 90_000],
        ["sleeping", 10_000]
      ])
    }))
})
