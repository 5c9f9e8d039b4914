/**
 * The address Twilio posts a call's status callbacks to (decision 0606), shared by the
 * side that asks for the callbacks (the scheduler's Twilio adapter, the call's `StatusCallback`) and the side that
 * receives them (svc-server, `POST /carrier/twilio/status`). Twilio signs the URL exactly as the adapter gave it, and
 * the server recomputes the signature over `SVC_PUBLIC_URL` + the path and query it received, so both sides must
 * spell the base the same way: {@link publicBaseUrl} is that one spelling.
 */
import { Result } from "effect"

/** The path of the status-callback endpoint on svc-server. */
export const STATUS_CALLBACK_PATH = "/carrier/twilio/status"

/**
 * `SVC_PUBLIC_URL` checked and spelled one way: an absolute `https://` or `http://` URL without query, fragment or
 * credentials, surrounding spaces and trailing slashes removed (a path prefix, for a proxy that strips it, stays).
 * Fails with a sentence naming the setting and the rule.
 *
 * @category constructors
 */
export const publicBaseUrl = (text: string): Result.Result<string, string> => {
  const trimmed = text.trim().replace(/\/+$/, "")
  const rule = "SVC_PUBLIC_URL must be the absolute http(s) URL at which Twilio reaches this service, " +
    "without query, fragment or credentials (e.g. https://svc.example.com)"
  let parsed: URL
  try {
    parsed = new URL(trimmed)
  } catch {
    return Result.fail(`${rule}; got ${JSON.stringify(text)}`)
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    return Result.fail(`${rule}; got the scheme ${parsed.protocol}`)
  }
  if (trimmed.includes("?") || trimmed.includes("#")) return Result.fail(`${rule}; got ${JSON.stringify(text)}`)
  if (parsed.username !== "" || parsed.password !== "") return Result.fail(`${rule}; got a URL with credentials`)
  return Result.succeed(trimmed)
}

/**
 * The `StatusCallback` of the call dialled for `idempotencyKey`, under a base from {@link publicBaseUrl}.
 *
 * @category constructors
 */
export const statusCallbackUrl = (base: string, idempotencyKey: string): string =>
  `${base}${STATUS_CALLBACK_PATH}?key=${encodeURIComponent(idempotencyKey)}`
