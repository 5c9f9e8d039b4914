import { assert, describe, it } from "@effect/vitest"
import { CallId, OrgId } from "@svc/domain/models/Ids.ts"
import { ConfigProvider, Effect } from "effect"
import * as WebhookConfig from "../../src/webhooks/WebhookConfig.ts"
import * as WebhookWorker from "../../src/webhooks/WebhookWorker.ts"

const settings = WebhookConfig.defaults()
const event = { eventSeq: "1", attempts: 1, firstAttemptAt: 0 }
const answer = (status: number | undefined, error?: string) => ({ status, error, refused: false })

describe("WebhookWorker.decide", () => {
  it("2xx delivers, 410 stops, anything else is retried", () => {
    for (const status of [200, 201, 204, 299]) {
      assert.strictEqual(WebhookWorker.decide(settings, event, answer(status), 10, 0.5, 1).state, "delivered")
    }
    assert.strictEqual(WebhookWorker.decide(settings, event, answer(410), 10, 0.5, 1).state, "gone")
    for (const status of [undefined, 199, 301, 302, 400, 404, 409, 429, 500, 503]) {
      assert.strictEqual(WebhookWorker.decide(settings, event, answer(status, "x"), 10, 0.5, 1).state, "pending")
    }
  })

  it("doubles the delay per attempt up to the cap, using 50-100 % of it", () => {
    const delay = (attempts: number, random: number) =>
      WebhookWorker.decide(settings, { ...event, attempts }, answer(500), 0, random, 1).dueAt
    assert.strictEqual(delay(1, 0), 500)
    assert.strictEqual(delay(1, 0.999999), 1000)
    assert.strictEqual(delay(2, 0), 1000)
    assert.strictEqual(delay(5, 0), 8000)
    // capped at 1 h from attempt 13 (2^12 s > 1 h)
    assert.strictEqual(delay(13, 0), 1_800_000)
    assert.isAtMost(delay(200, 0.999999), 3_600_000)
    assert.isAtLeast(delay(200, 0.999999), 3_599_990)
  })

  it("gives up when the next attempt would start more than 24 h after the first", () => {
    const day = 24 * 3_600_000
    // next attempt at exactly 24 h: still tried
    const at = (now: number) =>
      WebhookWorker.decide(settings, { ...event, attempts: 100, firstAttemptAt: 0 }, answer(500), now, 0, 1)
    assert.strictEqual(at(day - 1_800_000).state, "pending")
    assert.strictEqual(at(day - 1_800_000 + 1).state, "failed")
  })
})

describe("WebhookWorker.headers", () => {
  const claimed = {
    eventSeq: "1",
    eventId: "evt_1",
    orgId: OrgId.make("o"),
    callId: CallId.make("c"),
    event: "call_ended",
    url: "https://x.example",
    timeoutMs: 1000,
    body: "{}",
    attempts: 1,
    firstAttemptAt: 0,
    secret: "s1",
    nextSecret: undefined as string | undefined
  }

  it("signs with the current secret, and with the next one only during a rotation", () => {
    const plain = WebhookWorker.headers(claimed, 1234)
    assert.match(plain["x-svc-signature"]!, /^v=1234,d=[0-9a-f]{64}$/)
    assert.isUndefined(plain["x-svc-signature-next"])
    assert.strictEqual(plain["x-svc-event-id"], "evt_1")
    const rotating = WebhookWorker.headers({ ...claimed, nextSecret: "s2" }, 1234)
    assert.notStrictEqual(rotating["x-svc-signature-next"], rotating["x-svc-signature"])
  })
})

describe("WebhookConfig.load", () => {
  const load = (env: Record<string, string>) =>
    WebhookConfig.load.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env))))

  it.effect("defaults, and SVC_WEBHOOK_ALLOW_PRIVATE", () =>
    Effect.gen(function*() {
      const none = yield* load({})
      assert.isFalse(none.allowPrivate)
      assert.strictEqual(none.perOrg, 64)
      assert.isTrue((yield* load({ SVC_WEBHOOK_ALLOW_PRIVATE: "true" })).allowPrivate)
    }))

  it.effect("rejects a concurrency or per-org cap below 1, naming the variable", () =>
    Effect.gen(function*() {
      const bad = yield* Effect.flip(load({ SVC_WEBHOOK_PER_ORG: "0" }))
      assert.match(String((bad as { message?: string }).message), /SVC_WEBHOOK_PER_ORG must be at least 1/)
      const worse = yield* Effect.flip(load({ SVC_WEBHOOK_CONCURRENCY: "0" }))
      assert.match(String((worse as { message?: string }).message), /SVC_WEBHOOK_CONCURRENCY/)
    }))

  it.effect("SVC_WEBHOOK_RETENTION_DAYS: 7 by default, fractions allowed, under a day or not a number refused", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* load({})).retentionMs, 7 * 86_400_000)
      assert.strictEqual((yield* load({ SVC_WEBHOOK_RETENTION_DAYS: "1.5" })).retentionMs, 1.5 * 86_400_000)
      for (const value of ["0.5", "0", "-3", "Infinity"]) {
        const bad = yield* Effect.flip(load({ SVC_WEBHOOK_RETENTION_DAYS: value }))
        assert.match(String((bad as { message?: string }).message), /SVC_WEBHOOK_RETENTION_DAYS .*at least 1/, value)
      }
      assert.isDefined(yield* Effect.flip(load({ SVC_WEBHOOK_RETENTION_DAYS: "week" })))
    }))
})
