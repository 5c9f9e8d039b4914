// Issue 27 ("Also seen"): while the database hangs, `/readyz` logged a warning on every probe, so the log grew with
// the probe rate. A hung database (its processes stopped with SIGSTOP: connections stay open, queries never
// answer) makes every probe time out; the warning is now logged once a minute with the count of failures since the
// last line (Health.ts).
import { assert, describe, it } from "@effect/vitest"
import { Database, EmbeddedPostgres } from "@svc/store"
import { Context, Duration, Effect, Exit, Layer, Logger, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Health from "../../src/handlers/Health.ts"
import { DatabaseAvailability } from "../../src/middleware/DatabaseAvailability.ts"

describe("readiness failures in the log", () => {
  it.effect("the first failure is logged, then at most one line a minute, counting the failures in between", () =>
    Effect.gen(function*() {
      const toLog = Health.failureLog(Duration.minutes(1))
      assert.strictEqual(yield* toLog, 1)
      for (let i = 0; i < 11; i++) {
        yield* TestClock.adjust("5 seconds")
        assert.isUndefined(yield* toLog, `a failure ${(i + 1) * 5} s after the logged one`)
      }
      yield* TestClock.adjust("5 seconds")
      assert.strictEqual(yield* toLog, 12, "a minute after the last line: this failure and the 11 held back")
      yield* TestClock.adjust("59 seconds")
      assert.isUndefined(yield* toLog)
    }))

  it("while the database hangs, five probes at once answer 503 and log one line", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-ready-hang-"))
    fs.chmodSync(dataDir, 0o755)
    const scope = Scope.makeUnsafe()
    const warnings: Array<string> = []
    const logger = Logger.layer([
      Logger.make(({ logLevel, message }) => {
        const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
        if (logLevel === "Warn") warnings.push(text)
      })
    ])
    const stopped: Array<number> = []
    try {
      const server = await Effect.runPromise(Scope.provide(EmbeddedPostgres.start({ dataDir }), scope))
      const database = Database.layerFromUrl(server.url, { maxConnections: 4 })
      const { dispose, handler } = HttpRouter.toWebHandler(
        Health.layer.pipe(
          Layer.provide(Layer.provideMerge(DatabaseAvailability.layer, database)),
          Layer.provide(HttpServer.layerServices),
          Layer.provideMerge(logger)
        ),
        { disableLogger: true }
      )
      const probe = async () =>
        (await handler(new Request("http://svc.test/readyz"), Context.empty() as Context.Context<never>)).status
      try {
        // the pool's connections are open before the database hangs
        assert.deepStrictEqual(await Promise.all([probe(), probe(), probe(), probe()]), [200, 200, 200, 200])
        const postmaster = Number(
          fs.readFileSync(path.join(EmbeddedPostgres.layout(dataDir).pgdata, "postmaster.pid"), "utf8").split("\n")[0]
        )
        for (const pid of [postmaster, ...childrenOf(postmaster)]) {
          process.kill(pid, "SIGSTOP")
          stopped.push(pid)
        }
        assert.deepStrictEqual(await Promise.all(Array.from({ length: 5 }, probe)), [503, 503, 503, 503, 503])
        assert.deepStrictEqual(warnings, ["readiness check failed"])
      } finally {
        for (const pid of stopped) process.kill(pid, "SIGCONT")
        await dispose()
      }
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)
})

/** The postmaster's children (its backends and helpers), from /proc. */
const childrenOf = (pid: number) =>
  fs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).map(Number).filter((candidate) => {
    try {
      const stat = fs.readFileSync(`/proc/${candidate}/stat`, "utf8")
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid
    } catch {
      return false
    }
  })
