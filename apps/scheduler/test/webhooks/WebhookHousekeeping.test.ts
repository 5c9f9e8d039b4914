// The housekeeping loop (decision 0524): rounds delete chunk after chunk until one is short, a round that fails
// (the database away) is one outage line and the next round runs as planned.
import { assert, describe, it } from "@effect/vitest"
import { WebhooksRepo } from "@svc/store/webhooks/WebhooksRepo.ts"
import { Effect, Fiber, Layer, Logger } from "effect"
import { SqlError } from "effect/sql"
import { TestClock } from "effect/testing"
import { DatabaseHealth } from "../../src/runtime/DatabaseHealth.ts"
import * as WebhookHousekeeping from "../../src/webhooks/WebhookHousekeeping.ts"

const refused = () =>
  new SqlError.SqlError({
    reason: new SqlError.ConnectionError({
      cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
      message: "PgConnection: Failed to connect",
      operation: "connect"
    })
  })

/** A repository whose prune answers from `script` in turn (a function may die, as the real one does when down). */
const repoWith = (calls: Array<{ now: number; retentionMs: number; limit: number }>, script: Array<() => number>) =>
  Layer.succeed(
    WebhooksRepo,
    WebhooksRepo.of(
      {
        prune: (now: number, retentionMs: number, limit: number) =>
          Effect.sync(() => {
            calls.push({ now, retentionMs, limit })
            const next = script.shift()
            return { events: next === undefined ? 0 : next(), secrets: 0 }
          })
      } as unknown as WebhooksRepo["Service"]
    )
  )

describe("WebhookHousekeeping", () => {
  it.effect("a round deletes chunk after chunk until a chunk is short", () =>
    Effect.gen(function*() {
      const calls: Array<{ now: number; retentionMs: number; limit: number }> = []
      const chunk = WebhookHousekeeping.CHUNK
      const deleted = yield* WebhookHousekeeping.round({ retentionMs: 1_000 }).pipe(
        Effect.provide(repoWith(calls, [() => chunk, () => chunk, () => 7, () => chunk]))
      )
      assert.deepStrictEqual(deleted, { events: 2 * chunk + 7, secrets: 0 })
      assert.strictEqual(calls.length, 3)
      assert.isTrue(calls.every((c) => c.limit === chunk && c.retentionMs === 1_000))
    }))

  it.effect("a failed round is one outage line; the loop goes on at its pace", () =>
    Effect.gen(function*() {
      const calls: Array<{ now: number; retentionMs: number; limit: number }> = []
      const lines: Array<string> = []
      const script = [() => 3, () => {
        throw refused()
      }, () => 2]
      const fiber = yield* WebhookHousekeeping.loop({ retentionMs: 1_000, pruneEveryMs: 60_000 }).pipe(
        Effect.provide(repoWith(calls, script)),
        Effect.provide(DatabaseHealth.layer),
        Effect.provide(Logger.layer([Logger.make(({ message }) => lines.push(String(message)))])),
        Effect.forkChild
      )
      yield* TestClock.adjust(0)
      assert.deepStrictEqual(calls.map((c) => c.now), [0])
      yield* TestClock.adjust(60_000)
      assert.deepStrictEqual(calls.map((c) => c.now), [0, 60_000])
      yield* TestClock.adjust(60_000)
      assert.deepStrictEqual(calls.map((c) => c.now), [0, 60_000, 120_000])
      // the success at 120 s is the outage's first; the next round's confirms it (DatabaseHealth.CONFIRM_MS)
      yield* TestClock.adjust(60_000)
      assert.deepStrictEqual(calls.map((c) => c.now), [0, 60_000, 120_000, 180_000])
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(lines, [
        "pruned webhook events",
        "database unavailable",
        "pruned webhook events",
        "database available again after 60 s"
      ])
    }))
})
