// Twilio's status callbacks through the whole server stack on a real PostgreSQL (issue 14, "Status callbacks" and
// "Done when": unsigned or wrongly signed callbacks get 403 and change nothing; a replayed callback changes nothing
// twice; decision 0606). Callbacks are signed with the SDK's getExpectedTwilioSignature over the URL the scheduler's
// adapter gives Twilio (statusCallbackUrl under SVC_PUBLIC_URL), exactly as Twilio signs them, and sent without an
// API key. Every refusal is checked against the key's whole record, read back from PostgreSQL.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { publicBaseUrl, statusCallbackUrl } from "@svc/domain/carrier/TwilioStatusCallbackUrl.ts"
import { CallId } from "@svc/domain/models/Ids.ts"
import { TwilioCallsRepo } from "@svc/store/carriers/twilio/TwilioCallsRepo.ts"
import * as Database from "@svc/store/db/Database.ts"
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import { ConfigProvider, Context, Effect, Exit, Layer, Logger, Option, Result, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks.js"
import * as Http from "../../../src/runtime/Http.ts"
import * as TestServer from "../../support/TestServer.ts"

const TOKEN = "0123456789abcdef0123456789abcdef"
const PUBLIC_URL = "https://svc.example.com/"
const BASE = Result.getOrThrow(publicBaseUrl(PUBLIC_URL))
const ACCOUNT = "AC0123456789abcdef0123456789abcdef"
const T0 = Date.parse("2026-11-28T03:00:00Z")
const FORM = "application/x-www-form-urlencoded"

let server: TestServer.TestServer
let keys = 0
let sids = 0

beforeAll(async () => {
  // PUBLIC_URL ends with a slash: the server spells the base as the adapter does (without it)
  server = await TestServer.start({ TWILIO_AUTH_TOKEN: TOKEN, SVC_PUBLIC_URL: PUBLIC_URL })
})
afterAll(() => server.close())

const withCalls = <A>(f: (calls: TwilioCallsRepo["Service"]) => Effect.Effect<A, unknown>) =>
  server.run(
    Effect.gen(function*() {
      return yield* f(yield* TwilioCallsRepo)
    }).pipe(Effect.provide(TwilioCallsRepo.layer))
  )

/** A key whose record the adapter reserved at T0 (it asked Twilio for a call and has no answer yet). */
const reserved = async () => {
  const key = `task-${++keys}/é`
  await withCalls((calls) =>
    calls.reserve(
      {
        idempotencyKey: key,
        callId: CallId.make(`call-${keys}`),
        accountSid: ACCOUNT,
        fromNumber: "+14155550100",
        toNumber: "+14155550101"
      },
      T0
    )
  )
  return key
}
const record = (key: string) => withCalls((calls) => Effect.map(calls.find(key), Option.getOrUndefined))
const newSid = () => `CA${(++sids).toString(16).padStart(32, "0")}`

/** The path and query Twilio posts to for `key` (the part of statusCallbackUrl after SVC_PUBLIC_URL). */
const pathOf = (key: string) => statusCallbackUrl(BASE, key).slice(BASE.length)

interface Send {
  readonly key: string
  readonly params: Record<string, string>
  /** When the server receives it (ms after T0, on a TestClock); default 1 s */
  readonly at?: number
  /** The signature header; default: Twilio's signature over the URL and params; `null` sends none */
  readonly signature?: string | null
  readonly body?: string
  readonly contentType?: string
  readonly to?: TestServer.TestServer
}

const send = async (options: Send) => {
  const url = BASE + pathOf(options.key)
  const signature = options.signature === undefined
    ? getExpectedTwilioSignature(TOKEN, url, options.params)
    : options.signature
  const clock = await Effect.runPromise(Effect.scoped(TestClock.make()))
  await Effect.runPromise(clock.setTime(T0 + (options.at ?? 1_000)))
  const response = await (options.to ?? server).request("POST", pathOf(options.key), {
    key: null,
    raw: options.body ?? new URLSearchParams(options.params).toString(),
    headers: {
      "content-type": options.contentType ?? FORM,
      ...(signature === null ? {} : { "x-twilio-signature": signature })
    },
    clock
  })
  return { status: response.status, json: response.json, text: response.text }
}

/** What Twilio sends for a call event (a subset of its parameters; every one is signed). */
const event = (callSid: string, status: string, extra: Record<string, string> = {}) => ({
  AccountSid: ACCOUNT,
  ApiVersion: "2010-04-01",
  CallSid: callSid,
  CallStatus: status,
  Called: "+14155550101",
  Caller: "+14155550100",
  Direction: "outbound-api",
  From: "+14155550100",
  To: "+14155550101",
  CallbackSource: "call-progress-events",
  SequenceNumber: "0",
  Timestamp: "Sat, 28 Nov 2026 03:00:05 +0000",
  ...extra
})

const error = (message: string) => ({ status: "error", message })

describe("POST /carrier/twilio/status", () => {
  it("a signed callback moves the key's record forward and answers 204", async () => {
    const key = await reserved()
    const sid = newSid()
    assert.deepStrictEqual(await send({ key, params: event(sid, "ringing"), at: 1_000 }), {
      status: 204,
      json: undefined,
      text: ""
    })
    const ringing = await record(key)
    assert.strictEqual(ringing?.status, "ringing")
    assert.strictEqual(ringing?.callSid, sid, "the SID is attached when the callback beats the create response")
    assert.strictEqual(ringing?.updatedAt, T0 + 1_000, "updated at the Clock's time")
    assert.strictEqual(ringing?.startTimestamp, null, "ringing is not the start")

    const answered = await send({
      key,
      params: event(sid, "in-progress", { AnsweredBy: "human", Timestamp: "Sat, 28 Nov 2026 03:00:09 +0000" }),
      at: 2_000
    })
    assert.strictEqual(answered.status, 204)
    const ended = await send({
      key,
      params: event(sid, "completed", {
        CallDuration: "31",
        SipResponseCode: "200",
        Timestamp: "Sat, 28 Nov 2026 03:00:40 +0000"
      }),
      at: 3_000
    })
    assert.strictEqual(ended.status, 204)
    const completed = await record(key)
    assert.deepStrictEqual(completed && { ...completed }, {
      idempotencyKey: key,
      callId: completed?.callId ?? ("" as CallId),
      accountSid: ACCOUNT,
      fromNumber: "+14155550100",
      toNumber: "+14155550101",
      requestedAt: T0,
      callSid: sid,
      status: "completed",
      answeredBy: "human",
      sipResponseCode: 200,
      errorCode: null,
      rejection: null,
      startTimestamp: Date.parse("2026-11-28T03:00:09Z"),
      endTimestamp: Date.parse("2026-11-28T03:00:40Z"),
      durationS: 31,
      updatedAt: T0 + 3_000
    })
  })

  it("a replayed callback answers 204 and changes nothing twice (updated_at unchanged)", async () => {
    const key = await reserved()
    const sid = newSid()
    const params = event(sid, "busy", { SipResponseCode: "486" })
    assert.strictEqual((await send({ key, params, at: 1_000 })).status, 204)
    const first = await record(key)
    assert.strictEqual(first?.status, "busy")
    for (const at of [5_000, 60_000]) {
      assert.strictEqual((await send({ key, params, at })).status, 204)
      assert.deepStrictEqual(await record(key), first)
    }
  })

  it("callbacks out of order: completed then ringing leaves the record completed", async () => {
    const key = await reserved()
    const sid = newSid()
    assert.strictEqual(
      (await send({ key, params: event(sid, "completed", { CallDuration: "12" }), at: 1_000 })).status,
      204
    )
    const completed = await record(key)
    for (const [status, at] of [["ringing", 2_000], ["in-progress", 3_000], ["initiated", 4_000]] as const) {
      assert.strictEqual((await send({ key, params: event(sid, status), at })).status, 204)
    }
    assert.strictEqual((await send({ key, params: event(sid, "failed"), at: 5_000 })).status, 204)
    assert.deepStrictEqual(await record(key), completed, "an ended call never changes, not even to another end")
  })

  it("an unsigned callback is refused with 403 and changes nothing", async () => {
    const key = await reserved()
    const before = await record(key)
    assert.deepStrictEqual(
      await send({ key, params: event(newSid(), "completed"), signature: null }),
      {
        status: 403,
        json: error("X-Twilio-Signature header missing: only Twilio's signed status callbacks are accepted"),
        text: JSON.stringify(
          error("X-Twilio-Signature header missing: only Twilio's signed status callbacks are accepted")
        )
      }
    )
    assert.strictEqual((await send({ key, params: event(newSid(), "completed"), signature: "" })).status, 403)
    assert.deepStrictEqual(await record(key), before)
  })

  it("a wrong signature is refused with 403 and changes nothing: another token, garbage, another URL or params", async () => {
    const key = await reserved()
    const other = await reserved()
    const before = await record(key)
    const sid = newSid()
    const params = event(sid, "completed")
    const wrong =
      "X-Twilio-Signature does not match this request (signed with another auth token, or for another URL " +
      "or parameters; the URL checked is SVC_PUBLIC_URL + the path and query received)"
    const refusals = [
      // signed with another account's token
      getExpectedTwilioSignature("fedcba9876543210fedcba9876543210", BASE + pathOf(key), params),
      "not-a-signature",
      // a genuine signature of another key's callback, replayed against this key
      getExpectedTwilioSignature(TOKEN, BASE + pathOf(other), params),
      // a genuine signature over another public URL (another deployment)
      getExpectedTwilioSignature(TOKEN, `https://other.example.com${pathOf(key)}`, params),
      // a genuine signature of this key's ringing callback, sent with its status changed
      getExpectedTwilioSignature(TOKEN, BASE + pathOf(key), event(sid, "ringing"))
    ]
    for (const signature of refusals) {
      assert.deepStrictEqual(await send({ key, params, signature }), {
        status: 403,
        json: error(wrong),
        text: JSON.stringify(error(wrong))
      }, signature)
    }
    // a parameter added after signing
    const signature = getExpectedTwilioSignature(TOKEN, BASE + pathOf(key), params)
    assert.strictEqual(
      (await send({ key, params, signature, body: `${new URLSearchParams(params).toString()}&CallDuration=1` }))
        .status,
      403
    )
    assert.deepStrictEqual(await record(key), before)
    assert.strictEqual((await record(other))?.status, "requesting")
  })

  it("needs no API key, and an API key does not stand in for the signature", async () => {
    const key = await reserved()
    const { key: apiKey } = await server.org()
    const response = await server.request("POST", pathOf(key), {
      key: apiKey,
      raw: new URLSearchParams(event(newSid(), "completed")).toString(),
      headers: { "content-type": FORM }
    })
    assert.strictEqual(response.status, 403)
    assert.strictEqual((await record(key))?.status, "requesting")
  })

  it("a callback for a key without a record answers 204 and stores nothing", async () => {
    const key = `never-reserved-${++keys}`
    assert.strictEqual((await send({ key, params: event(newSid(), "completed") })).status, 204)
    assert.strictEqual((await send({ key, params: event(newSid(), "completed") })).status, 204)
    assert.strictEqual(await record(key), undefined)
  })

  it("a callback with another SID than the record's answers 204 and changes nothing", async () => {
    const key = await reserved()
    const sid = newSid()
    assert.strictEqual((await send({ key, params: event(sid, "ringing"), at: 1_000 })).status, 204)
    const before = await record(key)
    assert.strictEqual((await send({ key, params: event(newSid(), "completed"), at: 2_000 })).status, 204)
    assert.deepStrictEqual(await record(key), before)
  })

  it("a callback whose SID is another key's record answers 204 and changes neither", async () => {
    const first = await reserved()
    const second = await reserved()
    const sid = newSid()
    assert.strictEqual((await send({ key: first, params: event(sid, "ringing") })).status, 204)
    const before = [await record(first), await record(second)]
    assert.strictEqual((await send({ key: second, params: event(sid, "completed") })).status, 204)
    assert.deepStrictEqual([await record(first), await record(second)], before)
  })

  it("an unknown CallStatus is a 400 naming the field, and changes nothing", async () => {
    const key = await reserved()
    const before = await record(key)
    const response = await send({ key, params: event(newSid(), "answered") })
    assert.strictEqual(response.status, 400)
    assert.deepStrictEqual(
      response.json,
      error(
        "CallStatus must be one of queued, initiated, ringing, in-progress, completed, busy, no-answer, failed, " +
          "canceled; got \"answered\""
      )
    )
    const badTime = await send({ key, params: event(newSid(), "completed", { Timestamp: "yesterday" }) })
    assert.strictEqual(badTime.status, 400)
    assert.match((badTime.json as { message: string }).message, /^Timestamp must be an RFC 2822 date-time/)
    assert.deepStrictEqual(await record(key), before)
  })

  it("a body that is not a form is a 400 naming why, and changes nothing", async () => {
    const key = await reserved()
    const before = await record(key)
    const params = event(newSid(), "completed")
    const json = await send({ key, params, body: JSON.stringify(params), contentType: "application/json" })
    assert.deepStrictEqual(json.json, {
      status: "error",
      message:
        "Content-Type application/json is not supported; Twilio's status callbacks send application/x-www-form-urlencoded"
    })
    assert.strictEqual(json.status, 400)
    const escapes = await send({ key, params, body: "CallSid=CA%ZZ&CallStatus=completed" })
    assert.deepStrictEqual(escapes, {
      status: 400,
      json: error(
        "request body is not application/x-www-form-urlencoded: parameter 1 has an invalid %-escape (each % must " +
          "start %XX of UTF-8 bytes)"
      ),
      text: escapes.text
    })
    assert.deepStrictEqual(await record(key), before)
  })

  it("a body over the small-body limit (64 KiB) is refused naming the limit, and changes nothing", async () => {
    const key = await reserved()
    const before = await record(key)
    const params = event(newSid(), "completed", { Padding: "x".repeat(64 * 1024) })
    const response = await send({ key, params })
    assert.deepStrictEqual(response.json, {
      status: "error",
      message: "request body is larger than the 65536 bytes (64 KiB) that POST /carrier/twilio/status accepts " +
        "(SVC_MAX_SMALL_BODY_BYTES)"
    })
    assert.strictEqual(response.status, 400, "the server's one answer to an oversized body (decision 0303)")
    assert.deepStrictEqual(await record(key), before)
  })

  it("a missing key in the URL is a 400 once the signature holds", async () => {
    const params = event(newSid(), "completed")
    const response = await server.request("POST", "/carrier/twilio/status", {
      key: null,
      raw: new URLSearchParams(params).toString(),
      headers: {
        "content-type": FORM,
        "x-twilio-signature": getExpectedTwilioSignature(TOKEN, `${BASE}/carrier/twilio/status`, params)
      }
    })
    assert.deepStrictEqual(response.json, {
      status: "error",
      message: "query parameter key is required: the callback URL carries the call's idempotency key (?key=...)"
    })
  })

  it("a server without TWILIO_AUTH_TOKEN answers every callback 403 naming the setting, and changes nothing", async () => {
    const replica = await TestServer.start({ TWILIO_AUTH_TOKEN: "", SVC_PUBLIC_URL: PUBLIC_URL }, server)
    const bare = await TestServer.start({ TWILIO_AUTH_TOKEN: "", SVC_PUBLIC_URL: "" }, server)
    try {
      const key = await reserved()
      const params = event(newSid(), "completed")
      const message =
        "TWILIO_AUTH_TOKEN is not set on this server: it cannot verify Twilio's signature, so it accepts " +
        "no status callback"
      assert.deepStrictEqual(await send({ key, params, to: replica }), {
        status: 403,
        json: error(message),
        text: JSON.stringify(error(message))
      })
      assert.deepStrictEqual(
        (await send({ key, params, to: bare })).json,
        error(
          "TWILIO_AUTH_TOKEN and SVC_PUBLIC_URL are not set on this server: it cannot verify Twilio's signature, so " +
            "it accepts no status callback"
        )
      )
      assert.strictEqual((await record(key))?.status, "requesting")
      // the same callback to a configured replica over the same database is applied
      assert.strictEqual((await send({ key, params })).status, 204)
      assert.strictEqual((await record(key))?.status, "completed")
    } finally {
      await replica.close()
      await bare.close()
    }
  })
})

describe("POST /carrier/twilio/status on a real socket", () => {
  it("checks the signature over the path and query exactly as received (characters a URL parser would re-escape)", async () => {
    const listening = await TestServer.listen({ TWILIO_AUTH_TOKEN: TOKEN, SVC_PUBLIC_URL: BASE })
    try {
      // encodeURIComponent leaves ' ( ) ! * as they are; a WHATWG URL parser escapes ' in a query
      const key = "task-'quoted'(1)!*"
      await listening.run(
        Effect.gen(function*() {
          const calls = yield* TwilioCallsRepo
          yield* calls.reserve(
            {
              idempotencyKey: key,
              callId: CallId.make("call-raw"),
              accountSid: ACCOUNT,
              fromNumber: "+1",
              toNumber: "+2"
            },
            T0
          )
        }).pipe(Effect.provide(TwilioCallsRepo.layer))
      )
      const post = (params: Record<string, string>, signature: string) =>
        new Promise<number>((resolve, reject) => {
          const body = new URLSearchParams(params).toString()
          const request = http.request({
            host: "127.0.0.1",
            port: listening.port,
            method: "POST",
            path: pathOf(key),
            headers: {
              "content-type": FORM,
              "content-length": Buffer.byteLength(body),
              "x-twilio-signature": signature
            }
          }, (response) => {
            response.resume()
            response.on("end", () => resolve(response.statusCode ?? 0))
          })
          request.on("error", reject)
          request.end(body)
        })
      assert.ok(pathOf(key).includes("'"), "the path is sent raw")
      const params = event(newSid(), "no-answer")
      assert.strictEqual(
        await post(params, getExpectedTwilioSignature(TOKEN, `${BASE}${pathOf(key)}?x`, params)),
        403
      )
      assert.strictEqual(await post(params, getExpectedTwilioSignature(TOKEN, BASE + pathOf(key), params)), 204)
      const stored = await listening.run(
        Effect.gen(function*() {
          return yield* (yield* TwilioCallsRepo).find(key)
        }).pipe(Effect.provide(TwilioCallsRepo.layer))
      )
      assert.strictEqual(Option.getOrUndefined(stored)?.status, "no-answer")
    } finally {
      await listening.close()
    }
  })
})

describe("POST /carrier/twilio/status with its own database", () => {
  it(
    "logs an unknown key once and refused signatures once a minute; while the database is down answers 503 with Retry-After",
    async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-twilio-"))
      fs.chmodSync(dataDir, 0o755)
      const scope = Scope.makeUnsafe()
      try {
        const postgres = await Effect.runPromise(Scope.provide(EmbeddedPostgres.start({ dataDir }), scope))
        const logs: Array<{ level: string; message: string }> = []
        const logger = Logger.layer([
          Logger.make(({ logLevel, message }) => {
            logs.push({
              level: logLevel,
              message: Array.isArray(message) ? message.map(String).join(" ") : String(message)
            })
          })
        ])
        const config = ConfigProvider.layer(
          ConfigProvider.fromEnv({ env: { TWILIO_AUTH_TOKEN: TOKEN, SVC_PUBLIC_URL: BASE } })
        )
        // the pool belongs to the handler (closed by dispose), the server to `scope`: stopping the server leaves a pool
        // that cannot connect, as in production
        const { handler, dispose } = HttpRouter.toWebHandler(
          Http.routes.pipe(
            Layer.provide(Database.layerFromUrl(postgres.url, { maxConnections: 2 })),
            Layer.provide(HttpServer.layerServices),
            Layer.provide(config),
            // merged, not only provided: request fibers run in the context the routes' layer outputs
            Layer.provideMerge(logger)
          ),
          { disableLogger: true, routerConfig: Http.routerConfig }
        )
        try {
          const post = async (key: string) => {
            const params = event(newSid(), "completed")
            const response = await handler(
              new Request(`http://svc.test${pathOf(key)}`, {
                method: "POST",
                headers: {
                  "content-type": FORM,
                  "x-twilio-signature": getExpectedTwilioSignature(TOKEN, BASE + pathOf(key), params)
                },
                body: new URLSearchParams(params).toString()
              }),
              Context.empty() as Context.Context<never>
            )
            const text = await response.text()
            return {
              status: response.status,
              retryAfter: response.headers.get("retry-after"),
              body: text === "" ? undefined : JSON.parse(text) as unknown
            }
          }
          for (const key of ["up", "up", "up", "other"]) {
            assert.strictEqual((await post(key)).status, 204, "unknown key while the database answers")
          }
          // two refused signatures in the same minute: one warning
          for (const signature of ["forged", "forged again"]) {
            const refused = await handler(
              new Request(`http://svc.test${pathOf("up")}`, {
                method: "POST",
                headers: { "content-type": `${FORM}; charset=utf-8`, "x-twilio-signature": signature },
                body: new URLSearchParams(event(newSid(), "completed")).toString()
              }),
              Context.empty() as Context.Context<never>
            )
            assert.strictEqual(refused.status, 403)
          }
          assert.deepStrictEqual(
            logs.filter((line) => line.message.startsWith("Twilio status callbacks refused")).map((line) => line.level),
            ["Warn"]
          )
          assert.isFalse(logs.some((line) => line.message.includes(TOKEN)), "no log message holds the token")
          assert.deepStrictEqual(
            logs.filter((line) => line.message.startsWith("Twilio status callback ")),
            [0, 1].map(() => ({
              level: "Info",
              message: "Twilio status callback for a key without a record (or with another call SID); ignored"
            })),
            "one line per unknown key, not per callback"
          )
          await Effect.runPromise(Scope.close(scope, Exit.void)) // the database stops
          const down = await post("down")
          assert.strictEqual(down.status, 503)
          assert.strictEqual(down.retryAfter, "2")
          assert.match((down.body as { message: string }).message, /^database unavailable/)
        } finally {
          await dispose()
        }
      } finally {
        await Effect.runPromise(Scope.close(scope, Exit.void))
        fs.rmSync(dataDir, { recursive: true, force: true })
      }
    },
    90_000
  )
})
