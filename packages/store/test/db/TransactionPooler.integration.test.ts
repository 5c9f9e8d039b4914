// svc behind a real PgBouncer 1.18 in pool_mode = transaction (decision 0440), started here like the Redis of the
// rate-limit tests. What the pooler breaks comes from its documentation ("SQL feature map for pooling modes":
// protocol-level prepared plans need 1.21+, LISTEN is not supported in transaction mode) and is shown on the real
// pooler first, so the test of the fix cannot pass against a pooler that simply does not have the problem.
import { PgClient } from "@effect/sql-pg"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Fiber, Layer, Option, Queue, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as Database from "../../src/db/Database.ts"
import * as DatabaseAdmin from "../../src/db/DatabaseAdmin.ts"
import * as DatabaseNotifications from "../../src/db/DatabaseNotifications.ts"
import * as Migrations from "../../src/db/Migrations.ts"
import { describe as describeError } from "../../src/db/SqlErrorMessage.ts"
import * as DispatchWakeups from "../../src/dispatch/DispatchWakeups.ts"
import * as PgBouncer from "../../test-support/PgBouncer.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

let bouncer: PgBouncer.PgBouncer
let databases = 0

beforeAll(async () => {
  // two server connections per database: enough to show a statement landing on the other one
  bouncer = await PgBouncer.start(process.env["SVC_TEST_ADMIN_URL"]!, { poolSize: 2 })
})
afterAll(async () => {
  await bouncer?.stop()
})

/** A clone of the migrated template (or an empty database), dropped with the scope: its server and pooler URLs. */
const database = (template: "migrated" | "empty" = "migrated") =>
  Effect.gen(function*() {
    const admin = yield* TestDatabase.adminUrl
    const name = `svc_pooler_${process.pid}_${++databases}_${Date.now().toString(36)}`
    yield* Effect.acquireRelease(
      DatabaseAdmin.ensureDatabase(admin, name, template === "migrated" ? process.env["SVC_TEST_TEMPLATE"] : undefined)
        .pipe(Effect.orDie),
      () => Effect.ignore(DatabaseAdmin.dropDatabase(admin, name))
    )
    return { direct: TestDatabase.urlFor(admin, name), pooled: TestDatabase.urlFor(Redacted.make(bouncer.url), name) }
  })

/** The layer's services, built in the current scope (Layer.fresh: each call is its own pool, as a process's). */
const build = <A>(layer: Layer.Layer<A, Database.DatabaseError>) => Layer.build(Layer.fresh(layer)).pipe(Effect.orDie)

const backendPid = (sql: SqlClient.SqlClient) =>
  Effect.map(sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`, (rows) => rows[0]!.pid)

/**
 * The choreography that puts one client connection's next transaction on the other server connection: `subject` (a
 * pool of one connection) runs `SELECT pg_backend_pid()` outside a transaction, on some server connection X. Two
 * other clients then each open a transaction (which pins a server connection each: both are now taken) and say which
 * backend they got; the one that got X keeps its transaction open, the other commits. The subject's next transaction
 * can only get the other server connection, where a statement it named on X does not exist.
 */
const onTheOtherServer = <A, E>(
  subject: SqlClient.SqlClient,
  others: SqlClient.SqlClient,
  inTransaction: Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    const first = yield* backendPid(subject)
    const opened = yield* Effect.all([0, 1].map(() => Queue.unbounded<number>()))
    const release = yield* Effect.all([0, 1].map(() => Queue.unbounded<void>()))
    const holders = yield* Effect.forEach([0, 1], (i) =>
      others.withTransaction(Effect.gen(function*() {
        yield* Queue.offer(opened[i]!, yield* backendPid(others))
        yield* Queue.take(release[i]!)
      })).pipe(Effect.forkScoped))
    const pids = yield* Effect.forEach(opened, Queue.take)
    assert.include(pids, first, "the two open transactions hold both server connections, the subject's among them")
    const other = pids.indexOf(first) === 0 ? 1 : 0
    yield* Queue.offer(release[other]!, undefined)
    yield* Fiber.join(holders[other]!)
    const result = yield* subject.withTransaction(Effect.flatMap(backendPid(subject), (second) => {
      assert.notStrictEqual(second, first, "the subject's transaction ran on the other server connection")
      return inTransaction
    })).pipe(Effect.exit)
    yield* Queue.offer(release[1 - other]!, undefined)
    yield* Fiber.join(holders[1 - other]!)
    return result
  })

/** The SqlClient of a pool on `url` opened in the current scope. */
const pool = (url: Redacted.Redacted<string>, options: Database.UrlOptions) =>
  Effect.map(
    build(Database.layerFromUrl(url, { migrate: false, ...options })),
    (context) => Context.get(context, SqlClient.SqlClient)
  )

/** A statement the subject runs once before the choreography (so it is named, with named statements) and again in it. */
const probe = (sql: SqlClient.SqlClient) => sql<{ n: number }>`SELECT 41 + 1 AS n`

describe("behind PgBouncer in transaction mode", () => {
  it.live("named prepared statements fail when a transaction lands on another server connection (the real pooler)", () =>
    Effect.gen(function*() {
      const { pooled } = yield* database()
      // as svc was before decision 0440: @effect/sql-pg's default, named statements
      const subject = yield* pool(pooled, { maxConnections: 1 })
      const others = yield* pool(pooled, { maxConnections: 2, poolMode: "transaction" })
      yield* probe(subject)
      const exit = yield* onTheOtherServer(subject, others, probe(subject))
      assert.isTrue(Exit.isFailure(exit), "the statement named on the first server connection is unknown on the other")
      const message = Exit.isFailure(exit) ? describeError(Cause.squash(exit.cause)) : ""
      // PostgreSQL's 26000 invalid_sql_statement_name; @effect/sql-pg retries a stale name outside a transaction only
      assert.match(message, /prepared statement "effect_[0-9a-f]+_\d+" does not exist/)
    }).pipe(Effect.scoped))

  it.live("with DATABASE_POOL_MODE=transaction the same choreography answers: no prepared-statement error", () =>
    Effect.gen(function*() {
      const { pooled } = yield* database()
      const subject = yield* pool(pooled, { maxConnections: 1, poolMode: "transaction" })
      const others = yield* pool(pooled, { maxConnections: 2, poolMode: "transaction" })
      yield* probe(subject)
      const exit = yield* onTheOtherServer(subject, others, probe(subject))
      assert.deepStrictEqual(exit, Exit.succeed([{ n: 42 }]))
    }).pipe(Effect.scoped))

  it.live("a transaction keeps its advisory lock and SET LOCAL until it ends, and nothing of them after", () =>
    Effect.gen(function*() {
      const { pooled } = yield* database()
      const sql = yield* pool(pooled, { maxConnections: 2, poolMode: "transaction" })
      const inside = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(${0x5356_4d31})`
        yield* sql`SET LOCAL lock_timeout = '1234ms'`
        return yield* sql<{ locks: number; timeout: string }>`
          SELECT (SELECT count(*)::int4 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS locks,
            current_setting('lock_timeout') AS timeout`
      }))
      assert.deepStrictEqual(inside, [{ locks: 1, timeout: "1234ms" }])
      // any backend's, in this test's own database: the lock went with the transaction, wherever it ran
      const after = yield* sql<{ locks: number }>`
        SELECT count(*)::int4 AS locks FROM pg_locks
        WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
      assert.deepStrictEqual(after, [{ locks: 0 }])
    }).pipe(Effect.scoped))

  it.live("without DATABASE_DIRECT_URL, LISTEN fails saying why and the layer says nothing listens", () =>
    Effect.gen(function*() {
      const { pooled } = yield* database()
      const context = yield* build(Database.layerFromUrl(pooled, { migrate: false, poolMode: "transaction" }))
      const listen = yield* Effect.provideContext(DatabaseNotifications.listener, context)
      assert.isTrue(Option.isNone(listen))
      const error = yield* Context.get(context, PgClient.PgClient).listen("svc_test_channel").pipe(Effect.flip)
      assert.match(error.message, /LISTEN svc_test_channel needs a session connection.*DATABASE_DIRECT_URL/)
    }).pipe(Effect.scoped))

  it.live("with DATABASE_DIRECT_URL, a NOTIFY committed through the pooler reaches the LISTEN on the server", () =>
    Effect.gen(function*() {
      const { direct, pooled } = yield* database()
      const context = yield* build(
        Database.layerFromUrl(pooled, { migrate: false, poolMode: "transaction", directUrl: Option.some(direct) })
      )
      const listen = yield* Effect.provideContext(DatabaseNotifications.listener, context)
      assert.isTrue(Option.isSome(listen))
      const notifications = yield* Option.getOrThrow(listen)("svc_test_channel")
      const sql = Context.get(context, SqlClient.SqlClient)
      yield* sql.withTransaction(sql`SELECT pg_notify('svc_test_channel', 'hello')`)
      const received = yield* Queue.take(notifications).pipe(Effect.timeout("20 seconds"))
      assert.strictEqual(received.payload, "hello")
    }).pipe(Effect.scoped))

  it.live("migrations run through DATABASE_DIRECT_URL, and through the pooler itself without one", () =>
    Effect.gen(function*() {
      const expected = (yield* Migrations.all).length
      const count = (context: Context.Context<SqlClient.SqlClient>) =>
        Effect.map(
          Context.get(context, SqlClient.SqlClient)<{ n: number }>`SELECT count(*)::int4 AS n FROM svc_migrations`,
          (rows) => rows[0]!.n
        )
      const viaDirect = yield* database("empty")
      const one = yield* build(
        Database.layerFromUrl(viaDirect.pooled, { poolMode: "transaction", directUrl: Option.some(viaDirect.direct) })
      )
      const viaPooler = yield* database("empty")
      // two processes at once through the pooler: the run is one transaction under a transaction-level lock
      const [two, three] = yield* Effect.all([
        build(Database.layerFromUrl(viaPooler.pooled, { poolMode: "transaction", maxConnections: 2 })),
        build(Database.layerFromUrl(viaPooler.pooled, { poolMode: "transaction", maxConnections: 2 }))
      ], { concurrency: "unbounded" })
      assert.deepStrictEqual(yield* Effect.all([count(one), count(two), count(three)]), [expected, expected, expected])
    }).pipe(Effect.scoped))

  it.effect("without a LISTEN, a due batch wakes the worker within POLL_FALLBACK_MS of the clock, not later", () =>
    Effect.gen(function*() {
      const { pooled } = yield* database()
      const context = yield* build(Database.layerFromUrl(pooled, { migrate: false, poolMode: "transaction" }))
      const sql = Context.get(context, SqlClient.SqlClient)
      const woken: Array<string> = []
      yield* DispatchWakeups.onBatchCreated((id) => Effect.sync(() => woken.push(id))).pipe(
        Effect.provideContext(context)
      )
      // a batch created by another process, due at once (its trigger time is now on the test clock: 0)
      yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp) VALUES ('org_poll', 'o', 1, 0)`
      yield* sql`
        INSERT INTO batch_calls (batch_call_id, org_id, api_key_id, from_number, scheduled_timestamp,
          total_task_count, next_dispatch_at, created_timestamp)
        VALUES ('batch_poll', 'org_poll', 'key', '+14155550100', 0, 1, 0, 0)`
      yield* TestClock.adjust(DatabaseNotifications.POLL_FALLBACK_MS - 1)
      // the poll has not run: nothing could have woken the worker yet (a NOTIFY is not listened to)
      assert.deepStrictEqual(woken, [])
      yield* TestClock.adjust(1)
      // the poll's query runs on the live connection: waited for in real time, bounded
      const deadline = Date.now() + 20_000
      while (woken.length === 0 && Date.now() < deadline) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
      }
      assert.deepStrictEqual(woken, ["batch_poll"])
    }).pipe(Effect.scoped))
})
