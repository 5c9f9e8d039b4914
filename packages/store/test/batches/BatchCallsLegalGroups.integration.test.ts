import { assert, layer } from "@effect/vitest"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import type { ContactLocation } from "@svc/domain/compliance/RecipientZones.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Effect, Layer, Schema, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { BatchCallsRepo } from "../../src/batches/BatchCallsRepo.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

// Legal groups stored at create-batch-call (issue 15 item 3, decision 0623).

const Repo = BatchCallsRepo.layer.pipe(Layer.provideMerge(TestDatabase.layer))

const FROM = "+14155550100"
const NOW = 5_000_000
const decodeRequest = Schema.decodeUnknownSync(CreateBatchCallRequest)

let orgs = 0
const seedOrg = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const orgId = OrgId.make(`org_lg_${process.pid}_${++orgs}`)
  yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, 'Test org', 0)`
  yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, ${FROM}, 0)`
  return orgId
})

const tasksOf = (batchCallId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ task_index: number; to_number: string; legal_group: number | null }>`
      SELECT task_index, to_number, legal_group FROM batch_call_tasks
      WHERE batch_call_id = ${batchCallId} ORDER BY task_index`
  })

const groupsOf = (batchCallId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ legal_group: number; zones: Array<string>; rule_ids: Array<string> }>`
      SELECT legal_group, zones, rule_ids FROM batch_call_legal_groups
      WHERE batch_call_id = ${batchCallId} ORDER BY legal_group`
  })

layer(Repo, { timeout: 120_000 })("BatchCallsRepo legal groups", (it) => {
  it.effect("groups NANP tasks by zones and rules, stores each group once; other numbers stay unconstrained", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const repo = yield* BatchCallsRepo
      const orgId = yield* seedOrg
      const numbers = [
        "+18085550100", // Honolulu
        "+16025550100", // Phoenix
        "+13125550100", // Chicago
        "+12125550100", // New York
        "+13055550100", // Miami: FL rules too
        "+13065550100", // Saskatchewan
        "+442071838750", // London: no legal hours in this phase
        "+12125550101", // New York again: the same group
        "+13055550101" // Miami again
      ]
      const batch = yield* repo.create(
        orgId,
        "key_1",
        decodeRequest({ from_number: FROM, tasks: numbers.map((to_number) => ({ to_number })) }),
        { maxTasks: 100, legalGrouper: () => new LegalGrouper() }
      )
      const tasks = yield* tasksOf(batch.batch_call_id)
      assert.deepStrictEqual(tasks.map((t) => t.legal_group), [0, 1, 2, 3, 4, 5, null, 3, 4])
      const groups = yield* groupsOf(batch.batch_call_id)
      assert.deepStrictEqual(groups.map((g) => [g.legal_group, g.zones, g.rule_ids]), [
        // the candidate jurisdictions, resolved to rules under the org's policy at dispatch (decision 0628)
        [0, ["Pacific/Honolulu"], ["US", "HI"]],
        [1, ["America/Phoenix"], ["US", "AZ"]],
        [2, ["America/Chicago"], ["US", "IL"]],
        [3, ["America/New_York"], ["US", "NY"]],
        [4, ["America/New_York"], ["US", "FL"]],
        [5, ["America/Regina"], ["US", "SK"]]
      ])
    }))

  it.effect("a batch with no NANP number stores no group and all its tasks unconstrained", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const repo = yield* BatchCallsRepo
      const orgId = yield* seedOrg
      const batch = yield* repo.create(
        orgId,
        "key_1",
        decodeRequest({ from_number: FROM, tasks: [{ to_number: "+442071838750" }, { to_number: "+33142685300" }] }),
        { maxTasks: 100, legalGrouper: () => new LegalGrouper() }
      )
      assert.deepStrictEqual((yield* tasksOf(batch.batch_call_id)).map((t) => t.legal_group), [null, null])
      assert.deepStrictEqual(yield* groupsOf(batch.batch_call_id), [])
    }))

  it.effect("groups are numbered across streamed chunks by first use, and go with their batch when deleted", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const repo = yield* BatchCallsRepo
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg
      const numbers = ["+12125550100", "+442071838750", "+13055550100", "+12125550102", "+18085550100"]
      const { tasks, ...head } = decodeRequest({
        from_number: FROM,
        tasks: numbers.map((to_number) => ({ to_number }))
      })
      const batch = yield* repo.createFrom(orgId, "key_1", {
        tasks: Stream.make(tasks.slice(0, 2), tasks.slice(2, 4), tasks.slice(4)),
        head: Effect.succeed(head)
      }, { maxTasks: 100, legalGrouper: () => new LegalGrouper() })
      assert.deepStrictEqual((yield* tasksOf(batch.batch_call_id)).map((t) => t.legal_group), [0, null, 1, 0, 2])
      assert.strictEqual((yield* groupsOf(batch.batch_call_id)).length, 3)
      yield* sql`DELETE FROM batch_calls WHERE batch_call_id = ${batch.batch_call_id}`
      assert.deepStrictEqual(yield* groupsOf(batch.batch_call_id), [])
    }))

  it.effect("a refused create stores no group", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const repo = yield* BatchCallsRepo
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg
      const [before] = yield* sql<{ n: number }>`SELECT count(*)::int4 AS n FROM batch_call_legal_groups`
      // from_number not owned: refused after the tasks went in, in the same transaction
      const exit = yield* Effect.exit(repo.create(
        orgId,
        "key_1",
        decodeRequest({ from_number: "+14155559999", tasks: [{ to_number: "+12125550100" }] }),
        { maxTasks: 100, legalGrouper: () => new LegalGrouper() }
      ))
      assert.isTrue(exit._tag === "Failure")
      const [after] = yield* sql<{ n: number }>`SELECT count(*)::int4 AS n FROM batch_call_legal_groups`
      assert.strictEqual(after!.n, before!.n)
    }))

  it.effect("reads the org's contacts' timezone and state custom fields: a timezone narrows, a state adds its rules", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const repo = yield* BatchCallsRepo
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg
      const contact = (id: string, phone: string, fields: Record<string, unknown>) =>
        sql`INSERT INTO contacts (org_id, contact_id, phone_number, custom_fields, created_timestamp,
              user_modified_timestamp, search_text)
            VALUES (${orgId}, ${id}, ${phone}, ${JSON.stringify(fields)}::jsonb, 0, 0, '')`
      // 624 has no data: every US and Canadian zone, unless the contact says where it is
      yield* contact("c1", "+16245550100", { timezone: "America/Chicago" })
      // a New York number whose contact lives in Florida: FL's rules apply too (both must be satisfied)
      yield* contact("c2", "+12125550100", { state: "FL" })
      // fields that say nothing usable change nothing
      yield* contact("c3", "+12125550101", { timezone: "Mars/Olympus", state: "Florida" })
      yield* contact("c4", "+12125550102", { tier: "gold" })
      // another org's contact for the same number is not read
      yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId + "_x"}, 'x', 0)`
      yield* sql`INSERT INTO contacts (org_id, contact_id, phone_number, custom_fields, created_timestamp,
                   user_modified_timestamp, search_text)
                 VALUES (${orgId + "_x"}, 'c9', '+12125550103', '{"state":"FL"}'::jsonb, 0, 0, '')`
      const numbers = ["+16245550100", "+12125550100", "+12125550101", "+12125550102", "+12125550103", "+16245550199"]
      const batch = yield* repo.create(
        orgId,
        "key_1",
        decodeRequest({ from_number: FROM, tasks: numbers.map((to_number) => ({ to_number })) }),
        { maxTasks: 100, legalGrouper: () => new LegalGrouper() }
      )
      assert.deepStrictEqual((yield* tasksOf(batch.batch_call_id)).map((t) => t.legal_group), [0, 1, 2, 2, 2, 3])
      const groups = yield* groupsOf(batch.batch_call_id)
      assert.deepStrictEqual(groups.slice(0, 3).map((g) => [g.legal_group, g.zones, g.rule_ids]), [
        [0, ["America/Chicago"], ["US"]],
        [1, ["America/New_York"], ["US", "NY", "FL"]],
        [2, ["America/New_York"], ["US", "NY"]]
      ])
      // the 624 number without a contact: every zone of the two countries
      assert.isTrue(groups[3]!.zones.length > 10)
    }))

  it.effect("groups with the caller's grouper, a new one per create, fed each number and its contact's location", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const repo = yield* BatchCallsRepo
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg
      yield* sql`INSERT INTO contacts (org_id, contact_id, phone_number, custom_fields, created_timestamp,
                   user_modified_timestamp, search_text)
                 VALUES (${orgId}, 'c1', '+12125550100', '{"state":"FL","tier":"gold"}'::jsonb, 0, 0, '')`
      // the caller's grouper (dependency rule 3): here the domain's, recording what the create gives it
      const made: Array<Array<readonly [string, ContactLocation | undefined]>> = []
      const legalGrouper = () => {
        const grouper = new LegalGrouper()
        const seen: Array<readonly [string, ContactLocation | undefined]> = []
        made.push(seen)
        return {
          assign: (toNumber: string, contact?: ContactLocation) => {
            seen.push([toNumber, contact])
            return grouper.assign(toNumber, contact)
          },
          get groups() {
            return grouper.groups
          }
        }
      }
      const { tasks, ...head } = decodeRequest({
        from_number: FROM,
        tasks: ["+12125550100", "+442071838750", "+13055550100"].map((to_number) => ({ to_number }))
      })
      const batch = yield* repo.createFrom(orgId, "key_1", {
        tasks: Stream.make(tasks.slice(0, 2), tasks.slice(2)),
        head: Effect.succeed(head)
      }, { maxTasks: 100, legalGrouper })
      assert.deepStrictEqual(made, [[
        ["+12125550100", { state: "FL" }],
        ["+442071838750", undefined],
        ["+13055550100", undefined]
      ]])
      assert.deepStrictEqual((yield* tasksOf(batch.batch_call_id)).map((t) => t.legal_group), [0, null, 1])
      assert.deepStrictEqual((yield* groupsOf(batch.batch_call_id)).map((g) => [g.legal_group, g.zones, g.rule_ids]), [
        [0, ["America/New_York"], ["US", "NY", "FL"]],
        [1, ["America/New_York"], ["US", "FL"]]
      ])
      // another create, another grouper: its groups are numbered from 0 again
      const again = yield* repo.create(
        orgId,
        "key_2",
        decodeRequest({ from_number: FROM, tasks: [{ to_number: "+13055550100" }] }),
        { maxTasks: 100, legalGrouper }
      )
      assert.strictEqual(made.length, 2)
      assert.deepStrictEqual((yield* tasksOf(again.batch_call_id)).map((t) => t.legal_group), [0])
    }))
})
