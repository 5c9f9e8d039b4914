/**
 * What a fixed window means on the wire, whichever store counts (memory, or Redis shared by
 * replicas): run through real servers configured with SVC_RATE_LIMIT=3 and a 60 s window, on a
 * `TestClock`. Requests alternate over `servers`, so with two replicas on one Redis the count is
 * shared. Issue 16, item 7: `RateLimit-Reset` grew by window/limit on every request.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type * as TestServer from "./TestServer.ts"

// A whole minute (windows are aligned to the epoch), in this repository's lifetime.
const WINDOW_START = Date.parse("2026-11-25T12:00:00Z")

export const fixedWindowOfThreePerMinute = async (
  servers: ReadonlyArray<TestServer.TestServer>,
  key: string
): Promise<void> => {
  const clock = await Effect.runPromise(Effect.scoped(TestClock.make()))
  const at = (millis: number) => Effect.runPromise(clock.setTime(WINDOW_START + millis))
  let sent = 0
  const hit = async () => {
    const server = servers[sent++ % servers.length]!
    const response = await server.request("GET", "/get-backfill-contact-job-status", { key, clock })
    return {
      status: response.status,
      limit: response.headers.get("ratelimit-limit"),
      remaining: response.headers.get("ratelimit-remaining"),
      reset: response.headers.get("ratelimit-reset"),
      retryAfter: response.headers.get("retry-after")
    }
  }
  const ok = (remaining: number, reset: number) => ({
    status: 200,
    limit: "3",
    remaining: String(remaining),
    reset: String(reset),
    retryAfter: null
  })
  const limited = (seconds: number) => ({
    status: 429,
    limit: "3",
    remaining: "0",
    reset: String(seconds),
    retryAfter: String(seconds)
  })

  await at(10_000)
  assert.deepStrictEqual(await hit(), ok(2, 50), "first request, 10 s into the window")
  await at(15_000)
  assert.deepStrictEqual(await hit(), ok(1, 45), "5 s later: the same window end, 45 s away")
  assert.deepStrictEqual(await hit(), ok(0, 45), "same instant: the reset does not grow with the count")
  assert.deepStrictEqual(await hit(), limited(45), "over the limit: Retry-After is the reset")
  await at(59_500)
  assert.deepStrictEqual(await hit(), limited(1), "half a second before the end: 1 s, never 0")
  await at(60_000)
  assert.deepStrictEqual(await hit(), ok(2, 60), "a new window starts from zero")
  await at(61_000)
  assert.deepStrictEqual(await hit(), ok(1, 59), "and counts down again")
}
