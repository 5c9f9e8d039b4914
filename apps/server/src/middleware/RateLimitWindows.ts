/**
 * Request counts per key in fixed windows, the store behind the per-key rate limit
 * (Authorization.ts; docs/decisions/0105-input-rules.md, "Rate limits").
 *
 * - Windows are aligned to the epoch: with a 60 s window, one window is [12:00:00, 12:01:00). Every
 *   request in a window sees the same end, so `RateLimit-Reset` counts down and never grows, and a
 *   new window starts from zero whatever happened in the last one.
 * - Effect's `RateLimiter` "fixed-window" is not this: its store adds `window / limit` to the key's
 *   time to live on every request, so the reset it reports grew with each request (decision 0105).
 * - In memory by default; in Redis with `REDIS_URL`, so that replicas count together. Redis keys carry
 *   the window's start and expire a few seconds after its end; replicas must agree on the time (NTP).
 * - Time comes from `Clock`, so tests pin it with `TestClock`.
 * - Redis gets 1 s to answer; after that (or on an error) the store fails and Authorization.ts lets
 *   the request through uncounted.
 */
import { NodeRedis } from "@effect/platform-node"
import { Clock, Config, Context, Data, Duration, Effect, Layer, Option } from "effect"
import { Redis } from "effect/persistence"

/**
 * One request counted.
 *
 * @category models
 */
export interface WindowCount {
  /** Requests of the key in the current window, this one included (it keeps counting past the limit). */
  readonly count: number
  /** Epoch milliseconds at which the window ends and the count starts again from zero. */
  readonly resetsAt: number
}

/**
 * The store could not count (Redis unreachable).
 *
 * @category errors
 */
export class RateLimitStoreError extends Data.TaggedError("RateLimitStoreError")<{ readonly cause: unknown }> {}

/**
 * The window containing `now`: `[start, end)`, aligned to the epoch.
 *
 * @category combinators
 */
export const windowAt = (now: number, windowMillis: number): { readonly start: number; readonly end: number } => {
  const start = now - (now % windowMillis)
  return { start, end: start + windowMillis }
}

// Redis keys outlive their window by this much, for replicas whose clocks run a little behind.
const REDIS_GRACE_MILLIS = 5_000

// Longest wait for Redis before a request passes uncounted.
const REDIS_TIMEOUT = Duration.seconds(1)

// One round trip: count the request, and give a new window's key its expiry.
const hitScript = Redis.script(
  (key: string, ttlMillis: number) => [key, ttlMillis],
  {
    numberOfKeys: 1,
    lua: `
local count = redis.call("INCR", KEYS[1])
if count == 1 then redis.call("PEXPIRE", KEYS[1], ARGV[1]) end
return count
`
  }
).withReturnType<number>()

/**
 * Counts requests of a key in the current fixed window.
 *
 * @category services
 */
export class RateLimitWindows extends Context.Service<RateLimitWindows, {
  readonly hit: (key: string, windowMillis: number) => Effect.Effect<WindowCount, RateLimitStoreError>
}>()("@svc/server/http/RateLimitWindows") {
  /** This process's memory: one entry per key, entries of ended windows swept once a window. */
  static readonly layerMemory: Layer.Layer<RateLimitWindows> = Layer.sync(this, () => {
    const counters = new Map<string, { end: number; count: number }>()
    let sweepAt = 0
    return RateLimitWindows.of({
      hit: (key, windowMillis) =>
        Effect.clockWith((clock) =>
          Effect.sync(() => {
            const now = clock.currentTimeMillisUnsafe()
            const { end } = windowAt(now, windowMillis)
            if (now >= sweepAt) {
              for (const [k, counter] of counters) if (counter.end <= now) counters.delete(k)
              sweepAt = end
            }
            const counter = counters.get(key)
            if (counter === undefined || counter.end !== end) {
              counters.set(key, { end, count: 1 })
              return { count: 1, resetsAt: end }
            }
            counter.count += 1
            return { count: counter.count, resetsAt: end }
          })
        )
    })
  })

  /** Redis (`Redis.Redis`), shared by every replica: one key per API key and window. */
  static readonly layerRedis: Layer.Layer<RateLimitWindows, never, Redis.Redis> = Layer.effect(
    this,
    Effect.gen(function*() {
      const redis = yield* Redis.Redis
      const hit = redis.eval(hitScript)
      return RateLimitWindows.of({
        hit: (key, windowMillis) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            const { end, start } = windowAt(now, windowMillis)
            const count = yield* hit(`svc:ratelimit:${key}:${start}`, end - now + REDIS_GRACE_MILLIS).pipe(
              // the client queues commands while it reconnects: without a bound a Redis outage hangs requests
              Effect.timeout(REDIS_TIMEOUT),
              Effect.mapError((cause) => new RateLimitStoreError({ cause }))
            )
            return { count: Number(count), resetsAt: end }
          })
      })
    })
  )

  /** Memory, or Redis when `REDIS_URL` is set (design: rate limits). */
  static readonly layer: Layer.Layer<RateLimitWindows, Config.ConfigError | Redis.RedisError> = Layer.unwrap(
    Effect.map(Config.option(Config.String("REDIS_URL")), (url) =>
      Option.isNone(url)
        ? RateLimitWindows.layerMemory
        : RateLimitWindows.layerRedis.pipe(
          // Commands fail at once while the connection is down instead of queueing until it returns: a
          // queued command would hold a request, and shutdown waits for queued commands.
          Layer.provide(NodeRedis.layer({ url: url.value, disableOfflineQueue: true }))
        ))
  )
}
