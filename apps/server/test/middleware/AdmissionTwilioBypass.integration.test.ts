// Twilio's status callbacks pass admission control (decision 0546: "the carrier's status callbacks
// (`/carrier/twilio/status`: Twilio does not retry a refused one) always pass"). Through the whole server stack on
// a real PostgreSQL: the gate's only slot is held by an API request whose body never ends, API requests are shed
// with 503, and a signed callback is still applied and answered as docs/api.md ("Carrier callbacks") says: 204.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { publicBaseUrl, statusCallbackUrl } from "@svc/domain/carrier/TwilioStatusCallbackUrl.ts"
import { CallId } from "@svc/domain/models/Ids.ts"
import { TwilioCallsRepo } from "@svc/store/carriers/twilio/TwilioCallsRepo.ts"
import { Effect, Option, Result } from "effect"
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks.js"
import * as TestServer from "../support/TestServer.ts"

const TOKEN = "0123456789abcdef0123456789abcdef"
const PUBLIC_URL = "https://svc.example.com"
const BASE = Result.getOrThrow(publicBaseUrl(PUBLIC_URL))
const ACCOUNT = "AC0123456789abcdef0123456789abcdef"
const SID = "CA0123456789abcdef0123456789abcdef"
const KEY = "task-admission-bypass"
const FORM = "application/x-www-form-urlencoded"

let server: TestServer.TestServer
let apiKey: string

beforeAll(async () => {
  // one request at a time, none waiting: a second API request is refused at once
  server = await TestServer.start({
    TWILIO_AUTH_TOKEN: TOKEN,
    SVC_PUBLIC_URL: PUBLIC_URL,
    SVC_HTTP_MAX_IN_FLIGHT: "1",
    SVC_HTTP_MAX_QUEUED: "0",
    SVC_HTTP_QUEUE_TIMEOUT_MS: "0"
  })
  apiKey = (await server.org()).key
  // the record the scheduler's adapter reserves before it asks Twilio for the call
  await server.run(
    Effect.flatMap(TwilioCallsRepo, (calls) =>
      calls.reserve(
        {
          idempotencyKey: KEY,
          callId: CallId.make("call-admission-bypass"),
          accountSid: ACCOUNT,
          fromNumber: "+14155550100",
          toNumber: "+14155550101"
        },
        0
      )).pipe(Effect.provide(TwilioCallsRepo.layer))
  )
})
afterAll(() => server.close())

interface Held {
  readonly response: Promise<Response>
  readonly release: () => void
  answered: boolean
}

/** An API request that holds the gate's slot, once admitted, until `release` is called (its body never ends). */
const holdTheSlot = (): Held => {
  let release: () => void = () => {}
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode("{"))
      release = () => {
        controller.enqueue(new TextEncoder().encode("}"))
        controller.close()
      }
    }
  })
  const held: Held = {
    response: server.fetch(`http://svc.test/list-contacts`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body,
      duplex: "half"
    } as RequestInit),
    release: () => release(),
    answered: false
  }
  void held.response.finally(() => held.answered = true)
  return held
}

const apiProbe = () => server.request("GET", "/get-backfill-contact-job-status", { key: apiKey })

/**
 * Holds the slot and waits (bounded) until an API request is refused. A probe that got in first leaves the held
 * request refused instead; then the slot is held again.
 */
const holdUntilShedding = async (): Promise<Held> => {
  const seen: Array<number> = []
  const deadline = Date.now() + 20_000
  let held = holdTheSlot()
  for (;;) {
    const status = (await apiProbe()).status
    seen.push(status)
    if (status === 503 && !held.answered) return held
    if (held.answered) held = holdTheSlot()
    if (Date.now() > deadline) assert.fail(`no API request was refused in 20 s; statuses seen: ${seen.join(", ")}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const callback = (params: Record<string, string>) => {
  const path = statusCallbackUrl(BASE, KEY).slice(BASE.length)
  return server.request("POST", path, {
    key: null,
    raw: new URLSearchParams(params).toString(),
    headers: {
      "content-type": FORM,
      "x-twilio-signature": getExpectedTwilioSignature(TOKEN, BASE + path, params)
    }
  })
}

describe("admission control and Twilio's status callbacks", () => {
  it("applies a signed callback while every API request is shed with 503", async () => {
    const held = await holdUntilShedding()
    try {
      const refused = await apiProbe()
      assert.strictEqual(refused.status, 503, "the gate is full: API requests are refused")
      assert.strictEqual(refused.headers.get("retry-after"), "1")

      const answer = await callback({
        AccountSid: ACCOUNT,
        ApiVersion: "2010-04-01",
        CallSid: SID,
        CallStatus: "ringing",
        Direction: "outbound-api",
        From: "+14155550100",
        To: "+14155550101",
        SequenceNumber: "0"
      })
      assert.strictEqual(answer.status, 204, answer.text)
      const record = await server.run(
        Effect.flatMap(TwilioCallsRepo, (calls) => calls.find(KEY)).pipe(Effect.provide(TwilioCallsRepo.layer))
      )
      assert.strictEqual(Option.getOrUndefined(record)?.status, "ringing", "the callback was applied")
      assert.strictEqual(Option.getOrUndefined(record)?.callSid, SID)

      // still shedding: the callback went past a full gate, it did not find a free slot
      assert.strictEqual((await apiProbe()).status, 503)
    } finally {
      held.release()
    }
    assert.strictEqual((await held.response).status, 200, "the held request completes once its body ends")
    assert.strictEqual((await apiProbe()).status, 200, "the slot came back")
  })
})
