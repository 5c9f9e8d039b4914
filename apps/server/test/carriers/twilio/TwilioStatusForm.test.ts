// What a Twilio status callback's form and query decode to (issue 14; decision 0606): the strict form parser whose
// parameters the signature is checked over, the RFC 2822 timestamps, and the update applied to the key's record,
// with a 400 message naming the field for every bad input. The endpoint itself is tested over HTTP and PostgreSQL in
// TwilioStatusCallback.integration.test.ts.
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import {
  decodeCallback,
  type FormParams,
  parseForm,
  parseRfc2822
} from "../../../src/carriers/twilio/TwilioStatusForm.ts"

const SID = "CA0123456789abcdef0123456789abcdef"
const bytes = (text: string) => new TextEncoder().encode(text)
const form = (text: string) => Result.getOrThrow(parseForm(bytes(text)))
const failure = <A>(result: Result.Result<A, string>): string => {
  if (Result.isSuccess(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.success)}`)
  return result.failure
}
const decode = (params: FormParams, query = "key=task-1") => decodeCallback(new URLSearchParams(query), params)

describe("parseForm", () => {
  it("decodes + as a space and %-escapes as UTF-8, keeping every value of a repeated name", () => {
    assert.deepStrictEqual({ ...form("To=%2B14155550100&Caller=Ana+Mar%C3%ADa&A=1&A=2&A=3&Empty=&Flag") }, {
      To: "+14155550100",
      Caller: "Ana María",
      A: ["1", "2", "3"],
      Empty: "",
      Flag: ""
    })
  })

  it("reads an empty body as no parameters", () => {
    assert.deepStrictEqual({ ...form("") }, {})
  })

  it("keeps a parameter named __proto__ as a parameter, not a prototype", () => {
    const params = form("__proto__=x&CallSid=y")
    assert.deepStrictEqual(Object.keys(params), ["__proto__", "CallSid"])
    assert.strictEqual(params["__proto__"], "x")
  })

  it("refuses an invalid %-escape, naming the parameter's position", () => {
    assert.strictEqual(
      failure(parseForm(bytes("CallSid=x&CallStatus=%ZZ"))),
      "request body is not application/x-www-form-urlencoded: parameter 2 has an invalid %-escape (each % must start %XX of UTF-8 bytes)"
    )
    assert.match(failure(parseForm(bytes("A=%C3"))), /parameter 1 has an invalid %-escape/)
  })

  it("refuses bytes that are not UTF-8 and escaped control characters", () => {
    assert.strictEqual(
      failure(parseForm(new Uint8Array([0x41, 0x3d, 0xff]))),
      "request body is not application/x-www-form-urlencoded: it is not valid UTF-8"
    )
    assert.strictEqual(
      failure(parseForm(bytes("A=1&B=x%00y"))),
      "request body is not application/x-www-form-urlencoded: parameter 2 holds a control character"
    )
  })
})

describe("parseRfc2822", () => {
  it("reads Twilio's format, with and without the weekday and seconds", () => {
    assert.strictEqual(parseRfc2822("Sat, 28 Nov 2026 03:56:05 +0000"), Date.parse("2026-11-28T03:56:05Z"))
    assert.strictEqual(parseRfc2822("28 Nov 2026 03:56 +0000"), Date.parse("2026-11-28T03:56:00Z"))
    assert.strictEqual(parseRfc2822("Sun, 1 Mar 2026 00:00:00 GMT"), Date.parse("2026-03-01T00:00:00Z"))
  })

  it("applies the zone's offset", () => {
    assert.strictEqual(parseRfc2822("Fri, 27 Nov 2026 22:56:05 -0500"), Date.parse("2026-11-28T03:56:05Z"))
    assert.strictEqual(parseRfc2822("Sat, 28 Nov 2026 09:26:05 +0530"), Date.parse("2026-11-28T03:56:05Z"))
    assert.strictEqual(parseRfc2822("Fri, 27 Nov 2026 19:56:05 PST"), Date.parse("2026-11-28T03:56:05Z"))
  })

  it("refuses dates that do not exist, a weekday that is not the date's, and other formats", () => {
    for (
      const text of [
        "Mon, 30 Feb 2026 10:00:00 +0000",
        "Sun, 28 Nov 2026 03:56:05 +0000",
        "Sat, 28 Nov 2026 24:00:00 +0000",
        "Sat, 28 Nov 2026 03:60:00 +0000",
        "Sat, 28 Nov 2026 03:56:05 +0075",
        "2026-11-28T03:56:05Z",
        "1795398965",
        ""
      ]
    ) assert.strictEqual(parseRfc2822(text), undefined, text)
  })
})

describe("decodeCallback", () => {
  const completed = {
    CallSid: SID,
    CallStatus: "completed",
    CallDuration: "42",
    SipResponseCode: "200",
    AnsweredBy: "human",
    Timestamp: "Sat, 28 Nov 2026 03:56:05 +0000",
    AccountSid: "AC0123456789abcdef0123456789abcdef",
    SequenceNumber: "3"
  }

  it("turns an ending callback into the update: its Timestamp is the end", () => {
    assert.deepStrictEqual(Result.getOrThrow(decode(completed)), {
      key: "task-1",
      update: {
        callSid: SID,
        status: "completed",
        answeredBy: "human",
        sipResponseCode: 200,
        errorCode: undefined,
        durationS: 42,
        startTimestamp: undefined,
        endTimestamp: Date.parse("2026-11-28T03:56:05Z")
      }
    })
  })

  it("takes the answer's Timestamp as the start, and an initiated or ringing one as neither", () => {
    const at = Date.parse("2026-11-28T03:56:05Z")
    const answered = Result.getOrThrow(decode({ ...completed, CallStatus: "in-progress", CallDuration: "" }))
    assert.strictEqual(answered.update.startTimestamp, at)
    assert.strictEqual(answered.update.endTimestamp, undefined)
    assert.strictEqual(answered.update.durationS, undefined)
    const ringing = Result.getOrThrow(decode({ CallSid: SID, CallStatus: "ringing", Timestamp: completed.Timestamp }))
    assert.strictEqual(ringing.update.startTimestamp, undefined)
    assert.strictEqual(ringing.update.endTimestamp, undefined)
  })

  it("reads the key from the query, decoded", () => {
    assert.strictEqual(Result.getOrThrow(decode(completed, "key=task%2F1%20%C3%A9")).key, "task/1 é")
  })

  it("names a missing, empty or repeated key", () => {
    const required = "query parameter key is required: the callback URL carries the call's idempotency key (?key=...)"
    assert.strictEqual(failure(decode(completed, "")), required)
    assert.strictEqual(failure(decode(completed, "key=")), required)
    assert.strictEqual(
      failure(decode(completed, "key=a&key=b")),
      "query parameter key was given 2 times; the callback URL carries one idempotency key"
    )
  })

  it("names an unknown CallStatus and lists Twilio's statuses", () => {
    assert.strictEqual(
      failure(decode({ ...completed, CallStatus: "answered" })),
      "CallStatus must be one of queued, initiated, ringing, in-progress, completed, busy, no-answer, failed, canceled; " +
        "got \"answered\""
    )
    assert.match(failure(decode({ CallSid: SID })), /^CallStatus is required: one of queued, /)
  })

  it("names a missing or malformed CallSid", () => {
    assert.strictEqual(failure(decode({ CallStatus: "ringing" })), "CallSid is required")
    assert.strictEqual(
      failure(decode({ ...completed, CallSid: "CA123" })),
      "CallSid must be CA followed by 32 hexadecimal digits; got \"CA123\""
    )
  })

  it("names each malformed optional field with its rule", () => {
    const cases: ReadonlyArray<readonly [Record<string, string>, RegExp]> = [
      [
        { SipResponseCode: "99" },
        /^SipResponseCode must be a SIP response code \(an integer from 100 to 699\); got "99"$/
      ],
      [{ SipResponseCode: "2e2" }, /^SipResponseCode must be /],
      [{ ErrorCode: "-1" }, /^ErrorCode must be a Twilio error code \(an integer from 0 to 999999\)/],
      [{ CallDuration: "4.5" }, /^CallDuration must be the call's length in seconds/],
      [{ CallDuration: "99999999999" }, /^CallDuration must be /],
      [{ AnsweredBy: "Machine Start" }, /^AnsweredBy must be Twilio's detection result/],
      [
        { Timestamp: "2026-11-28T03:56:05Z" },
        /^Timestamp must be an RFC 2822 date-time .*; got "2026-11-28T03:56:05Z"$/
      ]
    ]
    for (const [fields, message] of cases) assert.match(failure(decode({ ...completed, ...fields })), message)
  })

  it("refuses a field given twice", () => {
    assert.strictEqual(
      failure(decode({ ...completed, CallStatus: ["ringing", "completed"] })),
      "CallStatus was given 2 times; a status callback sends it once"
    )
  })

  it("reads Twilio's error and SIP codes of a failed call", () => {
    const failed = Result.getOrThrow(
      decode({ CallSid: SID, CallStatus: "failed", ErrorCode: "32009", SipResponseCode: "404" })
    )
    assert.strictEqual(failed.update.errorCode, 32009)
    assert.strictEqual(failed.update.sipResponseCode, 404)
    assert.strictEqual(failed.update.endTimestamp, undefined)
  })
})
