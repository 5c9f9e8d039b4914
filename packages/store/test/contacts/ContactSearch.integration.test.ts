import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import * as ContactSeed from "../../src/contacts/ContactSeed.ts"
import upgradeToContactSearch from "../../src/migrations/0027_contact_search.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

// The search copy of migration 0027 (decision 0643): one row per contact with its current org, id and search text,
// whoever writes and however. Every write form the product uses is run here as SQL (the invariant is the
// database's, not a repository's), and after each the copy must equal the projection of contacts.

const ORGS = ["org-search-a", "org-search-b"]

const mismatches = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ missing: bigint; extra: bigint }>`
    SELECT
      (SELECT count(*) FROM (SELECT org_id, contact_id, search_text FROM contacts
        EXCEPT ALL SELECT org_id, contact_id, search_text FROM contact_search) m) AS missing,
      (SELECT count(*) FROM (SELECT org_id, contact_id, search_text FROM contact_search
        EXCEPT ALL SELECT org_id, contact_id, search_text FROM contacts) e) AS extra`.pipe(
    Effect.map((rows) => ({ missing: Number(rows[0]!.missing), extra: Number(rows[0]!.extra) }))
  ))

const assertInSync = (after: string) =>
  Effect.map(mismatches, (m) => assert.deepStrictEqual(m, { missing: 0, extra: 0 }, `after ${after}`))

/** mulberry32: the same sequence of operations on every run. */
const rng = (seed: number) => {
  let state = seed >>> 0
  return (bound: number) => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * bound)
  }
}

const NAMES = ["Ada", "Šimek", "Lovelace", "Johnson", "Ørsted", "李", null, "O'Brien", "50%_off"]

layer(TestDatabase.layer, { timeout: 120_000 })("contact_search, the search copy of contacts", (it) => {
  it.effect("follows every write form: single and bulk inserts, upserts, updates, deletes, org deletion, truncate", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (const org of ORGS) yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${org}, ${org}, 0)`
      const next = rng(17)
      let serial = 0
      const phone = (n: number) => `+1212555${String(n % 10_000).padStart(4, "0")}`
      const operations: ReadonlyArray<readonly [string, () => Effect.Effect<unknown, unknown, SqlClient.SqlClient>]> = [
        [
          "a single insert (search text by the row trigger)",
          () =>
            sql`INSERT INTO contacts (org_id, contact_id, phone_number, first_name, created_timestamp,
                user_modified_timestamp) VALUES (${ORGS[next(2)]!}, ${`c${++serial}`}, ${phone(next(300))},
                ${NAMES[next(NAMES.length)]!}, 0, 0) ON CONFLICT DO NOTHING`
        ],
        ["a multi-row insert with the search text supplied", () => {
          const org = ORGS[next(2)]!
          const row = () => ({
            org_id: org,
            contact_id: `c${++serial}`,
            phone_number: phone(next(300)),
            last_name: NAMES[next(NAMES.length)]!,
            created_timestamp: 0,
            user_modified_timestamp: 0,
            search_text: `supplied ${serial}`
          })
          const rows: [Record<string, unknown>, ...Array<Record<string, unknown>>] = [
            row(),
            ...Array.from({ length: next(20) }, row)
          ]
          return sql`INSERT INTO contacts ${sql.insert(rows)} ON CONFLICT DO NOTHING`
        }],
        [
          "the call feed's upsert (conversation count only on conflict)",
          () =>
            sql`INSERT INTO contacts AS k (org_id, contact_id, phone_number, conversation_count, created_timestamp,
                user_modified_timestamp, search_text)
              VALUES (${ORGS[next(2)]!}, ${`c${++serial}`}, ${phone(next(300))}, 1, 0, 0, 'fed')
              ON CONFLICT (org_id, phone_number) DO UPDATE SET conversation_count = k.conversation_count + 1`
        ],
        [
          "an upsert that rewrites the name",
          () =>
            sql`INSERT INTO contacts AS k (org_id, contact_id, phone_number, first_name, created_timestamp,
                user_modified_timestamp)
              VALUES (${ORGS[next(2)]!}, ${`c${++serial}`}, ${phone(next(300))}, ${NAMES[next(NAMES.length)]!}, 0, 0)
              ON CONFLICT (org_id, phone_number) DO UPDATE SET first_name = EXCLUDED.first_name`
        ],
        [
          "an update of names and custom fields",
          () =>
            sql`UPDATE contacts SET first_name = ${NAMES[next(NAMES.length)]!},
                custom_fields = custom_fields || jsonb_build_object('company', ${`Acme ${next(5)}`}::text)
              WHERE contact_id IN (SELECT contact_id FROM contacts ORDER BY contact_id LIMIT 3 OFFSET ${next(40)})`
        ],
        [
          "the backfill's bulk update of custom fields",
          () =>
            sql`UPDATE contacts k SET custom_fields = k.custom_fields || f.fields
              FROM (SELECT org_id, contact_id, jsonb_build_object('sentiment', ${`mood ${next(9)}`}::text) AS fields
                    FROM contacts WHERE org_id = ${ORGS[next(2)]!}) f
              WHERE k.org_id = f.org_id AND k.contact_id = f.contact_id`
        ],
        ["an update of the counters alone", () =>
          sql`UPDATE contacts SET conversation_count = conversation_count + 1,
                last_conversation_timestamp = ${next(1_000_000)} WHERE org_id = ${ORGS[next(2)]!}`],
        ["a change of a contact's id", () =>
          sql`UPDATE contacts SET contact_id = contact_id || 'x'
              WHERE contact_id = (SELECT contact_id FROM contacts ORDER BY contact_id LIMIT 1 OFFSET ${next(30)})`],
        ["a delete of a few contacts", () =>
          sql`DELETE FROM contacts WHERE contact_id IN
              (SELECT contact_id FROM contacts ORDER BY contact_id LIMIT ${1 + next(4)} OFFSET ${next(40)})`],
        ["a rolled-back insert and update", () =>
          sql.withTransaction(Effect.gen(function*() {
            yield* sql`INSERT INTO contacts (org_id, contact_id, phone_number, created_timestamp,
                  user_modified_timestamp) VALUES (${ORGS[0]!}, ${`c${++serial}`}, '+13125550000', 0, 0)`
            yield* sql`UPDATE contacts SET last_name = 'rolled back'`
            return yield* Effect.fail("roll back" as const)
          })).pipe(Effect.ignore)]
      ]
      const seen = new Set<string>()
      for (let step = 0; step < 240; step++) {
        const [name, run] = operations[next(operations.length)]!
        seen.add(name)
        yield* run()
        yield* assertInSync(`step ${step}: ${name}`)
      }
      assert.strictEqual(seen.size, operations.length, "every write form ran")
      const live = yield* sql<{ n: bigint }>`SELECT count(*) AS n FROM contact_search`
      assert.isAbove(Number(live[0]!.n), 20, "the copy was exercised with contacts in it")

      // a bulk load through the seed, with its index rebuild, then an org's deletion and a truncate
      const seeded = yield* ContactSeed.load([{ orgId: ORGS[1]!, contacts: 3_000 }], {
        now: 1_750_000_000_000,
        rebuildIndexes: true
      })
      assert.isTrue(seeded.rebuiltIndexes)
      yield* assertInSync("a seed with the indexes rebuilt")
      const indexes = yield* sql<{ indexname: string }>`
        SELECT indexname FROM pg_indexes WHERE tablename = 'contact_search' ORDER BY indexname`
      assert.deepStrictEqual(indexes.map((i) => i.indexname), ["contact_search_pkey", "contact_search_trgm"])
      yield* sql`DELETE FROM orgs WHERE org_id = ${ORGS[1]!}`
      yield* assertInSync("an org's deletion")
      const left = yield* sql<{ n: bigint }>`SELECT count(*) AS n FROM contact_search WHERE org_id = ${ORGS[1]!}`
      assert.strictEqual(Number(left[0]!.n), 0)
      yield* sql`TRUNCATE contacts`
      const after = yield* sql<{ n: bigint }>`SELECT count(*) AS n FROM contact_search`
      assert.strictEqual(Number(after[0]!.n), 0)
    }))

  it.effect("the upgrade copies a contact another replica writes while it runs (migration 0027's lock)", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // this database as it was before migration 0027
      for (const name of ["insert", "update", "delete", "truncate"]) {
        yield* sql.unsafe(`DROP TRIGGER contact_search_${name} ON contacts`)
        yield* sql.unsafe(`DROP FUNCTION contact_search_${name}()`)
      }
      yield* sql`DROP TABLE contact_search`
      yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES ('org-upgrade', 'org-upgrade', 0)`
      yield* sql`INSERT INTO contacts (org_id, contact_id, phone_number, first_name, created_timestamp,
          user_modified_timestamp) VALUES ('org-upgrade', 'before', '+14155550101', 'Early', 0, 0)`

      // an old replica's write, in flight when the upgrade starts and committed while it runs
      const inserted = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const writer = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO contacts (org_id, contact_id, phone_number, first_name, created_timestamp,
            user_modified_timestamp) VALUES ('org-upgrade', 'during', '+14155550102', 'Late', 0, 0)`
        yield* Deferred.succeed(inserted, undefined)
        yield* Deferred.await(release)
      })))
      yield* Deferred.await(inserted)
      const upgrade = yield* Effect.forkChild(sql.withTransaction(upgradeToContactSearch))
      // the upgrade waits on a lock behind the writer (real round trips, no timer: at most 10,000 of them)
      let waiting = false
      for (let i = 0; i < 10_000 && !waiting; i++) {
        const rows = yield* sql<{ n: bigint }>`
          SELECT count(*) AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`
        waiting = Number(rows[0]!.n) > 0
      }
      assert.isTrue(waiting, "the upgrade waited for the writer")
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(writer)
      yield* Fiber.join(upgrade)
      const copied = yield* sql<{ contact_id: string }>`
        SELECT contact_id FROM contact_search WHERE org_id = 'org-upgrade' ORDER BY contact_id`
      assert.deepStrictEqual(copied.map((r) => r.contact_id), ["before", "during"])
      yield* assertInSync("the upgrade with a concurrent writer")
    }))

  it.effect("an update that leaves the search text alone writes nothing to the copy (the call feed's counters)", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES ('org-hot', 'org-hot', 0)`
      yield* sql`INSERT INTO contacts (org_id, contact_id, phone_number, first_name, created_timestamp,
          user_modified_timestamp) VALUES ('org-hot', 'h1', '+14155550100', 'Grace', 0, 0)`
      const version = sql<{ xmin: string }>`SELECT xmin::text AS xmin FROM contact_search WHERE contact_id = 'h1'`
      const before = (yield* version)[0]!.xmin
      yield* sql`UPDATE contacts SET conversation_count = conversation_count + 1 WHERE contact_id = 'h1'`
      yield* sql`UPDATE contacts SET first_name = 'Grace' WHERE contact_id = 'h1'`
      assert.strictEqual((yield* version)[0]!.xmin, before, "the copy's row was not rewritten")
      yield* sql`UPDATE contacts SET first_name = 'Hopper' WHERE contact_id = 'h1'`
      assert.notStrictEqual((yield* version)[0]!.xmin, before, "a new name rewrites the copy")
      const text = yield* sql<{ search_text: string }>`SELECT search_text FROM contact_search WHERE contact_id = 'h1'`
      assert.include(text[0]!.search_text, "hopper")
    }))
})
