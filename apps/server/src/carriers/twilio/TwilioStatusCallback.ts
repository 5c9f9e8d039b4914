/**
 * `POST /carrier/twilio/status`: Twilio's status callbacks for the calls the scheduler's Twilio adapter placed (issue
 * 14, "Status callbacks"; decision 0606). Carrier-facing, outside the API key check: Twilio signs instead.
 *
 * - The body is `application/x-www-form-urlencoded` (anything else: 400), bounded by the small-body limit
 *   (BodyLimits.ts, `SVC_MAX_SMALL_BODY_BYTES`, 64 KiB).
 * - `X-Twilio-Signature` is checked with the SDK's `validateRequest` over `SVC_PUBLIC_URL` + the path and query as
 *   received (the URL Twilio was given) and every form parameter. Missing or wrong: 403, nothing decoded or changed,
 *   and a warning at most once a minute with the count.
 *   A server without `TWILIO_AUTH_TOKEN` or `SVC_PUBLIC_URL` cannot check anything and answers every callback 403
 *   naming the setting (a 404 would send an operator looking for a wrong URL instead of a missing token).
 * - A signed callback is decoded (TwilioStatusForm.ts; a bad field is a 400 naming it) and applied to the key's record
 *   with `TwilioCallsRepo.applyStatus` at the `Clock`'s time: the record moves forward only, so a replayed or late
 *   callback changes nothing. Applied, stale and unknown key all answer 204: Twilio has nothing to retry. An unknown
 *   key (a record deleted, another deployment's call) is logged once per key at info.
 * - The database unreachable: the failure reaches ErrorResponses, which answers 503 with Retry-After
 *   (DatabaseAvailability.ts), the one answer that asks Twilio to try again.
 */
import * as ErrorBody from "@svc/api/ErrorBody.ts"
import { STATUS_CALLBACK_PATH } from "@svc/domain/carrier/TwilioStatusCallbackUrl.ts"
import { TwilioCallsRepo } from "@svc/store/carriers/twilio/TwilioCallsRepo.ts"
import { Clock, Effect, Layer, Redacted, Result } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import type { HttpServerRequest } from "effect/http"
// the webhooks module alone: requiring the SDK's index loads its REST client (0.5-0.8 s here, vs 35 ms for this one)
import { validateRequest } from "twilio/lib/webhooks/webhooks.js"
import { TwilioCallbackConfig } from "./TwilioCallbackConfig.ts"
import * as TwilioStatusForm from "./TwilioStatusForm.ts"

const errorBody = (status: number, message: string) =>
  HttpServerResponse.jsonUnsafe(ErrorBody.make(message), { status })

/** How many unknown keys a process remembers having logged (a bound, so a flood cannot grow it). */
const LOGGED_KEYS = 10_000

/** At most one warning about refused signatures per this many ms: a wrong token refuses every callback. */
const SIGNATURE_WARNING_EVERY_MS = 60_000

/** `validateRequest` parses the URL for its fallbacks and throws on one it cannot parse: that is not a match. */
const signatureMatches = (token: string, signature: string, url: string, params: TwilioStatusForm.FormParams) => {
  try {
    return validateRequest(token, signature, url, params)
  } catch {
    return false
  }
}

/** @category layers */
export const layer = Layer.unwrap(Effect.gen(function*() {
  const settings = yield* TwilioCallbackConfig
  const calls = yield* TwilioCallsRepo
  const loggedKeys = new Set<string>()
  let warnedUnconfigured = false
  let signatureWarnedAt = Number.NEGATIVE_INFINITY
  let signatureRefusals = 0

  /**
   * A refused signature: an operator whose token or SVC_PUBLIC_URL is wrong sees it in this log, not only in
   * Twilio's debugger; a flood of forged requests costs one line a minute.
   */
  const refuseSignature = (message: string) =>
    Effect.gen(function*() {
      signatureRefusals++
      const now = yield* Clock.currentTimeMillis
      if (now - signatureWarnedAt >= SIGNATURE_WARNING_EVERY_MS) {
        yield* Effect.logWarning("Twilio status callbacks refused: signature missing or wrong").pipe(
          Effect.annotateLogs({ refused: signatureRefusals, reason: message })
        )
        signatureWarnedAt = now
        signatureRefusals = 0
      }
      return errorBody(403, message)
    })

  const unconfigured = (missing: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const message = `${missing.join(" and ")} ${
        missing.length > 1 ? "are" : "is"
      } not set on this server: it cannot verify Twilio's signature, so it accepts no status callback`
      if (!warnedUnconfigured) {
        warnedUnconfigured = true
        yield* Effect.logWarning("Twilio status callback refused").pipe(Effect.annotateLogs({ reason: message }))
      }
      return errorBody(403, message)
    })

  const handle = Effect.fn("TwilioStatusCallback.handle")(function*(request: HttpServerRequest.HttpServerRequest) {
    if (settings._tag === "Unconfigured") return yield* unconfigured(settings.missing)
    const contentType = request.headers["content-type"] ?? ""
    if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(contentType)) {
      return errorBody(
        400,
        `Content-Type ${
          contentType === "" ? "(none)" : contentType
        } is not supported; Twilio's status callbacks send application/x-www-form-urlencoded`
      )
    }
    // a body over the limit or cut off fails here and is answered by BodyLimits / ErrorResponses
    const form = TwilioStatusForm.parseForm(new Uint8Array(yield* request.arrayBuffer))
    if (Result.isFailure(form)) return errorBody(400, form.failure)
    const signature = request.headers["x-twilio-signature"] ?? ""
    if (signature === "") {
      return yield* refuseSignature(
        "X-Twilio-Signature header missing: only Twilio's signed status callbacks are accepted"
      )
    }
    if (
      !signatureMatches(Redacted.value(settings.authToken), signature, settings.publicUrl + request.url, form.success)
    ) {
      return yield* refuseSignature(
        "X-Twilio-Signature does not match this request (signed with another auth token, or for another URL or " +
          "parameters; the URL checked is SVC_PUBLIC_URL + the path and query received)"
      )
    }
    const queryAt = request.url.indexOf("?")
    const decoded = TwilioStatusForm.decodeCallback(
      new URLSearchParams(queryAt === -1 ? "" : request.url.slice(queryAt + 1)),
      form.success
    )
    if (Result.isFailure(decoded)) return errorBody(400, decoded.failure)
    const { key, update } = decoded.success
    const now = yield* Clock.currentTimeMillis
    const result = yield* calls.applyStatus(key, update, now).pipe(
      // call_sid is unique: a signed callback whose SID belongs to another key's record carries a wrong key. It
      // cannot be applied and retrying will not change that.
      Effect.catchIf(
        (error) => error.reason._tag === "UniqueViolation",
        () => Effect.succeed("conflict" as const)
      )
    )
    const annotations = { key, callSid: update.callSid, callStatus: update.status }
    if (result === "unknown" || result === "conflict") {
      if (!loggedKeys.has(key)) {
        if (loggedKeys.size >= LOGGED_KEYS) loggedKeys.clear()
        loggedKeys.add(key)
        yield* Effect.logInfo(
          result === "unknown"
            ? "Twilio status callback for a key without a record (or with another call SID); ignored"
            : "Twilio status callback whose call SID belongs to another key's record; ignored"
        ).pipe(Effect.annotateLogs(annotations))
      }
    } else if (result === "stale") {
      yield* Effect.logDebug("Twilio status callback changed nothing (replayed or late)").pipe(
        Effect.annotateLogs(annotations)
      )
    }
    return HttpServerResponse.empty({ status: 204 })
  })

  return HttpRouter.add("POST", STATUS_CALLBACK_PATH, handle)
}))
