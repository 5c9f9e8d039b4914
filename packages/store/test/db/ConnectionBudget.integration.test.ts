// The connection budget's start-up line (decision 0440) against a real PostgreSQL whose max_connections is small. The
// limits are PostgreSQL's ("Connections and Authentication": max_connections, superuser_reserved_connections default
// 3, reserved_connections default 0 since 16): a pool that may grow past what is left is told at start, and the
// line is shown to be right by the pool then being refused connections ("too many clients already", 53300).
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Context, Deferred, Effect, Fiber, Layer, Logger, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as ConnectionBudget from "../../src/db/ConnectionBudget.ts"
import * as Database from "../../src/db/Database.ts"
import * as EmbeddedPostgres from "../../src/db/EmbeddedPostgres.ts"

const MAX_CONNECTIONS = 8
const SUPERUSER_RESERVED = 3
/** The advisory lock the refusal check's statements wait on. */
const HOLD_LOCK = 4_242_001

/** A server of its own with max_connections = 8, for the test's scope. */
const smallServer = Effect.gen(function*() {
  const dataDir = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-budget-"))
      fs.chmodSync(dir, 0o755)
      return dir
    }),
    (dir) =>
      Effect.sync(() => {
        const external = EmbeddedPostgres.layout(dir).externalHome
        if (external !== undefined) fs.rmSync(external, { recursive: true, force: true })
        fs.rmSync(dir, { recursive: true, force: true })
      })
  )
  return yield* EmbeddedPostgres.start({ dataDir, settings: { max_connections: String(MAX_CONNECTIONS) } }).pipe(
    Effect.orDie
  )
})

interface Line {
  readonly level: string
  readonly message: string
}

/** Builds the production layer (as `svc-server` does) with `env`, and returns what it logged about the budget. */
const startProcess = (env: Record<string, string>, lines: Array<Line>) =>
  Layer.build(Database.layerSupervised).pipe(
    Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))),
    Effect.provide(Logger.layer([
      Logger.make(({ logLevel, message }) => {
        const text = Array.isArray(message) ? message.join(" ") : String(message)
        if (text.includes("connection budget")) lines.push({ level: logLevel, message: text })
      })
    ])),
    Effect.orDie
  )

describe("connection budget at start", () => {
  it.live(
    "a pool that may outgrow what PostgreSQL has left is told in one warning, and is then refused",
    () =>
      Effect.gen(function*() {
        const server = yield* smallServer
        const lines: Array<Line> = []
        const context = yield* startProcess(
          { DATABASE_URL: Redacted.value(server.url), SVC_DB_MAX_CONNECTIONS: "10" },
          lines
        )
        assert.strictEqual(lines.length, 1)
        assert.strictEqual(lines[0]!.level, "Warn")
        assert.match(
          lines[0]!.message,
          new RegExp(
            `^connection budget exceeded: this process may open 10 \\(SVC_DB_MAX_CONNECTIONS\\) but PostgreSQL has \\d+ ` +
              `free \\(max_connections ${MAX_CONNECTIONS}, ${SUPERUSER_RESERVED} reserved, \\d+ in use\\)`
          )
        )
        // the warning was right: ten statements at once need ten connections, and the server has fewer than ten.
        // Each statement waits on an advisory lock another connection holds until a refusal has been seen, so every
        // connection granted stays in use while the others ask (with a sleep instead, a loaded machine opened them
        // so slowly that the first statements were done, and their connections free again, before the last asked)
        const holder = yield* PgClient.makeClient({ url: server.url, connectTimeout: "10 seconds" }).pipe(
          Effect.provide(Reactivity.layer),
          Effect.orDie
        )
        const locked = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        yield* holder.withTransaction(
          holder`SELECT pg_advisory_xact_lock(${HOLD_LOCK})`.pipe(
            Effect.andThen(Deferred.succeed(locked, undefined)),
            Effect.andThen(Deferred.await(release))
          )
        ).pipe(Effect.forkScoped)
        yield* Deferred.await(locked)
        const sql = Context.get(context, SqlClient.SqlClient)
        const firstRefusal = yield* Deferred.make<void>()
        const statements = yield* Effect.all(
          Array.from({ length: 10 }, () =>
            Effect.result(sql`SELECT pg_advisory_xact_lock_shared(${HOLD_LOCK})`).pipe(
              Effect.tap((result) =>
                result._tag === "Failure" ? Deferred.succeed(firstRefusal, undefined) : Effect.void
              )
            )),
          { concurrency: "unbounded" }
        ).pipe(Effect.forkScoped)
        // released at the first refusal, or after 60 s without one (then the assertion below fails)
        yield* Deferred.await(firstRefusal).pipe(Effect.timeoutOption("60 seconds"))
        yield* Deferred.succeed(release, undefined)
        const results = yield* Fiber.join(statements)
        const refused = results.filter((r) => r._tag === "Failure").map((r) => String(r))
        assert.isAbove(refused.length, 0, "no statement of the ten was refused a connection within 60 s")
        assert.match(refused[0]!, /too many clients|remaining connection slots/)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live("a pool that fits is told the numbers in one information line", () =>
    Effect.gen(function*() {
      const server = yield* smallServer
      const lines: Array<Line> = []
      yield* startProcess({ DATABASE_URL: Redacted.value(server.url), SVC_DB_MAX_CONNECTIONS: "2" }, lines)
      assert.strictEqual(lines.length, 1)
      assert.strictEqual(lines[0]!.level, "Info")
      assert.match(
        lines[0]!.message,
        new RegExp(
          `^connection budget: this process may open 2 \\(SVC_DB_MAX_CONNECTIONS\\); PostgreSQL has \\d+ free ` +
            `\\(max_connections ${MAX_CONNECTIONS}, ${SUPERUSER_RESERVED} reserved, \\d+ in use\\)$`
        )
      )
    }).pipe(Effect.scoped), 120_000)
})

describe("connection budget arithmetic", () => {
  const server = { maxConnections: 100, reserved: 3, inUse: 40 }

  it("directly, the whole pool counts against PostgreSQL: 58 left for a pool of 10 fits, 58 for 59 does not", () => {
    // 100 - 3 reserved - 40 in use, plus the one the check itself runs on (this process's own)
    assert.strictEqual(ConnectionBudget.judge({ poolSize: 10, pooled: false, direct: 0 }, server).free, 58)
    assert.isFalse(ConnectionBudget.judge({ poolSize: 58, pooled: false, direct: 0 }, server).exceeded)
    assert.isTrue(ConnectionBudget.judge({ poolSize: 59, pooled: false, direct: 0 }, server).exceeded)
  })

  it("behind a transaction pooler only the direct (LISTEN) connections count against PostgreSQL", () => {
    const report = ConnectionBudget.judge({ poolSize: 500, pooled: true, direct: 2 }, server)
    assert.deepStrictEqual([report.need, report.free, report.exceeded], [2, 57, false])
    assert.match(report.line, /2 direct \(LISTEN\) beside a pool of 500 on the transaction pooler/)
    assert.isTrue(ConnectionBudget.judge({ poolSize: 1, pooled: true, direct: 2 }, { ...server, inUse: 96 }).exceeded)
  })
})
