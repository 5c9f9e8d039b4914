/**
 * What a Twilio status callback says, read from its form body and query (decision
 * 0606). Pure: the endpoint (TwilioStatusCallback.ts) checks the signature over {@link parseForm}'s parameters, then
 * turns them into the record's update with {@link decodeCallback}. Every refusal is a sentence naming the field and
 * its rule, answered 400.
 *
 * Fields read (Twilio's status-callback parameters): `CallSid`, `CallStatus`, `AnsweredBy` (answering-machine
 * detection), `SipResponseCode`, `ErrorCode`, `CallDuration` (seconds, on an ended call) and `Timestamp` (RFC 2822,
 * when Twilio raised the event). Every other parameter Twilio sends (From, To, AccountSid, SequenceNumber, ...) is
 * signed and ignored. An empty optional field counts as absent: Twilio sends some parameters empty.
 */
import { isTerminal, TwilioCallStatus } from "@svc/domain/carrier/TwilioCallStatus.ts"
import type { TwilioStatusUpdate } from "@svc/store/carriers/twilio/TwilioCallsRepo.ts"
import { Result, Schema } from "effect"

/**
 * A form's parameters as the SDK's `validateRequest` takes them: a name given twice holds every value.
 *
 * @category models
 */
export type FormParams = Readonly<Record<string, string | ReadonlyArray<string>>>

/** @category models */
export interface StatusCallback {
  readonly key: string
  readonly update: TwilioStatusUpdate
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** `+` is a space in a form; `%XX` must be a valid escape and the bytes valid UTF-8 (decodeURIComponent throws). */
const decodeComponent = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "))
  } catch {
    return undefined
  }
}

/**
 * The parameters of an `application/x-www-form-urlencoded` body, strictly: UTF-8, every `%` a valid escape of UTF-8
 * bytes, no control characters. The lenient `URLSearchParams` would keep `%ZZ` as text and sign something Twilio
 * never sent.
 *
 * @category encoding
 */
export const parseForm = (bytes: Uint8Array): Result.Result<FormParams, string> => {
  const prefix = "request body is not application/x-www-form-urlencoded"
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return Result.fail(`${prefix}: it is not valid UTF-8`)
  }
  const params: Record<string, string | Array<string>> = Object.create(null)
  if (text === "") return Result.succeed(params)
  const pairs = text.split("&")
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i]!
    if (pair === "") continue
    const at = pair.indexOf("=")
    const name = decodeComponent(at === -1 ? pair : pair.slice(0, at))
    const value = decodeComponent(at === -1 ? "" : pair.slice(at + 1))
    if (name === undefined || value === undefined) {
      return Result.fail(`${prefix}: parameter ${i + 1} has an invalid %-escape (each % must start %XX of UTF-8 bytes)`)
    }
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(name) || /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(value)) {
      return Result.fail(`${prefix}: parameter ${i + 1} holds a control character`)
    }
    const existing = params[name]
    params[name] = existing === undefined ? value : typeof existing === "string" ? [existing, value] : [
      ...existing,
      value
    ]
  }
  return Result.succeed(params)
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
/** RFC 2822 section 4.3's obsolete zone names, which Twilio's own clients still accept. */
const ZONES: Readonly<Record<string, number>> = {
  UT: 0,
  GMT: 0,
  Z: 0,
  EST: -300,
  EDT: -240,
  CST: -360,
  CDT: -300,
  MST: -420,
  MDT: -360,
  PST: -480,
  PDT: -420
}
const RFC_2822 =
  /^(?:(Mon|Tue|Wed|Thu|Fri|Sat|Sun),\s*)?(\d{1,2})\s+(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+(\d{4})\s+(\d{2}):(\d{2})(?::(\d{2}))?\s+([+-]\d{4}|UT|GMT|Z|[ECMP][SD]T)$/

/**
 * An RFC 2822 date-time (`Sat, 28 Nov 2026 03:56:05 +0000`, Twilio's format) as epoch milliseconds; `undefined`
 * when it is not one: a day the month does not have, a weekday that is not the date's, an hour past 23.
 *
 * @category encoding
 */
export const parseRfc2822 = (text: string): number | undefined => {
  const match = RFC_2822.exec(text.trim())
  if (match === null) return undefined
  const [, weekday, day, month, year, hour, minute, second, zone] = match
  const d = Number(day)
  const m = MONTHS.indexOf(month!)
  const y = Number(year)
  const h = Number(hour)
  const min = Number(minute)
  // 60 is a leap second (RFC 2822 3.3); it lands on the next second, as Date does
  const s = second === undefined ? 0 : Number(second)
  if (h > 23 || min > 59 || s > 60) return undefined
  const midnight = Date.UTC(y, m, d)
  const date = new Date(midnight)
  if (date.getUTCDate() !== d || date.getUTCMonth() !== m) return undefined
  if (weekday !== undefined && DAYS[date.getUTCDay()] !== weekday) return undefined
  const offsetMinutes = zone! in ZONES
    ? ZONES[zone!]!
    : (zone!.startsWith("-") ? -1 : 1) * (Number(zone!.slice(1, 3)) * 60 + Number(zone!.slice(3, 5)))
  if (Number(zone!.slice(3, 5)) > 59 && !(zone! in ZONES)) return undefined
  return midnight + ((h * 60 + min - offsetMinutes) * 60 + s) * 1000
}

const isCallStatus = Schema.is(TwilioCallStatus)
const STATUSES = TwilioCallStatus.literals.join(", ")

/** Twilio's call SIDs: `CA` and 32 hexadecimal digits. */
const CALL_SID = /^CA[0-9a-fA-F]{32}$/

/** One value of a parameter, or a refusal when it was given twice (Twilio sends each once). */
const single = (params: FormParams, name: string): Result.Result<string | undefined, string> => {
  const value = params[name]
  if (value === undefined || typeof value === "string") return Result.succeed(value === "" ? undefined : value)
  return Result.fail(`${name} was given ${value.length} times; a status callback sends it once`)
}

const integer = (
  params: FormParams,
  name: string,
  min: number,
  max: number,
  what: string
): Result.Result<number | undefined, string> =>
  Result.flatMap(single(params, name), (text) => {
    if (text === undefined) return Result.succeed(undefined)
    const value = /^\d{1,10}$/.test(text) ? Number(text) : Number.NaN
    return value >= min && value <= max
      ? Result.succeed(value)
      : Result.fail(`${name} must be ${what} (an integer from ${min} to ${max}); got ${JSON.stringify(text)}`)
  })

/**
 * The record's update that a signed callback carries: `key` from the query (the adapter's idempotency key, which it
 * put in the callback URL), the rest from the form. `Timestamp` becomes the call's start on `in-progress` (the
 * answer) and its end on an ending status; a callback of another status keeps it only as Twilio's, not the record's.
 *
 * @category encoding
 */
export const decodeCallback = (
  query: URLSearchParams,
  params: FormParams
): Result.Result<StatusCallback, string> => {
  const keys = query.getAll("key")
  if (keys.length !== 1 || keys[0] === "") {
    return Result.fail(
      keys.length > 1
        ? `query parameter key was given ${keys.length} times; the callback URL carries one idempotency key`
        : "query parameter key is required: the callback URL carries the call's idempotency key (?key=...)"
    )
  }
  return Result.gen(function*() {
    const callSid = yield* single(params, "CallSid")
    if (callSid === undefined) return yield* Result.fail("CallSid is required")
    if (!CALL_SID.test(callSid)) {
      return yield* Result.fail(`CallSid must be CA followed by 32 hexadecimal digits; got ${JSON.stringify(callSid)}`)
    }
    const status = yield* single(params, "CallStatus")
    if (status === undefined) return yield* Result.fail(`CallStatus is required: one of ${STATUSES}`)
    if (!isCallStatus(status)) {
      return yield* Result.fail(`CallStatus must be one of ${STATUSES}; got ${JSON.stringify(status)}`)
    }
    const answeredBy = yield* single(params, "AnsweredBy")
    if (answeredBy !== undefined && !/^[a-z_]{1,64}$/.test(answeredBy)) {
      return yield* Result.fail(
        `AnsweredBy must be Twilio's detection result (lower-case letters and _, e.g. human, machine_start); got ${
          JSON.stringify(answeredBy)
        }`
      )
    }
    const sipResponseCode = yield* integer(params, "SipResponseCode", 100, 699, "a SIP response code")
    const errorCode = yield* integer(params, "ErrorCode", 0, 999_999, "a Twilio error code")
    const durationS = yield* integer(params, "CallDuration", 0, 2_147_483_647, "the call's length in seconds")
    const timestampText = yield* single(params, "Timestamp")
    const timestamp = timestampText === undefined ? undefined : parseRfc2822(timestampText)
    if (timestampText !== undefined && timestamp === undefined) {
      return yield* Result.fail(
        `Timestamp must be an RFC 2822 date-time (e.g. Sat, 28 Nov 2026 03:56:05 +0000); got ${
          JSON.stringify(timestampText)
        }`
      )
    }
    const update: TwilioStatusUpdate = {
      callSid,
      status,
      answeredBy,
      sipResponseCode,
      errorCode,
      durationS,
      startTimestamp: status === "in-progress" ? timestamp : undefined,
      endTimestamp: isTerminal(status) ? timestamp : undefined
    }
    return { key: keys[0]!, update }
  })
}
