// The Twilio adapter's record (migration 0020, decision 0601): one row per key, reserved before the create
// request; callbacks move it forward only, in whatever order and however often they arrive.
import { PgClient } from "@effect/sql-pg"
import { assert, layer } from "@effect/vitest"
import { CallId } from "@svc/domain/models/Ids.ts"
import { Effect, Layer, Option, Queue } from "effect"
import { CHANNEL, TwilioCallsRepo } from "../../../src/carriers/twilio/TwilioCallsRepo.ts"
import * as TestDatabase from "../../../test-support/TestDatabase.ts"

const Layers = TwilioCallsRepo.layer.pipe(Layer.provideMerge(TestDatabase.layer))
let serial = 0
const NOW = 1_800_000_000_000

const reserveNew = Effect.gen(function*() {
  const repo = yield* TwilioCallsRepo
  const key = `task_${++serial}`
  const result = yield* repo.reserve({
    idempotencyKey: key,
    callId: CallId.make(`call_${serial}`),
    accountSid: "AC123",
    fromNumber: "+14155550100",
    toNumber: "+14155550199"
  }, NOW)
  return { key, result }
})

const statusOf = (key: string) =>
  Effect.flatMap(TwilioCallsRepo, (repo) => repo.find(key)).pipe(
    Effect.map((record) => Option.getOrThrow(record).status)
  )

layer(Layers)("TwilioCallsRepo", (it) => {
  it.effect("reserves a key once: a second reserve gets the existing record and must not send a request", () =>
    Effect.gen(function*() {
      const repo = yield* TwilioCallsRepo
      const { key, result } = yield* reserveNew
      assert.isTrue(result.inserted)
      assert.strictEqual(result.record.status, "requesting")
      assert.strictEqual(result.record.requestedAt, NOW)
      const again = yield* repo.reserve({
        idempotencyKey: key,
        callId: CallId.make("other"),
        accountSid: "AC123",
        fromNumber: "+1",
        toNumber: "+2"
      }, NOW + 5)
      assert.isFalse(again.inserted)
      assert.strictEqual(again.record.callId, result.record.callId)
      assert.strictEqual(again.record.requestedAt, NOW)
    }))

  it.effect("concurrent reserves of one key: exactly one owns the request", () =>
    Effect.gen(function*() {
      const repo = yield* TwilioCallsRepo
      const key = `task_${++serial}`
      const results = yield* Effect.forEach(
        Array.from({ length: 8 }, (_, i) => i),
        (i) =>
          repo.reserve(
            { idempotencyKey: key, callId: CallId.make(`c${i}`), accountSid: "AC1", fromNumber: "+1", toNumber: "+2" },
            NOW
          ),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(results.filter((r) => r.inserted).length, 1)
      assert.strictEqual(new Set(results.map((r) => r.record.callId)).size, 1)
    }))

  it.effect("callbacks move the record forward only; a late or replayed one changes nothing", () =>
    Effect.gen(function*() {
      const repo = yield* TwilioCallsRepo
      const { key } = yield* reserveNew
      assert.strictEqual(yield* repo.attachSid(key, "CA1", "queued", NOW + 1), "applied")
      assert.strictEqual(yield* repo.applyStatus(key, { callSid: "CA1", status: "ringing" }, NOW + 2), "applied")
      const ended = {
        callSid: "CA1",
        status: "completed" as const,
        answeredBy: "human",
        startTimestamp: NOW + 3,
        endTimestamp: NOW + 63_000,
        durationS: 60
      }
      assert.strictEqual(yield* repo.applyStatus(key, ended, NOW + 4), "applied")
      // out of order: in-progress after completed
      assert.strictEqual(yield* repo.applyStatus(key, { callSid: "CA1", status: "in-progress" }, NOW + 5), "stale")
      // replayed
      assert.strictEqual(yield* repo.applyStatus(key, ended, NOW + 6), "stale")
      // another terminal status after the end
      assert.strictEqual(yield* repo.applyStatus(key, { callSid: "CA1", status: "failed" }, NOW + 7), "stale")
      const record = Option.getOrThrow(yield* repo.find(key))
      assert.strictEqual(record.status, "completed")
      assert.strictEqual(record.answeredBy, "human")
      assert.strictEqual(record.durationS, 60)
      assert.strictEqual(record.endTimestamp, NOW + 63_000)
      assert.strictEqual(record.updatedAt, NOW + 4)
    }))

  it.effect("a callback that arrives before the create response attaches the SID; another SID is unknown", () =>
    Effect.gen(function*() {
      const repo = yield* TwilioCallsRepo
      const { key } = yield* reserveNew
      assert.strictEqual(yield* repo.applyStatus(key, { callSid: "CA2", status: "ringing" }, NOW + 1), "applied")
      // the create response comes after: its status (queued) is behind the record's
      assert.strictEqual(yield* repo.attachSid(key, "CA2", "queued", NOW + 2), "stale")
      assert.strictEqual(yield* statusOf(key), "ringing")
      assert.strictEqual(yield* repo.applyStatus(key, { callSid: "CA_other", status: "completed" }, NOW + 3), "unknown")
      assert.strictEqual(
        yield* repo.applyStatus("no_such_key", { callSid: "CA2", status: "completed" }, NOW),
        "unknown"
      )
      assert.strictEqual(yield* statusOf(key), "ringing")
    }))

  it.effect("a rejected request ends the record; release deletes only a record still requesting", () =>
    Effect.gen(function*() {
      const repo = yield* TwilioCallsRepo
      const rejected = yield* reserveNew
      yield* repo.markRejected(rejected.key, "21211 invalid 'To' number", NOW + 1)
      const record = Option.getOrThrow(yield* repo.find(rejected.key))
      assert.strictEqual(record.status, "rejected")
      assert.strictEqual(record.rejection, "21211 invalid 'To' number")
      assert.isFalse(yield* repo.release(rejected.key))
      assert.strictEqual(yield* repo.applyStatus(rejected.key, { callSid: "CA3", status: "ringing" }, NOW), "stale")

      const placed = yield* reserveNew
      yield* repo.attachSid(placed.key, "CA4", "queued", NOW + 1)
      assert.isFalse(yield* repo.release(placed.key))
      assert.isTrue(Option.isSome(yield* repo.find(placed.key)))

      const crashed = yield* reserveNew
      const unresolved = yield* repo.unresolved(NOW + 1, 1000)
      assert.includeMembers(unresolved.map((r) => r.idempotencyKey), [crashed.key])
      assert.notInclude(unresolved.map((r) => r.idempotencyKey), placed.key)
      assert.strictEqual((yield* repo.unresolved(NOW, 1000)).length, 0, "only records requested before the bound")
      assert.isTrue(yield* repo.release(crashed.key))
      assert.isTrue(Option.isNone(yield* repo.find(crashed.key)))
    }))

  it.effect("a change notifies the channel with the key; a stale update does not", () =>
    Effect.scoped(Effect.gen(function*() {
      const pg = yield* PgClient.PgClient
      const repo = yield* TwilioCallsRepo
      const { key } = yield* reserveNew
      const notifications = yield* pg.listen(CHANNEL)
      yield* repo.attachSid(key, "CA5", "queued", NOW)
      yield* repo.attachSid(key, "CA5", "queued", NOW) // stale: no notification
      yield* repo.applyStatus(key, { callSid: "CA5", status: "busy" }, NOW)
      const first = yield* Queue.take(notifications)
      const second = yield* Queue.take(notifications)
      assert.deepStrictEqual([first.payload, second.payload], [key, key])
      // nothing else queued: the stale update sent nothing (NOTIFYs are delivered in commit order, and both
      // changes were committed before this check)
      assert.strictEqual(yield* Queue.size(notifications), 0)
    })))

  it.effect("attachedElsewhere: the SIDs attached to other keys, never the key's own or unattached ones", () =>
    Effect.gen(function*() {
      const repo = yield* TwilioCallsRepo
      const mine = yield* reserveNew
      const other = yield* reserveNew
      yield* repo.attachSid(mine.key, "CA_attached_mine", "queued", NOW)
      yield* repo.attachSid(other.key, "CA_attached_other", "queued", NOW)
      const taken = yield* repo.attachedElsewhere(mine.key, ["CA_attached_mine", "CA_attached_other", "CA_free"])
      assert.deepStrictEqual([...taken], ["CA_attached_other"])
      assert.strictEqual((yield* repo.attachedElsewhere(mine.key, [])).size, 0)
    }))
})
