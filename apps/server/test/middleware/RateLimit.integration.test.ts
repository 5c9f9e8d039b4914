// The per-key rate limit in this process's memory, on a pinned clock: one fixed window's count and
// reset, the 429 and its Retry-After, and the next window (support/RateLimitScenario.ts).
import { afterAll, beforeAll, describe, it } from "@effect/vitest"
import { fixedWindowOfThreePerMinute } from "../support/RateLimitScenario.ts"
import * as TestServer from "../support/TestServer.ts"

let server: TestServer.TestServer

beforeAll(async () => {
  server = await TestServer.start({ SVC_RATE_LIMIT: "3", SVC_RATE_LIMIT_WINDOW_SECONDS: "60" })
})
afterAll(() => server.close())

describe("rate limits in memory", () => {
  it("count in fixed windows: RateLimit-Reset is the seconds to the window's end, the same for all of its requests", async () => {
    const { key } = await server.org()
    await fixedWindowOfThreePerMinute([server], key)
  })
})
