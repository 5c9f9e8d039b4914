import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { CallsRepo } from "../../src/calls/CallsRepo.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const Layers = CallsRepo.layer.pipe(Layer.provideMerge(TestDatabase.layer))

const ORG = "org_feed"
const NOW = 1_800_000_000_000

/** Queues calls `from`..`to` (call_seq) for the feed, each to its own number. */
const queue = (from: number, to: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO contact_feed (call_seq, org_id, to_number, start_timestamp)
      SELECT s, ${ORG}, '+1415' || lpad(s::text, 7, '0'), ${NOW} - s FROM generate_series(${from}::int8, ${to}::int8) s`
  })

layer(Layers, { timeout: 60_000 })("CallsRepo.feedContacts", (it) => {
  it.effect("takes a big queue in one linear pass even when the statistics say the queue is empty", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const calls = yield* CallsRepo
      yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp) VALUES (${ORG}, 'feed', 10, 0)`
      // what autoanalyze records when it runs between bursts: the queue's pages are there, its rows are gone, so
      // the planner believes any later queue on those pages is empty (a density of 0 rows a page)
      yield* queue(1, 2_000)
      yield* sql`DELETE FROM contact_feed`
      yield* sql`ANALYZE contact_feed`
      const [stats] = yield* sql<{ reltuples: number; relpages: number }>`
        SELECT reltuples::float8 AS reltuples, relpages FROM pg_class WHERE relname = 'contact_feed'`
      assert.strictEqual(stats!.reltuples, 0)
      assert.isAbove(stats!.relpages, 0)
      // then a burst: with a plan that re-ran the selection for each entry this is 10^8 index visits (minutes, past
      // the test's timeout); taken once, well under a second
      yield* queue(2_001, 22_000)
      assert.strictEqual(yield* calls.feedContacts(30_000, NOW), 20_000)
      const [left] = yield* sql<{ n: number }>`SELECT count(*)::int4 AS n FROM contact_feed`
      assert.strictEqual(left!.n, 0)
      const [contacts] = yield* sql<{ n: number; conversations: number }>`
        SELECT count(*)::int4 AS n, sum(conversation_count)::int4 AS conversations FROM contacts WHERE org_id = ${ORG}`
      assert.deepStrictEqual(contacts, { n: 20_000, conversations: 20_000 })
    }))

  it.effect("takes at most the limit, oldest first, and leaves the rest for the next pass", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const calls = yield* CallsRepo
      yield* sql`DELETE FROM contact_feed`
      yield* queue(100_001, 100_010)
      assert.strictEqual(yield* calls.feedContacts(4, NOW), 4)
      const rest = yield* sql<{ call_seq: string }>`SELECT call_seq::text FROM contact_feed ORDER BY call_seq`
      assert.deepStrictEqual(rest.map((r) => r.call_seq), [
        "100005",
        "100006",
        "100007",
        "100008",
        "100009",
        "100010"
      ])
    }))
})
