/**
 * The bearer-key check and the per-key rate limit, in front of every endpoint.
 *
 * - A missing, malformed or unknown key is a 401. A known key puts its org into `CurrentOrg`.
 *   Lookups are cached for 30 s (a revoked key stops working within that), so a busy key costs one
 *   hash, not a query, per request.
 * - Rate limit: `SVC_RATE_LIMIT` requests (default 1,200) per `SVC_RATE_LIMIT_WINDOW_SECONDS`
 *   (default 60) per key, in fixed windows aligned to the clock (RateLimitWindows.ts). Every
 *   answer carries `RateLimit-Limit`, `-Remaining` and `-Reset`, the seconds until the window ends:
 *   the same for every request of a window, counting down. The 429 carries `Retry-After` equal to
 *   that reset. create-batch-call is never limited: the spec lists no 429 for it. Counters in
 *   memory, or in Redis with `REDIS_URL`. When Redis cannot count, requests pass unlimited and a
 *   warning is logged at most once a minute: a rate limit protects the service, it is not worth an
 *   outage of its own.
 */
import { Authorization, CurrentOrg } from "@svc/api/Authorization.ts"
import * as ErrorBody from "@svc/api/ErrorBody.ts"
import { unauthorized } from "@svc/api/Errors.ts"
import { ApiKeys } from "@svc/store/orgs/ApiKeys.ts"
import { Cache, Clock, Config, Duration, Effect, Layer, Option, Redacted } from "effect"
import { HttpServerResponse } from "effect/http"
import { RateLimitWindows } from "./RateLimitWindows.ts"

const KEY_SHAPE = /^[\w-]{8,200}$/

/** Endpoints the spec does not allow to answer 429. */
const UNLIMITED = new Set(["createBatchCall"])

/** @category models */
export const RateLimitConfig = Config.all({
  limit: Config.withDefault(Config.Int("SVC_RATE_LIMIT"), 1200),
  windowSeconds: Config.withDefault(Config.Int("SVC_RATE_LIMIT_WINDOW_SECONDS"), 60)
})

/** Whole seconds until `at`, at least 1: a header of 0 would invite an immediate retry into the same window. */
const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000))

const WARN_EVERY_MILLIS = 60_000

/** @category layers */
export const layer = Layer.effect(
  Authorization,
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const windows = yield* RateLimitWindows
    const { limit, windowSeconds } = yield* RateLimitConfig
    const windowMillis = windowSeconds * 1000
    const cache = yield* Cache.make({
      capacity: 10_000,
      timeToLive: Duration.seconds(30),
      lookup: (key: string) => keys.lookup(key)
    })
    let warnedAt = Number.NEGATIVE_INFINITY
    return Authorization.of({
      bearer: Effect.fn("Authorization.bearer")(function*(httpEffect, { credential, endpoint }) {
        const key = Redacted.value(credential).trim()
        if (key.length === 0) {
          return yield* unauthorized("API key missing: send the header Authorization: Bearer <API_KEY>")
        }
        if (!KEY_SHAPE.test(key)) return yield* unauthorized("API key malformed: it is not a key this service issues")
        const owner = yield* Cache.get(cache, key)
        if (Option.isNone(owner)) return yield* unauthorized("API key invalid: it is unknown or revoked")
        const handled = Effect.provideService(httpEffect, CurrentOrg, owner.value)
        if (UNLIMITED.has(endpoint.identifier)) return yield* handled
        const counted = yield* windows.hit(`api:${owner.value.apiKeyId}`, windowMillis).pipe(Effect.result)
        const now = yield* Clock.currentTimeMillis
        if (counted._tag === "Failure") {
          if (now - warnedAt >= WARN_EVERY_MILLIS) {
            warnedAt = now
            yield* Effect.logWarning("rate limit store unavailable; requests pass unlimited", counted.failure.cause)
          }
          return yield* handled
        }
        const { count, resetsAt } = counted.success
        const reset = String(secondsUntil(resetsAt, now))
        if (count > limit) {
          return HttpServerResponse.jsonUnsafe(
            ErrorBody.make(`rate limit of ${limit} requests per ${windowSeconds} s exceeded; retry in ${reset} s`),
            {
              status: 429,
              headers: {
                "retry-after": reset,
                "ratelimit-limit": String(limit),
                "ratelimit-remaining": "0",
                "ratelimit-reset": reset
              }
            }
          )
        }
        const response = yield* handled
        return HttpServerResponse.setHeaders(response, {
          "ratelimit-limit": String(limit),
          "ratelimit-remaining": String(limit - count),
          "ratelimit-reset": reset
        })
      })
    })
  })
)
