// The console's API client (issue 33): the key only in the Authorization header, the API's error message shown as it
// is, a 401 back to the key prompt, and a 429/503 waited out for Retry-After seconds (RFC 9110 §10.2.3: seconds or
// an HTTP date) with the user told, a bounded number of times.
import { assert, describe, it } from "@effect/vitest"
import { ApiError, type Backoff, errorMessage, makeClient, MAX_RETRIES, retryAfterSeconds } from "../src/api/Client.ts"

interface Sent {
  readonly url: string
  readonly init: RequestInit
}

const scripted = (answers: Array<() => Response>) => {
  const sent: Array<Sent> = []
  const fetch = (async (url: string, init: RequestInit) => {
    sent.push({ url, init })
    const next = answers.shift()
    if (next === undefined) throw new Error("no more answers scripted")
    return next()
  }) as unknown as typeof globalThis.fetch
  return { sent, fetch }
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => () =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } })

const setup = (answers: Array<() => Response>, key: () => string | undefined = () => "key_abc") => {
  const { fetch, sent } = scripted(answers)
  const waits: Array<number> = []
  const backoffs: Array<Backoff | undefined> = []
  const unauthorized: Array<string> = []
  const client = makeClient({
    key,
    fetch,
    sleep: async (ms) => void waits.push(ms),
    onBackoff: (b) => void backoffs.push(b),
    onUnauthorized: (m) => void unauthorized.push(m)
  })
  return { client, sent, waits, backoffs, unauthorized }
}

describe("Client", () => {
  it("sends the key in the Authorization header only, never in the URL", async () => {
    const t = setup([json(200, { ok: 1 })])
    const answer = await t.client.post("/list-batch-calls", { limit: 5 })
    assert.deepStrictEqual(answer, { ok: 1 })
    assert.strictEqual(t.sent[0]?.url, "/list-batch-calls")
    const headers = t.sent[0]?.init.headers as Record<string, string>
    assert.strictEqual(headers["authorization"], "Bearer key_abc")
    assert.strictEqual(headers["content-type"], "application/json")
    assert.strictEqual(t.sent[0]?.init.body, JSON.stringify({ limit: 5 }))
    assert.notInclude(t.sent[0]?.url ?? "", "key_abc")
  })

  it("throws the API's own message for an error answer", async () => {
    const t = setup([json(400, { status: "error", message: "limit must be an integer from 1 to 100" })])
    const error = await t.client.post("/list-batch-calls", { limit: 0 }).catch((e: unknown) => e)
    assert.instanceOf(error, ApiError)
    assert.strictEqual((error as ApiError).status, 400)
    assert.strictEqual((error as ApiError).message, "limit must be an integer from 1 to 100")
    assert.deepStrictEqual(t.unauthorized, [])
  })

  it("on 401 tells the page, which returns to the key prompt, with the API's message", async () => {
    const t = setup([json(401, { status: "error", message: "API key invalid" })])
    const error = await t.client.get("/get-batch-call/b").catch((e: unknown) => e)
    assert.strictEqual((error as ApiError).status, 401)
    assert.deepStrictEqual(t.unauthorized, ["API key invalid"])
  })

  it("waits Retry-After seconds on 429 and 503, says so, and tries again", async () => {
    const t = setup([
      json(429, { status: "error", message: "rate limited" }, { "retry-after": "7" }),
      json(503, { status: "error", message: "busy" }, { "retry-after": "1" }),
      json(200, { done: true })
    ])
    assert.deepStrictEqual(await t.client.get("/v2/get-call/c"), { done: true })
    assert.deepStrictEqual(t.waits, [7000, 1000])
    assert.deepStrictEqual(t.backoffs, [
      { status: 429, seconds: 7, attempt: 1, path: "/v2/get-call/c" },
      { status: 503, seconds: 1, attempt: 2, path: "/v2/get-call/c" },
      undefined
    ])
  })

  it(`gives up after ${MAX_RETRIES} retries with the last message`, async () => {
    const t = setup(Array.from({ length: MAX_RETRIES + 1 }, () => json(429, { status: "error", message: "slow down" })))
    const error = await t.client.get("/x").catch((e: unknown) => e)
    assert.strictEqual((error as ApiError).status, 429)
    assert.strictEqual((error as ApiError).message, "slow down")
    assert.strictEqual(t.sent.length, MAX_RETRIES + 1)
    // no Retry-After: 1, 2, 4, 8, 16 s
    assert.deepStrictEqual(t.waits, [1000, 2000, 4000, 8000, 16000])
  })

  it("asks for a key before sending anything when none is stored", async () => {
    const t = setup([], () => undefined)
    const error = await t.client.get("/x").catch((e: unknown) => e)
    assert.strictEqual((error as ApiError).status, 401)
    assert.strictEqual(t.sent.length, 0)
    assert.strictEqual(t.unauthorized.length, 1)
  })
})

describe("retryAfterSeconds", () => {
  const now = Date.parse("2026-12-06T10:00:00Z")
  it("reads delay-seconds", () => assert.strictEqual(retryAfterSeconds("5", 1, now), 5))
  it("reads an HTTP date", () => assert.strictEqual(retryAfterSeconds("Sun, 06 Dec 2026 10:00:12 GMT", 1, now), 12))
  it("falls back to 1, 2, 4 s when absent or unreadable", () => {
    assert.strictEqual(retryAfterSeconds(null, 1, now), 1)
    assert.strictEqual(retryAfterSeconds("soon", 3, now), 4)
  })
  it("waits at least 1 s and at most 60 s", () => {
    assert.strictEqual(retryAfterSeconds("0", 1, now), 1)
    assert.strictEqual(retryAfterSeconds("3600", 1, now), 60)
  })
})

describe("errorMessage", () => {
  it("is the API's message", () =>
    assert.strictEqual(errorMessage(404, "{\"status\":\"error\",\"message\":\"nope\"}"), "nope"))
  it("is the status and the body's start when the body is not the API's", () =>
    assert.strictEqual(errorMessage(502, "<html>Bad gateway</html>"), "HTTP 502: <html>Bad gateway</html>"))
})
