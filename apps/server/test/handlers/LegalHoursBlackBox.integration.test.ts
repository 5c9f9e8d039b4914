// Issue 28, "Done when": a batch with one number per row of the calling rules, created and read over HTTP at a
// random instant of the day, reports for each of its zone sets exactly the minute its rules open
// (`legal_hours.zone_sets[].next_opening_timestamp` of GET /get-batch-call). The expected minute comes from the
// oracle built from the hand-written tables of calling-rules.md (@svc/domain/test-support/compliance), not from the
// product. The instants are drawn from a printed seed (SVC_PROPERTY_SEED replays one) over plain days, Sundays,
// holidays (AL, LA and PA close) and the DST changes; the server runs on a TestClock pinned to each instant.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { numberOf, singleZone, splitAreaExchanges } from "@svc/domain/test-support/compliance/AreaCodeZones.ts"
import { allRows } from "@svc/domain/test-support/compliance/CallingRulesTable.ts"
import * as Oracle from "@svc/domain/test-support/compliance/LegalHoursOracle.ts"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as TestServer from "../support/TestServer.ts"

type Json = Record<string, unknown>

const FROM = "+14155550100"
const minuteMs = 60_000
const iso = (t: unknown) => typeof t === "number" ? new Date(t).toISOString() : String(t)

// one number per row (New York for the federal row alone), and the split-area exchanges of the oracle's list
const numbers = [
  ...allRows.map((row) =>
    numberOf(
      row.jurisdiction === "US"
        ? "+1212"
        : singleZone.find((e) => e.states.includes(row.jurisdiction))!.prefix,
      5_550_123
    )
  ),
  ...splitAreaExchanges.map((e) => numberOf(e.prefix, 123))
]

// the days the instants fall on: a plain Monday, a Sunday (TX noon, no AL/LA/MS/PA/RI), Thanksgiving, the Friday
// Independence Day 2026 is observed on, the Sundays DST starts and ends, New Year's Eve 2027 (New Year 2028 observed)
const days = ["2026-12-07", "2026-12-13", "2026-11-26", "2026-07-03", "2026-03-08", "2026-11-01", "2027-12-31"]

const seed = process.env["SVC_PROPERTY_SEED"] === undefined
  ? Math.floor(Math.random() * 2 ** 31)
  : Number(process.env["SVC_PROPERTY_SEED"])
// mulberry32: a small seeded generator, so a failing instant can be replayed from the seed
const random = (() => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
})()
// any instant of each day (UTC midnight to the next, 24 h shifted by up to +10 h so every zone's morning is hit),
// to the millisecond
const instants = days.map((day) => Date.parse(`${day}T00:00:00Z`) + Math.floor(random() * 34 * 3_600_000))

let server: TestServer.TestServer
let org: { orgId: string; key: string }

beforeAll(async () => {
  server = await TestServer.start()
  org = await server.org("legal hours")
  await server.run(Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${org.orgId}, ${FROM}, 0)`
  ))
})
afterAll(() => server.close())

describe(`legal hours over HTTP, one number per rule row (seed ${seed})`, () => {
  for (const [i, now] of instants.entries()) {
    it(`get-batch-call at ${new Date(now).toISOString()} holds each zone set until the minute its rules open`, async () => {
      const clock = await Effect.runPromise(Effect.scoped(TestClock.make()))
      await Effect.runPromise(clock.setTime(now))
      const created = await server.request("POST", "/create-batch-call", {
        key: org.key,
        clock,
        body: { from_number: FROM, name: `rows ${i}`, tasks: numbers.map((to_number) => ({ to_number })) }
      })
      assert.strictEqual(created.status, 200, created.text)
      const id = String((created.json as Json)["batch_call_id"])
      const read = await server.request("GET", `/get-batch-call/${id}`, { key: org.key, clock })
      assert.strictEqual(read.status, 200, read.text)
      const sets = ((read.json as Json)["legal_hours"] as Json)["zone_sets"] as Array<Json>

      // every number is in exactly one zone set, the one with its zones and rules
      const expected = numbers.map((number) => ({ number, ...Oracle.judgeOf(number) }))
      const key = (zones: ReadonlyArray<string>, rules: ReadonlyArray<string>) =>
        `${[...zones].sort().join("&")}|${[...rules].sort().join(",")}`
      const byKey = new Map<string, Array<typeof expected[number]>>()
      for (const e of expected) {
        const k = key(e.zones, ["US", ...e.rules.map((r) => r.name).filter((n) => n !== "US")])
        byKey.set(k, [...(byKey.get(k) ?? []), e])
      }
      // (two sets may show the same zones and rules: numbers of states without a row of their own, e.g. NY and IN,
      // are grouped by their state but both show only the federal rule)
      const shown = new Map<string, number>()
      for (const set of sets) {
        const k = key(set["zones"] as Array<string>, set["rules"] as Array<string>)
        shown.set(k, (shown.get(k) ?? 0) + Number(set["pending_tasks"]))
      }
      assert.deepStrictEqual(
        [...shown].sort(),
        [...byKey].map(([k, members]) => [k, members.length] as const).sort(),
        "the zone sets, their rules and their pending tasks"
      )
      for (const set of sets) {
        const members = byKey.get(key(set["zones"] as Array<string>, set["rules"] as Array<string>))!
        const { rules, zones } = members[0]!
        const opening = Oracle.nextOpening(now, zones, rules)
        assert.strictEqual(
          iso(set["next_opening_timestamp"]),
          iso(opening ?? null),
          `${members.map((m) => m.number).join(",")} (${set["rules"]} in ${set["zones"]}) at ${iso(now)}; ` +
            `the table: ${Oracle.whyNot(now, zones, rules) ?? "legal now"}`
        )
        // held means illegal now and legal at the opening, to the minute: the minute before it is still closed
        if (opening !== undefined && opening > now) {
          assert.isFalse(Oracle.isLegal(opening - minuteMs, zones, rules))
          assert.isNotNull(set["blocked_by"], "a held set names its binding rule")
        } else {
          assert.isNull(set["blocked_by"], "a set legal now is not held")
        }
      }
    })
  }
})
