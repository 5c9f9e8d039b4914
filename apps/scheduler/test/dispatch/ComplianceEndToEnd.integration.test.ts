import { assert, describe, it } from "@effect/vitest"
import { numberOf, singleZone, splitAreaExchanges } from "@svc/domain/test-support/compliance/AreaCodeZones.ts"
import { allRows } from "@svc/domain/test-support/compliance/CallingRulesTable.ts"
import * as Oracle from "@svc/domain/test-support/compliance/LegalHoursOracle.ts"
import { SchedulerSimulatedCarrier } from "@svc/store/carriers/simulated/SchedulerSimulatedCarrier.ts"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as SimulatedDialer from "../../src/carriers/simulated/SimulatedDialer.ts"
import { Dispatcher } from "../../src/dispatch/Dispatcher.ts"
import * as SchedulerConfig from "../../src/runtime/SchedulerConfig.ts"
import { createBatch, dialerSettings, isolated, seedOrg } from "../fixtures/Fixtures.ts"

// The end-to-end test of issue 15 ("Correctness"): one batch with numbers in Hawaii, Arizona, Chicago, New York,
// Florida and Saskatchewan, a clock pinned across a day and more (TestClock, the dispatcher with the simulated
// dialer and real PostgreSQL): each number is dialled in its own legal hours only, and the Florida number at most 3
// times in any 24 h across two batches, the attempts made by retries (every call goes unanswered; decisions 0623,
// 0624, 0625). From Tuesday 2026-12-01 12:00Z (07:00 in New York) to Thursday 02:00Z.
//
// Legality is judged from outside (issue 28, item 4): by the oracle built from the hand-written tables of
// calling-rules.md (@svc/domain/test-support/compliance), never by the product's own functions.

const at = (iso: string) => Date.parse(iso)
const DAY = 86_400_000
const HOUR = 3_600_000

const HONOLULU = "+18085550100"
const PHOENIX = "+16025550100"
const CHICAGO = "+13125550100"
const NEW_YORK = "+12125550100"
const MIAMI = "+13055550100"
const REGINA = "+13065550100"
const CAST = [HONOLULU, PHOENIX, CHICAGO, NEW_YORK, MIAMI, REGINA]

const RETRY = { max_retries: 3, retry_on: ["no_answer"], min_spacing_ms: HOUR }

describe("compliance end to end", () => {
  it.live(
    "six zones across a day: each dialled in its own legal hours; Florida at most 3 times in 24 h",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const start = at("2026-12-01T12:00:00Z")
        const end = at("2026-12-03T02:00:00Z")
        yield* TestClock.setTime(start)
        const orgId = yield* seedOrg()
        const first = yield* createBatch(orgId, {
          tasks: CAST.map((to_number) => ({ to_number })),
          retry_policy: RETRY
        })
        const second = yield* createBatch(orgId, { tasks: [{ to_number: MIAMI }], retry_policy: RETRY })
        const dispatcher = yield* Dispatcher.make(SchedulerConfig.defaults())

        // the worker's loop, driven by the clock: a pass, its calls recorded, then on to the next instant a batch of
        // the org is due (a legal opening, a retry, a cap freeing, a recheck)
        let now = start
        let passes = 0
        while (now < end && passes < 1_000) {
          passes++
          yield* TestClock.setTime(now)
          yield* dispatcher.tick
          yield* dispatcher.settle
          const [next] = yield* sql<{ at: number | null }>`
          SELECT min(next_dispatch_at)::float8 AS at FROM batch_calls
          WHERE org_id = ${orgId} AND status IN ('scheduled', 'in_progress')`
          if (next?.at === null || next?.at === undefined) break
          now = Math.max(now + 1_000, next.at)
        }
        assert.isBelow(passes, 1_000)

        const carrier = yield* SchedulerSimulatedCarrier
        const dials = (yield* Effect.orDie(carrier.attempts))
          .filter((a) => a.request.batch_call_id === first || a.request.batch_call_id === second)
          .map((a) => ({ to: a.request.to_number, at: a.attemptedAt, key: a.request.idempotency_key }))

        // every call at an instant legal in every zone of its number under every rule that applies, as the oracle
        // of the hand-written tables judges it
        for (const dial of dials) {
          const { rules, zones } = Oracle.judgeOf(dial.to)
          assert.isTrue(
            Oracle.isLegal(dial.at, zones, rules),
            `${dial.to} at ${new Date(dial.at).toISOString()}: ${Oracle.whyNot(dial.at, zones, rules)}`
          )
        }
        // no key used twice: every attempt is its own call
        assert.strictEqual(new Set(dials.map((d) => d.key)).size, dials.length)
        // the uncapped numbers: the first call and 3 retries each, all within the first day
        for (const number of [HONOLULU, PHOENIX, CHICAGO, NEW_YORK, REGINA]) {
          const times = dials.filter((d) => d.to === number).map((d) => d.at)
          assert.strictEqual(times.length, 4, number)
          assert.isTrue(times.every((t) => t < start + DAY), number)
        }
        // the first Honolulu call waits for 08:00 there (18:00Z), the first Miami ones for 08:00 in Miami (13:00Z)
        assert.strictEqual(
          Math.min(...dials.filter((d) => d.to === HONOLULU).map((d) => d.at)),
          at("2026-12-01T18:00:00Z")
        )
        const miami = dials.filter((d) => d.to === MIAMI).map((d) => d.at).sort((a, b) => a - b)
        assert.strictEqual(miami[0], at("2026-12-01T13:00:00Z"))
        // Florida: 8 calls wanted (two batches, 4 each), never more than 3 in any 24 h; the cap delays, not drops
        for (const t of miami) assert.isAtMost(miami.filter((u) => u >= t && u < t + DAY).length, 3)
        assert.strictEqual(miami.filter((t) => t < miami[0]! + DAY).length, 3)
        assert.isAtLeast(miami.length, 6)
        // the fourth Florida call waits exactly until the first leaves the window
        assert.strictEqual(miami[3], miami[0]! + DAY)
      }).pipe(
        Effect.provide(SimulatedDialer.layerMemory(dialerSettings({
          outcomes: { answered: 0, busy: 0, no_answer: 1, failed: 0 }
        }))),
        isolated
      ),
    120_000
  )

  // Issue 28, "Done when": a batch with one number per row of the calling rules (and the split-area exchanges of the
  // oracle's list), started at a random instant (seeded, printed; SVC_PROPERTY_SEED replays one) on one of several
  // kinds of day, dials each number for the first time exactly at the minute the oracle says its rules open.
  const seed = process.env["SVC_PROPERTY_SEED"] === undefined
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env["SVC_PROPERTY_SEED"])
  const days = ["2026-12-07", "2026-12-13", "2026-11-26", "2026-07-03", "2026-03-08", "2026-11-01", "2027-12-31"]
  const startAt = Date.parse(`${days[seed % days.length]}T00:00:00Z`) + (seed % (34 * 3_600)) * 1_000 + (seed % 997)
  const ROWS = [
    ...allRows.map((row) =>
      numberOf(
        row.jurisdiction === "US" ? "+1212" : singleZone.find((e) => e.states.includes(row.jurisdiction))!.prefix,
        5_550_123
      )
    ),
    ...splitAreaExchanges.map((e) => numberOf(e.prefix, 123))
  ]

  it.live(
    `one number per rule row from ${new Date(startAt).toISOString()} (seed ${seed}): each first dialled at its opening`,
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* TestClock.setTime(startAt)
        const orgId = yield* seedOrg(ROWS.length + 5)
        const batch = yield* createBatch(orgId, { tasks: ROWS.map((to_number) => ({ to_number })) })
        const dispatcher = yield* Dispatcher.make(SchedulerConfig.defaults())
        const end = startAt + 4 * DAY
        let now = startAt
        let passes = 0
        while (now < end && passes < 1_000) {
          passes++
          yield* TestClock.setTime(now)
          yield* dispatcher.tick
          yield* dispatcher.settle
          const [next] = yield* sql<{ at: number | null }>`
          SELECT min(next_dispatch_at)::float8 AS at FROM batch_calls
          WHERE org_id = ${orgId} AND status IN ('scheduled', 'in_progress')`
          if (next?.at === null || next?.at === undefined) break
          now = Math.max(now + 1_000, next.at)
        }
        assert.isBelow(passes, 1_000)
        const carrier = yield* SchedulerSimulatedCarrier
        const dials = (yield* Effect.orDie(carrier.attempts)).filter((a) => a.request.batch_call_id === batch)
        for (const number of ROWS) {
          const { rules, zones } = Oracle.judgeOf(number)
          const expected = Oracle.nextOpening(startAt, zones, rules)
          const first = Math.min(...dials.filter((d) => d.request.to_number === number).map((d) => d.attemptedAt))
          assert.strictEqual(
            new Date(first).toISOString(),
            expected === undefined ? "never" : new Date(expected).toISOString(),
            `${number} in ${zones.join(",")} under ${rules.map((r) => r.name).join(",")}, from ${
              new Date(startAt).toISOString()
            }`
          )
        }
      }).pipe(Effect.provide(SimulatedDialer.layerMemory(dialerSettings())), isolated),
    120_000
  )
})
