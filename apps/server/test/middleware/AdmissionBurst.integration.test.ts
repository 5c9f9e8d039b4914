// Issue 27, item 7: a burst of 50 concurrent small create-batch-call requests got 14 answers `503 server busy: 20
// requests running and 20 waiting`, and the spec lists no 503 for create-batch-call (its statuses are 400, 401,
// 404 and 500). Admission control now queues by the work ahead, not by a count of 20 (decision 0547): such a burst
// is served. Through the whole server stack, with its default limits, on a real PostgreSQL: the burst is made to
// pile up for certain by holding the tables create-batch-call writes locked until its first requests wait on the
// lock (then every one of the 50 has met the gate), and released then.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as TestServer from "../support/TestServer.ts"

const BURST = 50

let server: TestServer.TestServer
let org: { orgId: string; key: string }

beforeAll(async () => {
  // The server's defaults: only the per-key rate limit (1,200 a minute) is left as it is too.
  server = await TestServer.start()
  org = await server.org("burst")
  await server.run(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) =>
        sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${org.orgId}, '+14155550100', 0)`
    )
  )
})
afterAll(() => server.close())

const batch = (i: number) => ({
  from_number: "+14155550100",
  name: `burst ${i}`,
  trigger_timestamp: 4_000_000_000_000,
  tasks: [{ to_number: `+1415555${String(1000 + i).padStart(4, "0")}` }]
})

describe("admission control under a burst of small create-batch-calls", () => {
  it("serves all 50 requests of a burst, none refused with 503", async () => {
    const release = Effect.runSync(Deferred.make<void>())
    const locked = Effect.runSync(Deferred.make<number>())
    // One connection of the pool holds the tables locked against writes (reads go on: the API key check) until
    // requests wait on the lock: the pool's other connections are then all taken by blocked creates.
    const holding = server.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`LOCK TABLE batch_calls, batch_call_tasks, batch_call_recent_requests, batch_call_idempotency_keys
                   IN EXCLUSIVE MODE`
        let waiting = 0
        for (let polls = 0; waiting < 3; polls++) {
          // bounded: 30 s of 20 ms polls
          if (polls > 1_500) return yield* Effect.die(new Error(`only ${waiting} creates ever waited on the lock`))
          yield* Effect.sleep("20 millis")
          // pg_stat_activity is a snapshot taken at its first read in a transaction and kept to its end: without
          // clearing it this loop, one transaction, would read the first poll's count forever (under load that
          // was 1 or 2, and the test hung)
          yield* sql`SELECT pg_stat_clear_snapshot()`
          const rows = yield* sql<{ n: number }>`
            SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`
          waiting = rows[0]!.n
        }
        yield* Deferred.succeed(locked, waiting)
        yield* Deferred.await(release)
      }))))
    const answers = Array.from(
      { length: BURST },
      (_, i) => server.request("POST", "/create-batch-call", { key: org.key, body: batch(i) })
    )
    // The TestDatabase pool has 4 connections: the lock's and three blocked creates.
    // a holder that gives up fails the test at once instead of leaving it to the timeout
    const lockedOrFailed = Promise.race([Effect.runPromise(Deferred.await(locked)), holding.then(() => -1)])
    assert.strictEqual(await lockedOrFailed, 3)
    Effect.runSync(Deferred.succeed(release, undefined))
    await holding
    const responses = await Promise.all(answers)
    const refused = responses.filter((r) => r.status !== 200)
    assert.deepStrictEqual(
      refused.map((r) => `${r.status} ${r.text}`),
      [],
      `${refused.length} of ${BURST} not served`
    )
    const stored = await server.run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM batch_calls WHERE org_id = ${org.orgId}`
      )
    )
    assert.strictEqual(stored[0]!.n, BURST)
  }, 120_000)
})
