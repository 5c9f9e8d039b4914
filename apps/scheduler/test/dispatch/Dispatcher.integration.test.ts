import { assert, describe, it } from "@effect/vitest"
import { type CallEnded, Dialer, DialRejected } from "@svc/domain/ports/Dialer.ts"
import { waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import { CallsRepo } from "@svc/store/calls/CallsRepo.ts"
import { SchedulerSimulatedCarrier } from "@svc/store/carriers/simulated/SchedulerSimulatedCarrier.ts"
import { DispatchRepo, IDLE_RECHECK_MS } from "@svc/store/dispatch/DispatchRepo.ts"
import { Effect, Exit, Fiber, Layer, Logger, Option, References, Scope } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { TestClock } from "effect/testing"
import { spawnSync } from "node:child_process"
import * as os from "node:os"
import * as SimulatedDialer from "../../src/carriers/simulated/SimulatedDialer.ts"
import { Dispatcher } from "../../src/dispatch/Dispatcher.ts"
import * as ContactFeed from "../../src/jobs/ContactFeed.ts"
import * as SchedulerConfig from "../../src/runtime/SchedulerConfig.ts"
import * as WorkerIdentity from "../../src/runtime/WorkerIdentity.ts"
import {
  addContact,
  batchRow,
  createBatch,
  dialerSettings,
  freshNumber,
  inFlightOf,
  isolated,
  seedOrg,
  stateCounts,
  taskStates
} from "../fixtures/Fixtures.ts"

const MINUTE = 60_000
const HOUR = 60 * MINUTE

/** Runs `body` with a fresh dispatcher (and its simulated dialer) on a TestClock. */
const scenario = <A, E, R>(
  body: Effect.Effect<A, E, R>,
  options: {
    readonly dialer?: Partial<SchedulerConfig.SimulatedDialerSettings>
    readonly settings?: Partial<SchedulerConfig.SchedulerSettings>
  } = {}
) =>
  Effect.gen(function*() {
    const dispatcher = yield* Dispatcher.make(SchedulerConfig.defaults(options.settings))
    return yield* body.pipe(Effect.provideService(Dispatcher, dispatcher))
  }).pipe(Effect.provide(SimulatedDialer.layerMemory(dialerSettings(options.dialer))), isolated)

/** The dial requests the simulated carrier received for a batch. */
const dialsOf = (batchCallId: string) =>
  Effect.gen(function*() {
    const carrier = yield* SchedulerSimulatedCarrier
    const attempts = yield* Effect.orDie(carrier.attempts)
    return attempts.filter((a) => a.request.batch_call_id === batchCallId)
  })

const tick = Effect.gen(function*() {
  return yield* (yield* Dispatcher).tick
})
const settle = Effect.gen(function*() {
  yield* (yield* Dispatcher).settle
})

describe("Dispatcher", () => {
  it.live("dials nothing before trigger_timestamp, then every task exactly once", () =>
    scenario(Effect.gen(function*() {
      const t0 = Date.UTC(2026, 4, 4, 15, 0)
      yield* TestClock.setTime(t0)
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, { count: 5, trigger_timestamp: t0 + HOUR })

      const idle = yield* tick
      assert.strictEqual(idle.claimed, 0)
      // the idle worker sleeps until the trigger time, not a poll interval
      assert.strictEqual(idle.nextAt, t0 + HOUR)
      yield* TestClock.setTime(t0 + HOUR - 1)
      assert.strictEqual((yield* tick).claimed, 0)
      assert.strictEqual((yield* batchRow(batch)).status, "scheduled")

      yield* TestClock.setTime(t0 + HOUR)
      assert.strictEqual((yield* tick).claimed, 5)
      assert.strictEqual((yield* batchRow(batch)).status, "in_progress")
      yield* settle
      assert.strictEqual((yield* tick).claimed, 0)

      const dials = yield* dialsOf(batch)
      assert.strictEqual(dials.length, 5)
      assert.strictEqual(new Set(dials.map((d) => d.idempotencyKey)).size, 5)
      assert.isTrue(dials.every((d) => d.attemptedAt === t0 + HOUR))
      const states = yield* taskStates(batch)
      assert.deepStrictEqual(states.map((s) => s.task_id).sort(), dials.map((d) => d.idempotencyKey).sort())
      assert.isTrue(states.every((s) => s.state === "completed" || s.state === "failed"))
      assert.strictEqual((yield* batchRow(batch)).status, "completed")
    })))

  it.live("postpones a batch outside its window to the next opening, so it costs nothing until then", () =>
    scenario(Effect.gen(function*() {
      // Wednesday 2026-05-06 07:00 in New York (EDT, UTC-4) = 11:00Z; the window opens at 09:00 EDT = 13:00Z
      const t0 = Date.UTC(2026, 4, 6, 11, 0)
      yield* TestClock.setTime(t0)
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, {
        count: 2,
        call_time_window: { windows: [{ start: 540, end: 1020 }], timezone: "America/New_York" }
      })
      const first = yield* tick
      assert.strictEqual(first.claimed, 0)
      assert.strictEqual(first.postponed, 1)
      assert.strictEqual((yield* batchRow(batch)).next_dispatch_at, Date.UTC(2026, 4, 6, 13, 0))
      // until the opening the batch is not even read again
      yield* TestClock.setTime(Date.UTC(2026, 4, 6, 12, 59, 59, 999))
      const waiting = yield* tick
      assert.strictEqual(waiting.postponed, 0)
      assert.strictEqual(waiting.claimed, 0)
      yield* TestClock.setTime(Date.UTC(2026, 4, 6, 13, 0))
      assert.strictEqual((yield* tick).claimed, 2)
      yield* settle
      assert.strictEqual((yield* dialsOf(batch)).length, 2)
    })))

  it.live("stops starting calls when the window closes and resumes on the next allowed day", () =>
    scenario(
      Effect.gen(function*() {
        // Friday 2026-05-08 09:00 EDT = 13:00Z; window 09:00-10:00 on weekdays; 2 lines, each call takes 20 minutes
        const opening = Date.UTC(2026, 4, 8, 13, 0)
        yield* TestClock.setTime(opening)
        const orgId = yield* seedOrg(2)
        const batch = yield* createBatch(orgId, {
          count: 10,
          call_time_window: {
            windows: [{ start: 540, end: 600 }],
            timezone: "America/New_York",
            day: ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
          }
        })
        for (let round = 0; round < 3; round++) {
          assert.strictEqual((yield* tick).claimed, 2, `round ${round}`)
          assert.strictEqual(yield* inFlightOf(batch), 2)
          yield* TestClock.adjust(20 * MINUTE)
          yield* settle
        }
        // 10:00 local: closed; six calls were made, four wait for Monday 09:00 EDT
        const closed = yield* tick
        assert.strictEqual(closed.claimed, 0)
        assert.strictEqual(closed.postponed, 1)
        assert.strictEqual((yield* batchRow(batch)).next_dispatch_at, Date.UTC(2026, 4, 11, 13, 0))
        assert.strictEqual((yield* stateCounts(batch))["pending"], 4)
        yield* TestClock.setTime(Date.UTC(2026, 4, 11, 13, 0))
        assert.strictEqual((yield* tick).claimed, 2)
      }),
      { dialer: { latencyMs: 20 * MINUTE } }
    ))

  it.live("dials only on the allowed days of the week, in the window's time zone", () =>
    scenario(Effect.gen(function*() {
      // Tuesday 2026-03-10 11:00 in Los Angeles (PDT since March 8) = 18:00Z; Mondays and Wednesdays only
      yield* TestClock.setTime(Date.UTC(2026, 2, 10, 18, 0))
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, {
        count: 1,
        call_time_window: { windows: [{ start: 540, end: 1020 }], day: ["Monday", "Wednesday"] }
      })
      const closed = yield* tick
      assert.strictEqual(closed.postponed, 1)
      // Wednesday 09:00 PDT = 16:00Z, and the worker's next wake-up is that opening (the pass moved the batch there)
      assert.strictEqual((yield* batchRow(batch)).next_dispatch_at, Date.UTC(2026, 2, 11, 16, 0))
      assert.strictEqual(closed.nextAt, Date.UTC(2026, 2, 11, 16, 0))
      yield* TestClock.setTime(Date.UTC(2026, 2, 11, 16, 0))
      assert.strictEqual((yield* tick).claimed, 1)
    })))

  it.live("America/New_York: opens at 09:00 EDT on the day DST starts and 09:00 EST on the day it ends", () =>
    scenario(Effect.gen(function*() {
      const window = { windows: [{ start: 540, end: 1020 }], timezone: "America/New_York" }
      // Saturday 2026-03-07 17:30 EST = 22:30Z: closed; Sunday's 09:00 is EDT (UTC-4) = 13:00Z, not 14:00Z
      yield* TestClock.setTime(Date.UTC(2026, 2, 7, 22, 30))
      const spring = yield* createBatch(yield* seedOrg(), { count: 1, call_time_window: window })
      yield* tick
      assert.strictEqual((yield* batchRow(spring)).next_dispatch_at, Date.UTC(2026, 2, 8, 13, 0))
      yield* TestClock.setTime(Date.UTC(2026, 2, 8, 12, 59, 59, 999))
      assert.strictEqual((yield* tick).claimed, 0)
      yield* TestClock.setTime(Date.UTC(2026, 2, 8, 13, 0))
      assert.strictEqual((yield* tick).claimed, 1)

      // Saturday 2026-10-31 18:00 EDT = 22:00Z: closed; Sunday's 09:00 is EST (UTC-5) = 14:00Z
      yield* TestClock.setTime(Date.UTC(2026, 9, 31, 22, 0))
      const autumn = yield* createBatch(yield* seedOrg(), { count: 1, call_time_window: window })
      yield* tick
      assert.strictEqual((yield* batchRow(autumn)).next_dispatch_at, Date.UTC(2026, 10, 1, 14, 0))
      // 13:30Z would be 09:30 under summer time, but is 08:30 EST: still closed
      yield* TestClock.setTime(Date.UTC(2026, 10, 1, 13, 30))
      assert.strictEqual((yield* tick).claimed, 0)
      yield* TestClock.setTime(Date.UTC(2026, 10, 1, 14, 0))
      assert.strictEqual((yield* tick).claimed, 1)
      yield* settle
    })))

  it.live("Europe/London: 09:00-17:00 opens at 08:00Z on the day BST starts and at 09:00Z the day before", () =>
    scenario(Effect.gen(function*() {
      const window = { windows: [{ start: 540, end: 1020 }], timezone: "Europe/London" }
      // Saturday 2026-03-28 08:30 GMT: closed, opens 09:00 GMT = 09:00Z
      yield* TestClock.setTime(Date.UTC(2026, 2, 28, 8, 30))
      const saturday = yield* createBatch(yield* seedOrg(), { count: 1, call_time_window: window })
      yield* tick
      assert.strictEqual((yield* batchRow(saturday)).next_dispatch_at, Date.UTC(2026, 2, 28, 9, 0))
      yield* TestClock.setTime(Date.UTC(2026, 2, 28, 9, 0))
      assert.strictEqual((yield* tick).claimed, 1)
      yield* settle
      // Sunday 2026-03-29 06:30Z = 07:30 BST: closed, opens 09:00 BST = 08:00Z
      yield* TestClock.setTime(Date.UTC(2026, 2, 29, 6, 30))
      const sunday = yield* createBatch(yield* seedOrg(), { count: 1, call_time_window: window })
      yield* tick
      assert.strictEqual((yield* batchRow(sunday)).next_dispatch_at, Date.UTC(2026, 2, 29, 8, 0))
      // 08:30Z is 09:30 BST: open
      yield* TestClock.setTime(Date.UTC(2026, 2, 29, 8, 30))
      assert.strictEqual((yield* tick).claimed, 1)
      yield* settle
      assert.strictEqual((yield* dialsOf(sunday))[0]!.attemptedAt, Date.UTC(2026, 2, 29, 8, 30))
    })))

  it.live("leaves reserved_concurrency free and counts the org's calls the batch did not trigger", () =>
    scenario(
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.UTC(2026, 4, 4, 15, 0))
        const orgId = yield* seedOrg(5)
        // another batch of the org has 2 calls in flight
        const other = yield* createBatch(orgId, { count: 2 })
        assert.strictEqual((yield* tick).claimed, 2)
        const batch = yield* createBatch(orgId, { count: 10, reserved_concurrency: 2 })
        // 5 - 2 reserved - 2 in flight elsewhere = 1
        assert.strictEqual((yield* tick).claimed, 1)
        assert.strictEqual(yield* inFlightOf(batch), 1)
        assert.strictEqual((yield* tick).claimed, 0)
        yield* TestClock.adjust(10 * MINUTE)
        yield* settle
        assert.strictEqual((yield* stateCounts(other))["dialling"] ?? 0, 0)
        // the other batch's calls ended: 5 - 2 reserved = 3
        assert.strictEqual((yield* tick).claimed, 3)
        assert.strictEqual(yield* inFlightOf(batch), 3)
        assert.strictEqual((yield* tick).claimed, 0)
      }),
      { dialer: { latencyMs: 10 * MINUTE } }
    ))

  it.live("a batch run dry with calls in flight is left until they end, at most until its recheck", () =>
    scenario(
      Effect.gen(function*() {
        const t0 = Date.UTC(2026, 4, 4, 15, 0)
        yield* TestClock.setTime(t0)
        const orgId = yield* seedOrg(10)
        const batch = yield* createBatch(orgId, { count: 4 })
        // the pass claims all four and finds nothing left: four calls in flight, so the batch is not complete; it
        // rests until its recheck, and the pass's wake time says so
        const all = yield* tick
        assert.strictEqual(all.claimed, 4)
        assert.strictEqual(all.nextAt, t0 + IDLE_RECHECK_MS)
        assert.deepStrictEqual(yield* batchRow(batch), {
          status: "in_progress",
          next_dispatch_at: t0 + IDLE_RECHECK_MS
        })
        // a later pass does not look at it, and wakes for the same recheck (now from the database)
        yield* TestClock.adjust(1_000)
        const resting = yield* tick
        assert.strictEqual(resting.claimed, 0)
        assert.strictEqual(resting.nextAt, t0 + IDLE_RECHECK_MS)
        // the calls end and are recorded: the batch completes without waiting for the recheck
        yield* TestClock.adjust(5 * MINUTE)
        yield* settle
        assert.strictEqual((yield* batchRow(batch)).status, "completed")
      }),
      { dialer: { latencyMs: 5 * MINUTE } }
    ))

  it.live("shares the org's slots fairly between two batches", () =>
    scenario(
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.UTC(2026, 4, 4, 15, 0))
        const orgId = yield* seedOrg(6)
        const first = yield* createBatch(orgId, { count: 9 })
        const second = yield* createBatch(orgId, { count: 30 })
        // round 1: 3 + 3; round 2: 3 + 3; round 3: the first batch has 3 left, 3 + 3; then the second has all 6
        for (const [a, b] of [[3, 3], [3, 3], [3, 3], [0, 6], [0, 6]] as const) {
          assert.strictEqual((yield* tick).claimed, a + b)
          assert.deepStrictEqual([yield* inFlightOf(first), yield* inFlightOf(second)], [a, b])
          yield* TestClock.adjust(5 * MINUTE)
          yield* settle
        }
        assert.strictEqual((yield* batchRow(first)).status, "completed")
      }),
      { dialer: { latencyMs: 5 * MINUTE } }
    ))

  it.live("skips numbers of do_not_call contacts with that reason and never dials them", () =>
    scenario(Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 4, 4, 15, 0))
      const orgId = yield* seedOrg()
      const numbers = [freshNumber(), freshNumber(), freshNumber(), freshNumber(), freshNumber()]
      yield* addContact(orgId, numbers[1]!, { doNotCall: true })
      yield* addContact(orgId, numbers[3]!, { doNotCall: true })
      yield* addContact(orgId, numbers[4]!, { doNotCall: false })
      const batch = yield* createBatch(orgId, { tasks: numbers.map((to_number) => ({ to_number })) })
      const report = yield* tick
      assert.strictEqual(report.claimed, 3)
      assert.strictEqual(report.skipped, 2)
      yield* settle
      const dialled = (yield* dialsOf(batch)).map((d) => d.request.to_number).sort()
      assert.deepStrictEqual(dialled, [numbers[0]!, numbers[2]!, numbers[4]!].sort())
      const states = yield* taskStates(batch)
      assert.deepStrictEqual(
        states.filter((s) => s.state === "skipped").map((s) => [s.to_number, s.state_reason]),
        [[numbers[1]!, "do_not_call"], [numbers[3]!, "do_not_call"]]
      )
      assert.strictEqual((yield* batchRow(batch)).status, "completed")
    })))

  it.live("sends each task's overrides with its dial request", () =>
    scenario(Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 4, 4, 15, 0))
      const orgId = yield* seedOrg()
      const [a, b, c] = [freshNumber(), freshNumber(), freshNumber()]
      const batch = yield* createBatch(orgId, {
        tasks: [
          {
            to_number: a,
            override_agent_id: "agent_a",
            override_agent_version: 2,
            agent_override: { svc_llm: { begin_message: "Hi {{first_name}}", model_temperature: 0.3 } },
            svc_llm_dynamic_variables: { first_name: "Ada" },
            metadata: { crm_id: "c-1", tags: ["vip"] },
            custom_sip_headers: { "X-Campaign": "spring" }
          },
          { to_number: b, override_agent_id: "agent_a", override_agent_version: "latest_published" },
          { to_number: c }
        ]
      })
      yield* tick
      yield* settle
      const requests = new Map((yield* dialsOf(batch)).map((d) => [d.request.to_number, d.request]))
      const first = requests.get(a)!
      assert.strictEqual(first.override_agent_id, "agent_a")
      assert.strictEqual(first.override_agent_version, 2)
      assert.deepStrictEqual(first.agent_override, {
        svc_llm: { begin_message: "Hi {{first_name}}", model_temperature: 0.3 }
      })
      assert.deepStrictEqual(first.dynamic_variables, { first_name: "Ada" })
      assert.deepStrictEqual(first.metadata, { crm_id: "c-1", tags: ["vip"] })
      assert.deepStrictEqual(first.custom_sip_headers, { "X-Campaign": "spring" })
      assert.strictEqual(first.from_number, "+14155550100")
      assert.strictEqual(first.batch_call_id, batch)
      assert.strictEqual(requests.get(b)!.override_agent_version, "latest_published")
      const plain = requests.get(c)!
      // the call id svc gave the call at the claim (migration 0012), the one the calls API shows
      const sql = yield* SqlClient.SqlClient
      const [task] = yield* sql<{ call_id: string }>`
        SELECT svc_call_id(${plain.idempotency_key}::int8) AS call_id`
      assert.strictEqual(plain.call_id, task!.call_id)
      assert.deepStrictEqual(Object.keys(plain).sort(), [
        "batch_call_id",
        "call_id",
        "from_number",
        "idempotency_key",
        "org_id",
        "to_number"
      ])
    })))

  it.live("records each call with its analysis data and feeds the contact, creating unknown E.164 numbers", () =>
    scenario(
      Effect.gen(function*() {
        const t0 = Date.UTC(2026, 4, 4, 15, 0)
        yield* TestClock.setTime(t0)
        const sql = yield* SqlClient.SqlClient
        const orgId = yield* seedOrg()
        const known = freshNumber()
        const unknown = freshNumber()
        const another = freshNumber()
        yield* addContact(orgId, known)
        yield* sql`UPDATE contacts SET conversation_count = 4, last_conversation_timestamp = 1000
                   WHERE org_id = ${orgId} AND phone_number = ${known}`
        const batch = yield* createBatch(orgId, {
          tasks: [
            { to_number: known, override_agent_id: "agent_a", override_agent_version: 1 },
            { to_number: unknown },
            { to_number: another },
            { to_number: "sip:desk-7", ignore_e164_validation: true }
          ]
        })
        yield* tick
        yield* settle
        const calls = yield* sql<{ to_number: string; outcome: string; analysis: Record<string, unknown> }>`
          SELECT to_number, outcome, analysis, agent_id, agent_version::int4 AS agent_version FROM calls
          WHERE batch_call_id = ${batch} ORDER BY to_number`
        assert.strictEqual(calls.length, 4)
        assert.isTrue(calls.every((c) => c.outcome === "answered"))
        assert.isTrue(calls.every((c) => typeof c.analysis["call_successful"] === "boolean"))
        // the three E.164 calls wait in the outbox for the contact feed, the pseudo number does not
        const [queued] = yield* sql<{ n: number }>`SELECT count(*)::int4 AS n FROM contact_feed WHERE org_id = ${orgId}`
        assert.strictEqual(queued!.n, 3)
        assert.strictEqual(yield* ContactFeed.drain(), 3)
        assert.strictEqual(yield* ContactFeed.drain(), 0)
        const contacts = yield* sql<{ phone_number: string; conversation_count: number; last: number }>`
          SELECT phone_number, conversation_count, last_conversation_timestamp::float8 AS last FROM contacts
          WHERE org_id = ${orgId} ORDER BY phone_number`
        assert.deepStrictEqual(
          contacts.map((c) => [c.phone_number, c.conversation_count, c.last]),
          [[known, 5, t0], [unknown, 1, t0], [another, 1, t0]].sort((x, y) => String(x[0]).localeCompare(String(y[0])))
        )
        const [created] = yield* sql<{ contact_id: string; search_text: string; created: number }>`
          SELECT contact_id, search_text, created_timestamp::float8 AS created FROM contacts
          WHERE org_id = ${orgId} AND phone_number = ${unknown}`
        // the id layout of ContactsRepo (UUID version 7, time first) and the search text the trigger would compute
        assert.match(created!.contact_id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
        assert.strictEqual(parseInt(created!.contact_id.replaceAll("-", "").slice(0, 12), 16), t0)
        assert.strictEqual(created!.search_text, unknown.toLowerCase())
        assert.strictEqual(created!.created, t0)
        const [row] = yield* sql<{ agent_id: string; agent_version: number }>`
          SELECT agent_id, agent_version::int4 AS agent_version FROM calls WHERE to_number = ${known}`
        assert.deepStrictEqual([row!.agent_id, row!.agent_version], ["agent_a", 1])
      }),
      { dialer: { outcomes: { answered: 1, busy: 0, no_answer: 0, failed: 0 } } }
    ))

  it.live("reconciles expired leases with the dialer before any redial", () =>
    scenario(
      Effect.gen(function*() {
        const t0 = Date.UTC(2026, 4, 4, 15, 0)
        yield* TestClock.setTime(t0)
        const orgId = yield* seedOrg()
        const batch = yield* createBatch(orgId, { count: 3 })
        const repo = yield* DispatchRepo
        const dialer = yield* Dialer
        // A worker claimed all three (lease until t0 + 30 s) and died: before dialling the first, after placing the
        // second (at t0, its line free at t0 + 20 s) and the third (at t0 + 20 s, free at t0 + 40 s).
        const due = (yield* repo.findDue(t0, 10)).due
        const claim = yield* repo.claim(orgId, due.filter((b) => b.orgId === orgId), {
          owner: "dead-worker",
          now: t0,
          leaseMs: 30_000,
          maxPerBatch: 10
        })
        assert.strictEqual(claim.claimed.length, 3)
        const [neverDialled, ended, ongoing] = claim.claimed
        yield* Effect.forkChild(dialer.dial(ended!.request))
        yield* Effect.yieldNow
        yield* TestClock.adjust(20_000)
        yield* Effect.forkChild(dialer.dial(ongoing!.request))
        yield* Effect.yieldNow
        yield* TestClock.adjust(11_000)

        // t0 + 31 s: every lease has expired
        const report = yield* tick
        assert.strictEqual(report.reclaimed, 3)
        assert.deepStrictEqual(report.reconciled, { ended: 1, ongoing: 1, notPlaced: 1, unanswered: 0 })
        // only the task no call was placed for is dialled again
        assert.strictEqual(report.claimed, 1)
        yield* TestClock.adjust(20_000)
        yield* settle
        const states = new Map((yield* taskStates(batch)).map((s) => [s.task_id, s.state]))
        assert.strictEqual(states.get(neverDialled!.taskId), "completed")
        assert.strictEqual(states.get(ended!.taskId), "completed")
        assert.strictEqual(states.get(ongoing!.taskId), "unknown")
        // t0 + 51 s: the third call has ended; the next look records it
        const later = yield* tick
        assert.strictEqual(later.reconciled.ended, 1)
        assert.strictEqual(later.claimed, 0)
        const perKey = new Map<string, number>()
        for (const d of yield* dialsOf(batch)) perKey.set(d.idempotencyKey, (perKey.get(d.idempotencyKey) ?? 0) + 1)
        // every task dialled exactly once
        assert.deepStrictEqual([...perKey.values()], [1, 1, 1])
        assert.strictEqual((yield* stateCounts(batch))["completed"], 3)
        assert.strictEqual((yield* batchRow(batch)).status, "completed")
      }),
      { dialer: { latencyMs: 20_000, outcomes: { answered: 1, busy: 0, no_answer: 0, failed: 0 } } }
    ))

  it.live("releases at once the calls of a worker on this machine whose process is gone; a live one's wait for its lease", () =>
    scenario(
      Effect.gen(function*() {
        const t0 = Date.UTC(2026, 4, 4, 15, 0)
        yield* TestClock.setTime(t0)
        const repo = yield* DispatchRepo
        const token = WorkerIdentity.namespaceToken()
        // a worker of this machine that has died (its process ran and exited), and one that lives (the test's parent)
        const dead = `${os.hostname()}:${spawnSync(process.execPath, ["-e", ""]).pid}:dead01@${token}`
        const live = `${os.hostname()}:${process.ppid}:live01@${token}`
        const batches: Array<string> = []
        for (const owner of [dead, live]) {
          const orgId = yield* seedOrg()
          const batch = yield* createBatch(orgId, { count: 3 })
          batches.push(batch)
          const due = (yield* repo.findDue(t0, 10)).due.filter((b) => b.orgId === orgId)
          const claim = yield* repo.claim(orgId, due, { owner, now: t0, leaseMs: 30_000, maxPerBatch: 10 })
          assert.strictEqual(claim.claimed.length, 3)
        }
        const [ofDead, ofLive] = batches as [string, string]

        // one second later, 29 s before the leases end: the dead worker's calls are released and reconciled (no
        // call was placed) and dialled once, by this worker, in the same pass
        yield* TestClock.adjust(1_000)
        const first = yield* tick
        assert.strictEqual(first.reclaimed, 3)
        assert.strictEqual(first.reconciled.notPlaced, 3)
        assert.strictEqual(first.claimed, 3)
        yield* settle
        assert.strictEqual((yield* stateCounts(ofDead))["completed"], 3)
        assert.strictEqual((yield* stateCounts(ofLive))["dialling"], 3)

        // the live worker's leases are left alone until they end (it may be dialling them right now)
        yield* TestClock.setTime(t0 + 30_000)
        assert.strictEqual((yield* tick).reclaimed, 0)
        yield* TestClock.setTime(t0 + 30_001 + 1_000)
        const expired = yield* tick
        assert.strictEqual(expired.reclaimed, 3)
        yield* settle
        for (const batch of batches) {
          const perKey = new Map<string, number>()
          for (const d of yield* dialsOf(batch)) perKey.set(d.idempotencyKey, (perKey.get(d.idempotencyKey) ?? 0) + 1)
          assert.deepStrictEqual([...perKey.values()], [1, 1, 1])
          assert.strictEqual((yield* batchRow(batch)).status, "completed")
        }
      }),
      { dialer: { outcomes: { answered: 1, busy: 0, no_answer: 0, failed: 0 } } }
    ))

  it.live("on shutdown releases calls in flight to reconciliation, which records them without redialling", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 4, 4, 15, 0))
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, { count: 4 })
      const scope = yield* Scope.make()
      const settings = SchedulerConfig.defaults({ shutdownGraceMs: 0 })
      const worker = yield* Dispatcher.make(settings).pipe(Scope.provide(scope))
      const running = yield* Effect.forkScoped(worker.run)
      // the loop runs a pass at once and claims all four
      yield* waitUntil("4 tasks in flight", Effect.map(worker.inFlightCount, (n) => n >= 4))
      assert.strictEqual(yield* inFlightOf(batch), 4)
      yield* Fiber.interrupt(running)
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual((yield* stateCounts(batch))["unknown"], 4)

      const successor = yield* Dispatcher.make(SchedulerConfig.defaults())
      const ongoing = yield* successor.tick
      assert.strictEqual(ongoing.reconciled.ongoing, 4)
      assert.strictEqual(ongoing.claimed, 0)
      yield* TestClock.adjust(10 * MINUTE)
      const ended = yield* successor.tick
      assert.strictEqual(ended.reconciled.ended, 4)
      assert.strictEqual((yield* dialsOf(batch)).length, 4)
      assert.strictEqual((yield* batchRow(batch)).status, "completed")
    }).pipe(
      Effect.provide(SimulatedDialer.layerMemory(dialerSettings({ latencyMs: 10 * MINUTE }))),
      isolated
    ))

  it.live("keeps renewing its leases after renewals failed while the database was away", () =>
    Effect.gen(function*() {
      const t0 = Date.UTC(2026, 4, 4, 15, 0)
      yield* TestClock.setTime(t0)
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, { count: 2 })
      const sql = yield* SqlClient.SqlClient
      // the real repository, with its lease renewals failing as they do when the connection is gone
      const real = yield* DispatchRepo
      let down = false
      const lost = new SqlError.SqlError({
        reason: new SqlError.ConnectionError({ cause: new Error("Connection is closed"), message: "connection lost" })
      })
      const repo = DispatchRepo.of({
        ...real,
        extendLeases: (owner, ids, until) => down ? Effect.die(lost) : real.extendLeases(owner, ids, until)
      })
      const scope = yield* Scope.make()
      const worker = yield* Dispatcher.make(SchedulerConfig.defaults({ leaseMs: 30_000, shutdownGraceMs: 0 })).pipe(
        Effect.provideService(DispatchRepo, repo),
        Scope.provide(scope)
      )
      const running = yield* Effect.forkScoped(worker.run)
      yield* waitUntil("2 tasks in flight", Effect.map(worker.inFlightCount, (n) => n >= 2))
      const leases = sql<{ until: number }>`
        SELECT DISTINCT lease_expires_at::float8 AS until FROM batch_call_tasks WHERE batch_call_id = ${batch}`
      /** Waits (real time, at most 5 s: the shared bounded wait) for the leases to end at `until`. */
      const leasesUntil = (until: number, what: string) =>
        waitUntil(what, Effect.map(leases, (rows) => rows.length === 1 && rows[0]!.until === until), {
          timeoutMs: 5_000,
          everyMs: 10
        })
      yield* leasesUntil(t0 + 30_000, "the first leases")
      // two renewals fail (t0 + 10 s, t0 + 20 s)
      down = true
      yield* TestClock.adjust(10_000)
      yield* TestClock.adjust(10_000)
      // the database is back: the next renewal (t0 + 30 s) goes through
      down = false
      yield* TestClock.adjust(10_000)
      yield* leasesUntil(t0 + 60_000, "the heartbeat to renew the leases after its failures")
      yield* Fiber.interrupt(running)
      yield* Scope.close(scope, Exit.void)
    }).pipe(
      Effect.provide(SimulatedDialer.layerMemory(dialerSettings({ latencyMs: 10 * MINUTE }))),
      isolated
    ))

  it.live("stops on shutdown while its finished calls cannot be recorded; the calls are left to reconciliation", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 4, 4, 15, 0))
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, { count: 6 })
      // the real repository, with every record failing as it does when the connection is gone
      const real = yield* CallsRepo
      const lost = new SqlError.SqlError({
        reason: new SqlError.ConnectionError({ cause: new Error("Connection closed"), message: "connection lost" })
      })
      let attempts = 0
      const failing = CallsRepo.of({
        ...real,
        recordFinished: () => Effect.suspend(() => (attempts++, Effect.die(lost)))
      })
      const scope = yield* Scope.make()
      const worker = yield* Dispatcher.make(SchedulerConfig.defaults({ shutdownGraceMs: 0 })).pipe(
        Effect.provideService(CallsRepo, failing),
        Scope.provide(scope)
      )
      const running = yield* Effect.forkScoped(worker.run)
      // the calls end at once; their records fail, go back to memory and are tried again a second later
      yield* waitUntil(
        "two failed record attempts, the Clock moved a second at a time",
        Effect.andThen(TestClock.adjust(1_000), Effect.sync(() => attempts >= 2)),
        { everyMs: 5, state: () => ({ attempts }) }
      )
      // Shut down while the recorders keep failing. Before the fix the recorder took each permit back as soon as a
      // failed record released it, so the final flush (which needs all of them) never ran and the worker did not
      // stop until the database came back (a worker that ignored SIGTERM, seen in CI)
      const stopped = yield* Effect.forkChild(Effect.gen(function*() {
        yield* Fiber.interrupt(running)
        yield* Scope.close(scope, Exit.void)
      }))
      // at most 20 s of the worker's Clock, a second at a time; real time only bounds the wait (it was 20 turns of
      // 5 ms, which a loaded machine's shutdown statements could outlast)
      let moved = 0
      yield* waitUntil(
        "the worker to stop while its records keep failing, within 20 s of its Clock",
        Effect.gen(function*() {
          if (stopped.pollUnsafe() === undefined && moved < 20) {
            moved++
            yield* TestClock.adjust(1_000)
          }
          return stopped.pollUnsafe() !== undefined
        }),
        { everyMs: 5, state: () => ({ clockMovedSeconds: moved, attempts }) }
      )
      assert.isDefined(stopped.pollUnsafe(), "the worker stopped while the database was away")
      // nothing was recorded; the shutdown's own statements (which still work here) hand the calls to reconciliation
      assert.deepStrictEqual(yield* stateCounts(batch), { unknown: 6 })
    }).pipe(
      Effect.provide(
        SimulatedDialer.layerMemory(dialerSettings({ outcomes: { answered: 1, busy: 0, no_answer: 0, failed: 0 } }))
      ),
      isolated
    ))

  it.live("a completion check lost with the database after a record is an outage in the log; a later pass completes", () =>
    Effect.gen(function*() {
      const t0 = Date.UTC(2026, 4, 4, 15, 0)
      yield* TestClock.setTime(t0)
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, { count: 2 })
      // the real repository, with the completion check failing as it does when the connection is gone
      const real = yield* DispatchRepo
      let down = true
      const lost = new SqlError.SqlError({
        reason: new SqlError.ConnectionError({ cause: new Error("Connection closed"), message: "connection lost" })
      })
      const repo = DispatchRepo.of({
        ...real,
        completeIfDone: (ids) => down ? Effect.die(lost) : real.completeIfDone(ids)
      })
      const lines: Array<{ message: string; annotations: Record<string, unknown> }> = []
      const capture = Logger.layer([
        Logger.make(({ fiber, message }) =>
          lines.push({ message: String(message), annotations: { ...fiber.getRef(References.CurrentLogAnnotations) } })
        )
      ])
      yield* Effect.gen(function*() {
        const worker = yield* Dispatcher.make(SchedulerConfig.defaults())
        assert.strictEqual((yield* worker.tick).claimed, 2)
        yield* worker.settle
        // recorded once, not requeued; the batch waits for a pass that finds it done
        assert.strictEqual((yield* stateCounts(batch))["completed"], 2)
        assert.strictEqual((yield* batchRow(batch)).status, "in_progress")
        assert.deepStrictEqual(lines.map((l) => [l.message, l.annotations["during"]]), [
          ["database unavailable", "completing batches"]
        ])
        down = false
        yield* TestClock.adjust(IDLE_RECHECK_MS)
        assert.strictEqual((yield* worker.tick).completed, 1)
        assert.strictEqual((yield* batchRow(batch)).status, "completed")
        assert.strictEqual(lines.length, 1)
        assert.isFalse(JSON.stringify(lines).includes("    at "), "no stack trace")
      }).pipe(Effect.provideService(DispatchRepo, repo), Effect.provide(capture))
    }).pipe(
      Effect.provide(
        SimulatedDialer.layerMemory(dialerSettings({ outcomes: { answered: 1, busy: 0, no_answer: 0, failed: 0 } }))
      ),
      isolated
    ))

  it.live("fails a task the carrier rejects, with the reason and its call not_connected", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 4, 4, 15, 0))
      const orgId = yield* seedOrg()
      const batch = yield* createBatch(orgId, { count: 2 })
      const dispatcher = yield* Dispatcher.make(SchedulerConfig.defaults())
      yield* dispatcher.tick
      yield* dispatcher.settle
      const states = yield* taskStates(batch)
      assert.deepStrictEqual(states.map((s) => [s.state, s.state_reason]), [
        ["failed", "rejected: invalid_destination"],
        ["failed", "rejected: invalid_destination"]
      ])
      const sql = yield* SqlClient.SqlClient
      // the call registered at the claim stays visible, not connected, with the carrier's reason when it is one
      // of the vendor's disconnection reasons
      const calls = yield* sql<{ call_status: string; disconnection_reason: string; start_timestamp: null }>`
        SELECT call_status, disconnection_reason, start_timestamp FROM calls WHERE batch_call_id = ${batch}`
      assert.deepStrictEqual(calls, [
        { call_status: "not_connected", disconnection_reason: "invalid_destination", start_timestamp: null },
        { call_status: "not_connected", disconnection_reason: "invalid_destination", start_timestamp: null }
      ])
      const [feed] = yield* sql<{ n: number }>`SELECT count(*)::int4 AS n FROM contact_feed WHERE org_id = ${orgId}`
      assert.strictEqual(feed!.n, 0)
      assert.strictEqual((yield* batchRow(batch)).status, "completed")
    }).pipe(
      Effect.provide(Layer.succeed(
        Dialer,
        Dialer.of({
          dial: (request) =>
            Effect.fail(
              new DialRejected({
                idempotency_key: request.idempotency_key,
                reason: "invalid_destination",
                message: "unallocated number"
              })
            ) as Effect.Effect<CallEnded, DialRejected>,
          lookup: () => Effect.succeed(Option.none())
        })
      )),
      isolated
    ))
})
