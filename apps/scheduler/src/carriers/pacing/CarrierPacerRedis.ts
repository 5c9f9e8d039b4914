/**
 * Carrier pacing shared through Redis, when `REDIS_URL` is set (decision 0610): the same schedule as in PostgreSQL
 * (SlotPacer), one hash per account (`svc:carrier-pacing:{account}`, fields `next_at` and `paused_until` in epoch
 * microseconds), each slot taken by one Lua script, which Redis runs atomically, so workers on any number of
 * connections never take overlapping slots. The worker's `Clock` time is passed in; Redis's own clock is never read.
 *
 * An account's hash expires a minute after its last slot and pause have passed: an idle account takes its next
 * slot at once either way, so nothing is lost when it goes.
 */
import { Duration, Effect, Layer } from "effect"
import { Redis } from "effect/persistence"
import { CarrierPacer } from "./CarrierPacer.ts"
import type * as CarrierPacingConfig from "./CarrierPacingConfig.ts"
import * as SlotPacer from "./SlotPacer.ts"

// The client reconnects in the background; with its offline queue off a command fails at once while the
// connection is down, and this bounds a command that was sent but never answered.
const TIMEOUT = Duration.seconds(1)

const key = (account: string) => `svc:carrier-pacing:${account}`

// Lua numbers are doubles: epoch microseconds (~1.8e15) are exact below 2^53 (~9e15). "%.0f" writes them in full
// (tostring would round them to 14 digits).
const takeScript = Redis.script(
  (account: string, nowUs: number, intervalUs: number) => [key(account), nowUs, intervalUs],
  {
    numberOfKeys: 1,
    lua: `
local state = redis.call("HMGET", KEYS[1], "next_at", "paused_until")
local now = tonumber(ARGV[1])
local paused = tonumber(state[2]) or 0
local slot = math.max(tonumber(state[1]) or 0, now, paused)
local next_at = slot + tonumber(ARGV[2])
redis.call("HSET", KEYS[1], "next_at", string.format("%.0f", next_at))
redis.call("PEXPIRE", KEYS[1], math.ceil(math.max(next_at - now, paused - now, 0) / 1000) + 60000)
return string.format("%.0f", slot)
`
  }
).withReturnType<string>()

const pauseScript = Redis.script(
  (account: string, nowUs: number, untilUs: number) => [key(account), nowUs, untilUs],
  {
    numberOfKeys: 1,
    lua: `
local state = redis.call("HMGET", KEYS[1], "next_at", "paused_until")
local paused = math.max(tonumber(state[2]) or 0, tonumber(ARGV[2]))
redis.call("HSET", KEYS[1], "paused_until", string.format("%.0f", paused))
local last = math.max(tonumber(state[1]) or 0, paused)
redis.call("PEXPIRE", KEYS[1], math.ceil(math.max(last - tonumber(ARGV[1]), 0) / 1000) + 60000)
return 1
`
  }
).withReturnType<number>()

/**
 * The schedule's store in Redis.
 *
 * @category constructors
 */
export const store: Effect.Effect<SlotPacer.SlotStore, never, Redis.Redis> = Effect.gen(function*() {
  const redis = yield* Redis.Redis
  const take = redis.eval(takeScript)
  const pause = redis.eval(pauseScript)
  const guard = (account: string) => <A, E>(self: Effect.Effect<A, E>) =>
    self.pipe(Effect.timeout(TIMEOUT), Effect.mapError(SlotPacer.unavailable("Redis", account)))
  return {
    take: (account, nowUs, intervalUs) => take(account, nowUs, intervalUs).pipe(Effect.map(Number), guard(account)),
    pause: (account, nowUs, untilUs) => pause(account, nowUs, untilUs).pipe(Effect.asVoid, guard(account)),
    pausedUntil: (account) =>
      redis.send<string | null>("HGET", key(account), "paused_until").pipe(
        Effect.map((value) => (value === null ? 0 : Number(value))),
        guard(account)
      )
  }
})

/**
 * The pacer with its slot starts visible (tests, benchmark).
 *
 * @category constructors
 */
export const make = (settings: CarrierPacingConfig.CarrierPacingSettings) =>
  Effect.map(store, (s) => SlotPacer.make(s, settings))

/**
 * The port over Redis.
 *
 * @category layers
 */
export const layer = (
  settings: CarrierPacingConfig.CarrierPacingSettings
): Layer.Layer<CarrierPacer, never, Redis.Redis> =>
  Layer.effect(CarrierPacer, Effect.map(make(settings), SlotPacer.toPort))
