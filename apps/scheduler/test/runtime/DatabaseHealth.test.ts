import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Fiber, Logger, References } from "effect"
import { SqlError } from "effect/sql"
import { TestClock } from "effect/testing"
import * as DatabaseHealth from "../../src/runtime/DatabaseHealth.ts"

const refused = () =>
  new SqlError.SqlError({
    reason: new SqlError.ConnectionError({
      cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
      message: "PgConnection: Failed to connect",
      operation: "connect"
    })
  })

/** How sql-pg reports a server answering "the database system is starting up" (SQLSTATE 57P03). */
const startingUp = () =>
  new SqlError.SqlError({
    reason: new SqlError.UnknownError({
      cause: Object.assign(new Error("the database system is starting up"), { code: "57P03" }),
      message: "PgConnection: Failed to connect",
      operation: "connect"
    })
  })

const syntax = () =>
  new SqlError.SqlError({
    reason: new SqlError.SqlSyntaxError({
      cause: Object.assign(new Error("relation \"x\" does not exist"), { code: "42P01" }),
      message: "PgConnection: Query failed",
      operation: "query"
    })
  })

interface Line {
  readonly level: string
  readonly message: string
  readonly annotations: Record<string, unknown>
}

/** Runs `body` with a fresh DatabaseHealth and a logger that keeps every line. */
const withHealth = <A, E>(
  body: (health: DatabaseHealth.DatabaseHealth["Service"], lines: Array<Line>) => Effect.Effect<A, E>
) => {
  const lines: Array<Line> = []
  const capture = Logger.layer([
    Logger.make(({ fiber, logLevel, message }) =>
      lines.push({
        level: logLevel,
        message: Array.isArray(message) ? message.map(String).join(" ") : String(message),
        annotations: { ...fiber.getRef(References.CurrentLogAnnotations) }
      })
    )
  ])
  return Effect.flatMap(DatabaseHealth.DatabaseHealth.make, (health) => body(health, lines)).pipe(
    Effect.provide(capture)
  )
}

describe("DatabaseHealth.isUnavailable", () => {
  it("a connection error, a server starting up or shutting down, a refused socket: unavailable", () => {
    assert.isTrue(DatabaseHealth.isUnavailable(Cause.die(refused())))
    assert.isTrue(DatabaseHealth.isUnavailable(Cause.fail(refused())))
    assert.isTrue(DatabaseHealth.isUnavailable(Cause.die(startingUp())))
    assert.isTrue(
      DatabaseHealth.isUnavailable(
        Cause.die(new Error("wrapped", { cause: Object.assign(new Error("x"), { code: "ECONNRESET" }) }))
      )
    )
  })

  it("a statement the server refused, a bug, an interruption: not an outage", () => {
    assert.isFalse(DatabaseHealth.isUnavailable(Cause.die(syntax())))
    assert.isFalse(DatabaseHealth.isUnavailable(Cause.die(new TypeError("undefined is not a function"))))
    assert.isFalse(DatabaseHealth.isUnavailable(Cause.fail("nope")))
    assert.isFalse(DatabaseHealth.isUnavailable(Cause.interrupt()))
  })
})

describe("DatabaseHealth", () => {
  it.effect("an outage is one line when it starts, a summary every 30 s, one line when it ends; no stack", () =>
    withHealth((health, lines) =>
      Effect.gen(function*() {
        const round = health.observe("dispatch pass")
        // three loops failing every second for 45 s
        for (let second = 0; second < 45; second++) {
          for (const what of ["dispatch pass", "recording finished calls", "feeding calls to contacts"]) {
            yield* health.observe(what)(Effect.die(second % 2 === 0 ? refused() : startingUp())).pipe(Effect.exit)
          }
          yield* TestClock.adjust(1_000)
        }
        assert.deepStrictEqual(lines.map((l) => [l.level, l.message]), [
          ["Error", "database unavailable"],
          ["Warn", "database still unavailable"]
        ])
        assert.strictEqual(lines[0]!.annotations["during"], "dispatch pass")
        assert.include(String(lines[0]!.annotations["reason"]), "ECONNREFUSED")
        assert.strictEqual(lines[1]!.annotations["seconds"], 30)
        assert.strictEqual(lines[1]!.annotations["failedRounds"], 91)
        assert.isFalse(lines.some((l) => JSON.stringify(l).includes("    at ")), "no stack trace")
        assert.deepStrictEqual(yield* health.status, {
          available: false,
          failedRounds: 135,
          since: 0,
          backAt: undefined
        })

        // the first success is a candidate; one CONFIRM_MS later confirms it, and the outage is told over
        yield* round(Effect.void)
        assert.strictEqual(lines.length, 2)
        assert.deepStrictEqual(yield* health.status, {
          available: false,
          failedRounds: 135,
          since: 0,
          backAt: 45_000
        })
        yield* TestClock.adjust(DatabaseHealth.CONFIRM_MS - 1)
        yield* round(Effect.void)
        assert.strictEqual(lines.length, 2, "not yet: under CONFIRM_MS after the first success")
        yield* TestClock.adjust(1)
        yield* round(Effect.void)
        assert.deepStrictEqual(lines[2], {
          level: "Warn",
          message: "database available again after 45 s",
          annotations: { seconds: 45, failedRounds: 135 }
        })
        assert.isTrue((yield* health.status).available)
        // further successes say nothing
        yield* round(Effect.void)
        assert.strictEqual(lines.length, 3)
      })
    ))

  it.effect("a failure of a round that started before the database came back does not start another outage", () =>
    withHealth((health, lines) =>
      Effect.gen(function*() {
        yield* health.failed("dispatch pass", 0, Cause.die(refused()))
        yield* TestClock.adjust(5_000)
        // a round started at 4 s (during the outage) that only now reports its failure, after another round got
        // through at 5 s: the candidate stands
        yield* health.succeeded(5_000)
        yield* health.failed("recording finished calls", 4_000, Cause.die(startingUp()))
        yield* TestClock.adjust(DatabaseHealth.CONFIRM_MS)
        yield* health.succeeded(5_000 + DatabaseHealth.CONFIRM_MS)
        assert.deepStrictEqual(lines.map((l) => l.message), [
          "database unavailable",
          "database available again after 5 s"
        ])
        assert.isTrue((yield* health.status).available)
        // one that started before the first success, reporting now: still old news
        yield* health.failed("renewing leases", 4_500, Cause.die(refused()))
        assert.strictEqual(lines.length, 2)
        // one that started after it is a new outage
        yield* TestClock.adjust(1_000)
        yield* health.failed("dispatch pass", 7_000, Cause.die(refused()))
        assert.strictEqual(lines[2]!.message, "database unavailable")
        // a success of a round that started before the outage was noticed proves nothing
        yield* health.succeeded(6_500)
        assert.deepStrictEqual(yield* health.status, {
          available: false,
          failedRounds: 1,
          since: 7_000,
          backAt: undefined
        })
      })
    ))

  it.effect("a killed postmaster's backends answering for a moment do not end the outage: two lines, not four", () =>
    withHealth((health, lines) =>
      Effect.gen(function*() {
        // the postmaster is killed at 0: the LISTEN connection notices
        yield* health.failed("listening for new batches", 0, Cause.die(refused()))
        // a pass started at 0 ms goes through at 6 ms on a backend that has not noticed yet
        yield* TestClock.adjust(6)
        yield* health.succeeded(0)
        assert.strictEqual((yield* health.status).backAt, 6)
        // a round started after that answer cannot connect: the outage goes on, the candidate is gone
        yield* TestClock.adjust(52)
        yield* health.failed("feeding calls to contacts", 50, Cause.die(refused()))
        assert.strictEqual((yield* health.status).backAt, undefined)
        // the server is back at 7.1 s, and rounds keep going through
        yield* TestClock.adjust(7_100 - 58)
        yield* health.succeeded(7_090)
        yield* TestClock.adjust(1_100)
        yield* health.succeeded(8_150)
        assert.deepStrictEqual(lines.map((l) => [l.message, l.annotations["failedRounds"]]), [
          ["database unavailable", undefined],
          ["database available again after 7.1 s", 2]
        ])
        assert.isTrue((yield* health.status).available)
      })
    ))

  it.effect("any other failure is logged with its cause each time; interruption is not a failure", () =>
    withHealth((health, lines) =>
      Effect.gen(function*() {
        yield* health.observe("feeding calls to contacts")(Effect.die(syntax())).pipe(Effect.exit)
        yield* health.observe("feeding calls to contacts")(Effect.die(syntax())).pipe(Effect.exit)
        assert.deepStrictEqual(lines.map((l) => [l.level, l.message]), [
          ["Error", "feeding calls to contacts failed; trying again"],
          ["Error", "feeding calls to contacts failed; trying again"]
        ])
        assert.include(String(lines[0]!.annotations["cause"]), "relation \"x\" does not exist")
        const fiber = yield* Effect.forkChild(health.observe("dispatch pass")(Effect.never))
        yield* Effect.yieldNow
        yield* Fiber.interrupt(fiber)
        assert.strictEqual(lines.length, 2)
        assert.isTrue((yield* health.status).available)
      })
    ))
})
