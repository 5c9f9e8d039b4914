import { assert, describe, layer } from "@effect/vitest"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Data, Effect, Exit, Layer, Schema, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { BatchCallsRepo } from "../../src/batches/BatchCallsRepo.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const Repo = BatchCallsRepo.layer.pipe(Layer.provideMerge(TestDatabase.layer))

const FROM = "+14155550100"
// A pinned clock close to the epoch: with a database pool in the test, TestClock.setTime to a present-day instant
// does not return (the test clock runs every timer that falls due on the way), while times near the epoch do.
const NOW = 5_000_000
const decodeRequest = Schema.decodeUnknownSync(CreateBatchCallRequest)

let orgs = 0
/** A fresh org owning FROM, with agent_a versions 1 and 2 and agent_b version 0. */
const seedOrg = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const orgId = OrgId.make(`org_${process.pid}_${++orgs}`)
  yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, 'Test org', 0)`
  yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, ${FROM}, 0)`
  yield* sql`
    INSERT INTO agents (org_id, agent_id, version, created_timestamp)
    VALUES (${orgId}, 'agent_a', 1, 0), (${orgId}, 'agent_a', 2, 0), (${orgId}, 'agent_b', 0, 0)`
  return orgId
})

const request = (body: Record<string, unknown>) =>
  decodeRequest({ from_number: FROM, tasks: [{ to_number: "+14155550101" }], ...body })

const tasksOf = (n: number, make: (i: number) => Record<string, unknown> = (i) => ({ to_number: phone(i) })) =>
  Array.from({ length: n }, (_, i) => make(i))

const phone = (i: number) => `+1212${String(i).padStart(7, "0")}`

const counts = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ batches: number; tasks: number; keys: number; recent: number }>`
    SELECT (SELECT count(*)::int4 FROM batch_calls) AS batches, (SELECT count(*)::int4 FROM batch_call_tasks) AS tasks,
      (SELECT count(*)::int4 FROM batch_call_idempotency_keys) AS keys,
      (SELECT count(*)::int4 FROM batch_call_recent_requests) AS recent`
  return row!
})

layer(Repo, { timeout: 120_000 })("BatchCallsRepo.create", (it) => {
  it.effect("stores the batch and returns the BatchCall response with defaults filled in", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const repo = yield* BatchCallsRepo
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg
      const batch = yield* repo.create(orgId, "key_1", request({}), {
        maxTasks: 100,
        legalGrouper: () => new LegalGrouper()
      })
      assert.match(batch.batch_call_id, /^batch_call_[0-9a-f]{32}$/)
      // design: name "" when not given; scheduled_timestamp = creation time (ms) without trigger_timestamp
      assert.strictEqual(batch.name, "")
      assert.strictEqual(batch.from_number, FROM)
      assert.strictEqual(batch.scheduled_timestamp, NOW)
      assert.strictEqual(batch.total_task_count, 1)
      assert.isUndefined(batch.call_time_window)
      assert.notProperty(batch, "call_time_window")
      const stored = yield* repo.get(orgId, batch.batch_call_id)
      assert.deepStrictEqual(stored.batch, batch)
      assert.strictEqual(stored.status, "scheduled")
      assert.strictEqual(stored.reservedConcurrency, 0)
      assert.isUndefined(stored.triggerTimestamp)
      assert.strictEqual(stored.nextDispatchAt, NOW)
      assert.strictEqual(stored.createdTimestamp, NOW)
      assert.strictEqual(stored.apiKeyId, "key_1")
      const [task] = yield* sql<Record<string, unknown>>`
        SELECT org_id, task_index, to_number, state, attempts, lease_owner, lease_expires_at, override_agent_id,
          agent_override, dynamic_variables, metadata, custom_sip_headers
        FROM batch_call_tasks WHERE batch_call_id = ${batch.batch_call_id}`
      assert.deepStrictEqual(task, {
        org_id: orgId,
        task_index: 0,
        to_number: "+14155550101",
        state: "pending",
        attempts: 0,
        lease_owner: null,
        lease_expires_at: null,
        override_agent_id: null,
        agent_override: null,
        dynamic_variables: null,
        metadata: null,
        custom_sip_headers: null
      })
    }))

  it.effect("keeps name, trigger time, reserved concurrency and the canonical call window", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const repo = yield* BatchCallsRepo
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg
      const trigger = NOW + 3_600_000
      const batch = yield* repo.create(
        orgId,
        "key_1",
        request({
          name: "October campaign",
          trigger_timestamp: trigger,
          reserved_concurrency: 3,
          call_time_window: {
            windows: [{ start: 780, end: 1020 }, { start: 540, end: 600 }, { start: 600, end: 720 }],
            day: ["Friday", "Monday", "Friday"]
          }
        }),
        { maxTasks: 100, legalGrouper: () => new LegalGrouper() }
      )
      assert.strictEqual(batch.name, "October campaign")
      // design: scheduled_timestamp is trigger_timestamp when given
      assert.strictEqual(batch.scheduled_timestamp, trigger)
      // design: canonical = time zone filled in, touching windows merged and sorted, days de-duplicated in order
      assert.deepStrictEqual(batch.call_time_window, {
        windows: [{ start: 540, end: 720 }, { start: 780, end: 1020 }],
        timezone: "America/Los_Angeles",
        day: ["Monday", "Friday"]
      })
      const stored = yield* repo.get(orgId, batch.batch_call_id)
      assert.deepStrictEqual(stored.batch, batch)
      assert.strictEqual(stored.triggerTimestamp, trigger)
      assert.strictEqual(stored.reservedConcurrency, 3)
      assert.strictEqual(stored.nextDispatchAt, trigger)
      const [row] = yield* sql<{ call_time_window: unknown }>`
        SELECT call_time_window FROM batch_calls WHERE batch_call_id = ${batch.batch_call_id}`
      assert.deepStrictEqual(row!.call_time_window, batch.call_time_window)
    }))

  it.effect("stores every task field in its column, in request order", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg
      const batch = yield* repo.create(
        orgId,
        "key_1",
        request({
          tasks: [
            {
              to_number: "+14155550101",
              override_agent_id: "agent_a",
              override_agent_version: 2,
              agent_override: { agent: { voice_speed: 1.2 }, svc_llm: { begin_message: "Hi" } },
              svc_llm_dynamic_variables: { first_name: "Ada", "quote\"key": "a\\b" },
              metadata: { crm: { id: 7, tags: ["vip"] }, "ünï": "cödé" },
              custom_sip_headers: { "X-Campaign": "oct" }
            },
            { to_number: "not-e164", ignore_e164_validation: true, override_agent_id: "agent_b" },
            { to_number: "+14155550103", override_agent_id: "agent_a", override_agent_version: "latest_published" }
          ]
        }),
        { maxTasks: 100, legalGrouper: () => new LegalGrouper() }
      )
      assert.strictEqual(batch.total_task_count, 3)
      const rows = yield* sql<Record<string, unknown>>`
        SELECT task_index, to_number, override_agent_id, override_agent_version, override_agent_version_name,
          agent_override, dynamic_variables, metadata, custom_sip_headers
        FROM batch_call_tasks WHERE org_id = ${orgId} ORDER BY task_index`
      assert.deepStrictEqual(rows, [
        {
          task_index: 0,
          to_number: "+14155550101",
          override_agent_id: "agent_a",
          override_agent_version: 2n,
          override_agent_version_name: null,
          agent_override: { agent: { voice_speed: 1.2 }, svc_llm: { begin_message: "Hi" } },
          dynamic_variables: { first_name: "Ada", "quote\"key": "a\\b" },
          metadata: { crm: { id: 7, tags: ["vip"] }, "ünï": "cödé" },
          custom_sip_headers: { "X-Campaign": "oct" }
        },
        {
          task_index: 1,
          to_number: "not-e164",
          override_agent_id: "agent_b",
          override_agent_version: null,
          override_agent_version_name: null,
          agent_override: null,
          dynamic_variables: null,
          metadata: null,
          custom_sip_headers: null
        },
        {
          task_index: 2,
          to_number: "+14155550103",
          override_agent_id: "agent_a",
          override_agent_version: null,
          override_agent_version_name: "latest_published",
          agent_override: null,
          dynamic_variables: null,
          metadata: null,
          custom_sip_headers: null
        }
      ])
      const ids = yield* sql<{ task_id: bigint }>`SELECT task_id FROM batch_call_tasks WHERE org_id = ${orgId}`
      assert.strictEqual(new Set(ids.map((r) => r.task_id)).size, 3)
    }))

  it.effect("rejects a from_number the org does not own, even when another org owns it", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg
      const other = yield* seedOrg
      yield* sql`INSERT INTO phone_numbers VALUES (${other}, '+14155559999', 0)`
      const before = yield* counts
      for (const from of ["+14155550199", "+14155559999"]) {
        const error = yield* Effect.flip(
          repo.create(orgId, "key_1", request({ from_number: from }), {
            maxTasks: 100,
            legalGrouper: () => new LegalGrouper()
          })
        )
        assert.strictEqual(error._tag, "FromNumberNotOwned")
        assert.include(error.message, from)
      }
      assert.deepStrictEqual(yield* counts, before)
    }))

  it.effect("rejects an override agent (or numeric version) missing from the org, naming the first one", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg
      const other = yield* seedOrg
      yield* sql`INSERT INTO agents VALUES (${other}, 'agent_other', 0, 0)`
      const fail = (tasks: Array<Record<string, unknown>>) =>
        Effect.flip(
          repo.create(orgId, "key_1", request({ tasks }), { maxTasks: 100, legalGrouper: () => new LegalGrouper() })
        )
      const before = yield* counts

      const unknown = yield* fail([
        { to_number: phone(0), override_agent_id: "agent_a" },
        { to_number: phone(1), override_agent_id: "agent_zzz" },
        { to_number: phone(2), override_agent_id: "agent_yyy" }
      ])
      assert.strictEqual(unknown._tag, "AgentNotFound")
      assert.include(unknown, { agentId: "agent_zzz", taskIndex: 1 })
      assert.include(unknown.message, "agent_zzz")

      const version = yield* fail([{ to_number: phone(0), override_agent_id: "agent_a", override_agent_version: 3 }])
      assert.include(version, { _tag: "AgentNotFound", agentId: "agent_a", version: 3, taskIndex: 0 })

      const huge = yield* fail([
        { to_number: phone(0), override_agent_id: "agent_a", override_agent_version: 2 ** 40 }
      ])
      assert.include(huge, { _tag: "AgentNotFound", agentId: "agent_a", version: 2 ** 40 })

      const foreign = yield* fail([{ to_number: phone(0), override_agent_id: "agent_other" }])
      assert.include(foreign, { _tag: "AgentNotFound", agentId: "agent_other" })

      assert.deepStrictEqual(yield* counts, before)

      // a version name resolves when dialled: the agent only has to exist
      const named = yield* repo.create(
        orgId,
        "key_1",
        request({
          tasks: [
            { to_number: phone(0), override_agent_id: "agent_b", override_agent_version: "prod" },
            { to_number: phone(1), override_agent_id: "agent_a", override_agent_version: 1 }
          ]
        }),
        { maxTasks: 100, legalGrouper: () => new LegalGrouper() }
      )
      assert.strictEqual(named.total_task_count, 2)

      // a version without an agent id is the number's own agent's: stored as given, whatever its size
      const bare = yield* repo.create(
        orgId,
        "key_1",
        request({ tasks: [{ to_number: phone(0), override_agent_version: 2 ** 40 }, { to_number: phone(1) }] }),
        { maxTasks: 100, legalGrouper: () => new LegalGrouper() }
      )
      const versions = yield* sql<{ override_agent_version: bigint | null }>`
        SELECT override_agent_version FROM batch_call_tasks WHERE batch_call_id = ${bare.batch_call_id}
        ORDER BY task_index`
      assert.deepStrictEqual(versions.map((r) => r.override_agent_version), [2n ** 40n, null])
    }))

  it.effect("enforces the maximum number of tasks per batch", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const orgId = yield* seedOrg
      const error = yield* Effect.flip(
        repo.create(orgId, "key_1", request({ tasks: tasksOf(3) }), {
          maxTasks: 2,
          legalGrouper: () => new LegalGrouper()
        })
      )
      assert.include(error, { _tag: "TooManyTasks", count: 3, max: 2 })
      const ok = yield* repo.create(orgId, "key_1", request({ tasks: tasksOf(2) }), {
        maxTasks: 2,
        legalGrouper: () => new LegalGrouper()
      })
      assert.strictEqual(ok.total_task_count, 2)
    }))

  it.effect("rejects text PostgreSQL cannot store, naming the field", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const orgId = yield* seedOrg
      const before = yield* counts
      const nul = yield* Effect.flip(repo.create(
        orgId,
        "key_1",
        request({ tasks: [{ to_number: phone(0) }, { to_number: phone(1), metadata: { note: "a\u0000b" } }] }),
        { maxTasks: 100, legalGrouper: () => new LegalGrouper() }
      ))
      assert.include(nul, { _tag: "UnstorableText", field: "tasks[1].metadata" })
      const surrogate = yield* Effect.flip(
        repo.create(orgId, "key_1", request({ name: "x\ud800" }), {
          maxTasks: 100,
          legalGrouper: () => new LegalGrouper()
        })
      )
      assert.include(surrogate, { _tag: "UnstorableText", field: "name" })
      assert.deepStrictEqual(yield* counts, before)
    }))

  it.effect("createFrom: stores chunks as they come, in order, and refuses in the order of the whole request", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg
      const { tasks, ...fields } = request({ tasks: tasksOf(7) })
      const head = Effect.succeed(fields)
      const chunked = yield* repo.createFrom(orgId, "key_1", {
        tasks: Stream.make(tasks.slice(0, 3), tasks.slice(3, 4), tasks.slice(4)),
        head
      }, { maxTasks: 100, legalGrouper: () => new LegalGrouper() })
      const rows = yield* sql<{ task_index: number; to_number: string }>`
        SELECT task_index, to_number FROM batch_call_tasks WHERE batch_call_id = ${chunked.batch_call_id}
        ORDER BY task_index`
      assert.deepStrictEqual(rows, tasks.map((t, i) => ({ task_index: i, to_number: t.to_number })))
      // the same body in other chunks is the same request (its hash): a retry of it returns the batch
      const retry = yield* repo.createFrom(orgId, "key_1", {
        tasks: Stream.make(tasks.slice(0, 6), tasks.slice(6)),
        head
      }, { maxTasks: 100, legalGrouper: () => new LegalGrouper(), retryCount: 1 })
      assert.strictEqual(retry.batch_call_id, chunked.batch_call_id)

      const before = yield* counts
      const nul = [{ to_number: phone(0), metadata: { note: "a\u0000b" } }, { to_number: phone(1) }, {
        to_number: phone(2)
      }]
      // too many tasks is decided before text that cannot be stored, though the text came first, a chunk earlier
      const tooMany = yield* Effect.flip(repo.createFrom(orgId, "key_1", {
        tasks: Stream.make(request({ tasks: nul }).tasks.slice(0, 1), request({ tasks: nul }).tasks.slice(1)),
        head
      }, { maxTasks: 2, legalGrouper: () => new LegalGrouper() }))
      assert.include(tooMany, { _tag: "TooManyTasks", count: 3, max: 2 })
      // the request's own fields are checked before its tasks, though the tasks came first
      const name = yield* Effect.flip(repo.create(orgId, "key_1", request({ name: "x\ud800", tasks: nul }), {
        maxTasks: 100,
        legalGrouper: () => new LegalGrouper()
      }))
      assert.include(name, { _tag: "UnstorableText", field: "name" })
      // a source that fails at its end takes back the chunks already inserted, and its error is the answer
      class Broken extends Data.TaggedError("Broken") {}
      const broken = yield* Effect.flip(repo.createFrom(orgId, "key_1", {
        tasks: Stream.concat(Stream.make(tasks.slice(0, 4)), Stream.fail(new Broken())),
        head
      }, { maxTasks: 100, legalGrouper: () => new LegalGrouper() }))
      assert.strictEqual(broken._tag, "Broken")
      assert.deepStrictEqual(yield* counts, before)
    }))

  it.effect("stores nothing when the insert fails half way through the tasks", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg
      // a failure inside the bulk insert, after the batch row and 5,000 task rows were written
      yield* sql`
        CREATE FUNCTION fail_task() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'injected failure'; END $$`
      yield* sql`
        CREATE TRIGGER fail_task BEFORE INSERT ON batch_call_tasks
        FOR EACH ROW WHEN (NEW.task_index = 5000) EXECUTE FUNCTION fail_task()`
      const before = yield* counts
      const exit = yield* Effect.exit(
        repo.create(orgId, "key_1", request({ tasks: tasksOf(10_000) }), {
          maxTasks: 100_000,
          legalGrouper: () => new LegalGrouper(),
          idempotencyKey: "k"
        })
      )
      yield* sql`DROP TRIGGER fail_task ON batch_call_tasks`
      assert.isTrue(Exit.isFailure(exit))
      assert.isTrue(Exit.hasDies(exit))
      assert.deepStrictEqual(yield* counts, before)
      // the key was not consumed by the failed attempt
      const retried = yield* repo.create(
        orgId,
        "key_1",
        request({ tasks: tasksOf(10_000) }),
        { maxTasks: 100_000, legalGrouper: () => new LegalGrouper(), idempotencyKey: "k" }
      )
      assert.strictEqual(retried.total_task_count, 10_000)
    }))

  it.effect("org isolation: another org sees no batch, no task counts, no validation assets", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const a = yield* seedOrg
      const b = yield* seedOrg
      const batch = yield* repo.create(a, "key_a", request({}), {
        maxTasks: 100,
        legalGrouper: () => new LegalGrouper()
      })
      const notFound = yield* Effect.flip(repo.get(b, batch.batch_call_id))
      assert.strictEqual(notFound._tag, "BatchCallNotFound")
      const noCounts = yield* Effect.flip(repo.taskCounts(b, batch.batch_call_id))
      assert.strictEqual(noCounts._tag, "BatchCallNotFound")
      assert.strictEqual((yield* repo.taskCounts(a, batch.batch_call_id)).pending, 1)
      // the same key and body in another org is another org's request
      const same = request({ name: "same" })
      const inA = yield* repo.create(a, "key_a", same, {
        maxTasks: 100,
        legalGrouper: () => new LegalGrouper(),
        idempotencyKey: "shared"
      })
      const inB = yield* repo.create(b, "key_b", same, {
        maxTasks: 100,
        legalGrouper: () => new LegalGrouper(),
        idempotencyKey: "shared"
      })
      assert.notStrictEqual(inA.batch_call_id, inB.batch_call_id)
      assert.strictEqual((yield* repo.get(b, inB.batch_call_id)).orgId, b)
    }))

  it.effect("deleting a batch deletes its tasks and idempotency records", () =>
    Effect.gen(function*() {
      const repo = yield* BatchCallsRepo
      const sql = yield* SqlClient.SqlClient
      const orgId = yield* seedOrg
      const batch = yield* repo.create(orgId, "key_1", request({ tasks: tasksOf(5) }), {
        maxTasks: 100,
        legalGrouper: () => new LegalGrouper(),
        idempotencyKey: "delete-me"
      })
      yield* sql`DELETE FROM batch_calls WHERE batch_call_id = ${batch.batch_call_id}`
      const [left] = yield* sql<{ tasks: number; keys: number }>`
        SELECT (SELECT count(*)::int4 FROM batch_call_tasks WHERE batch_call_id = ${batch.batch_call_id}) AS tasks,
          (SELECT count(*)::int4 FROM batch_call_idempotency_keys WHERE batch_call_id = ${batch.batch_call_id}) AS keys`
      assert.deepStrictEqual(left, { tasks: 0, keys: 0 })
    }))
})

describe("BatchCallsRepo at scale", () => {
  layer(Repo, { timeout: 300_000 })("100,000 tasks", (it) => {
    it.effect("stores 100,000 tasks in one call, each once, in order, claimable through the pending index", () =>
      Effect.gen(function*() {
        const repo = yield* BatchCallsRepo
        const sql = yield* SqlClient.SqlClient
        const orgId = yield* seedOrg
        const body = request({
          tasks: tasksOf(100_000, (i) => ({
            to_number: phone(i),
            svc_llm_dynamic_variables: { first_name: `Name ${i}` },
            metadata: { row: i },
            ...(i % 1000 === 0 ? { override_agent_id: "agent_a", override_agent_version: 1 } : {})
          }))
        })
        const batch = yield* repo.create(orgId, "key_1", body, {
          maxTasks: 100_000,
          legalGrouper: () => new LegalGrouper()
        })
        assert.strictEqual(batch.total_task_count, 100_000)
        const [summary] = yield* sql<Record<string, number>>`
          SELECT count(*)::int4 AS n, count(DISTINCT task_id)::int4 AS ids, min(task_index) AS lo, max(task_index) AS hi,
            count(*) FILTER (WHERE to_number = '+1212' || lpad(task_index::text, 7, '0'))::int4 AS numbers_match,
            count(*) FILTER (WHERE (metadata->>'row')::int4 = task_index)::int4 AS metadata_match,
            count(*) FILTER (WHERE dynamic_variables->>'first_name' = 'Name ' || task_index)::int4 AS variables_match,
            count(override_agent_id)::int4 AS overrides,
            count(*) FILTER (WHERE state = 'pending' AND attempts = 0)::int4 AS pending
          FROM batch_call_tasks WHERE batch_call_id = ${batch.batch_call_id} AND org_id = ${orgId}`
        assert.deepStrictEqual(summary, {
          n: 100_000,
          ids: 100_000,
          lo: 0,
          hi: 99_999,
          numbers_match: 100_000,
          metadata_match: 100_000,
          variables_match: 100_000,
          overrides: 100,
          pending: 100_000
        })
        assert.strictEqual((yield* repo.taskCounts(orgId, batch.batch_call_id)).pending, 100_000)

        // the scheduler's claim (issue 5) reads the partial index of pending tasks
        yield* sql`ANALYZE batch_call_tasks`
        const plan = yield* sql<{ "QUERY PLAN": string }>`
          EXPLAIN SELECT task_id FROM batch_call_tasks
          WHERE batch_call_id = ${batch.batch_call_id} AND state = 'pending'
          ORDER BY task_index LIMIT 50 FOR UPDATE SKIP LOCKED`
        assert.include(plan.map((r) => r["QUERY PLAN"]).join("\n"), "batch_call_tasks_pending")
      }))
  })
})
