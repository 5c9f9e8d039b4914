/**
 * The Twilio adapter's settings (docs/operations.md, Twilio), read only when `SVC_DIALER=twilio`.
 * Secrets are kept `Redacted`, so no log line or error message ever shows them; an invalid or missing variable is
 * an `InvalidTwilioConfig` naming the variable and the rule.
 */
import { publicBaseUrl } from "@svc/domain/carrier/TwilioStatusCallbackUrl.ts"
import { Config, Effect, Option, Redacted, Result, Schema } from "effect"

/**
 * A Twilio setting is missing or breaks its rule; `variable` names it.
 *
 * @category errors
 */
export class InvalidTwilioConfig extends Schema.TaggedError<InvalidTwilioConfig>()("InvalidTwilioConfig", {
  variable: Schema.String,
  message: Schema.String
}) {}

/** Twilio's answering-machine detection modes (`MachineDetection` of a call create), or none. */
export type MachineDetection = "off" | "Enable" | "DetectMessageEnd"

/**
 * How the adapter authenticates: the account's auth token, or an API key and its secret (the account SID still
 * names the account).
 *
 * @category models
 */
export type TwilioCredentials =
  | { readonly _tag: "AuthToken"; readonly authToken: Redacted.Redacted<string> }
  | { readonly _tag: "ApiKey"; readonly apiKey: string; readonly apiSecret: Redacted.Redacted<string> }

/** @category models */
export interface TwilioSettings {
  readonly accountSid: string
  readonly credentials: TwilioCredentials
  /** The base URL Twilio calls back (status callbacks), spelled by `publicBaseUrl` (decision 0606). */
  readonly publicUrl: string
  /**
   * Where Twilio's REST API is reached (`SVC_TWILIO_API_URL`, default https://api.twilio.com): an operator's egress
   * proxy, or a local Twilio double in the end-to-end tests, whose worker processes cannot be handed an SDK
   * `httpClient` object.
   */
  readonly apiUrl: string
  /** The agent runtime's SIP host (and port): answered calls are connected to `sip:{call_id}@{sipServer}`. */
  readonly sipServer: string
  readonly machineDetection: MachineDetection
  /** Seconds Twilio lets the callee's phone ring (`Timeout` of a call create). */
  readonly ringTimeoutS: number
}

/** The raw variables, absent when unset or empty. */
export type TwilioEnv = Readonly<Record<string, string | undefined>>

/** Twilio's REST API. */
export const TWILIO_API_URL = "https://api.twilio.com"

const VARIABLES = [
  "TWILIO_ACCOUNT_SID",
  "TWILIO_AUTH_TOKEN",
  "TWILIO_API_KEY",
  "TWILIO_API_SECRET",
  "SVC_PUBLIC_URL",
  "SVC_AGENT_SIP_SERVER",
  "SVC_TWILIO_MACHINE_DETECTION",
  "SVC_TWILIO_RING_TIMEOUT_S",
  "SVC_TWILIO_API_URL"
] as const

const invalid = (variable: string, message: string) =>
  Effect.fail(new InvalidTwilioConfig({ variable, message: `${variable} ${message}` }))

/**
 * Validates the variables (pure; `load` reads them from the ConfigProvider).
 *
 * @category constructors
 */
export const parse = (env: TwilioEnv): Effect.Effect<TwilioSettings, InvalidTwilioConfig> =>
  Effect.gen(function*() {
    const get = (name: (typeof VARIABLES)[number]) => {
      const value = env[name]?.trim()
      return value === undefined || value === "" ? undefined : value
    }
    const accountSid = get("TWILIO_ACCOUNT_SID")
    if (accountSid === undefined) return yield* invalid("TWILIO_ACCOUNT_SID", "is required when SVC_DIALER=twilio")
    if (!/^AC[0-9a-fA-F]{32}$/.test(accountSid)) {
      return yield* invalid("TWILIO_ACCOUNT_SID", "must be AC followed by 32 hex digits (the account's SID)")
    }
    const authToken = get("TWILIO_AUTH_TOKEN")
    const apiKey = get("TWILIO_API_KEY")
    const apiSecret = get("TWILIO_API_SECRET")
    let credentials: TwilioCredentials
    if (apiKey !== undefined || apiSecret !== undefined) {
      // TWILIO_AUTH_TOKEN may be set too: the server (often the same process, `npm start`) validates Twilio's
      // callback signatures with it; the scheduler then creates calls with the API key
      if (apiKey === undefined) return yield* invalid("TWILIO_API_KEY", "is required with TWILIO_API_SECRET")
      if (apiSecret === undefined) return yield* invalid("TWILIO_API_SECRET", "is required with TWILIO_API_KEY")
      if (!/^SK[0-9a-fA-F]{32}$/.test(apiKey)) {
        return yield* invalid("TWILIO_API_KEY", "must be SK followed by 32 hex digits (an API key's SID)")
      }
      credentials = { _tag: "ApiKey", apiKey, apiSecret: Redacted.make(apiSecret) }
    } else {
      if (authToken === undefined) {
        return yield* invalid(
          "TWILIO_AUTH_TOKEN",
          "is required when SVC_DIALER=twilio (or TWILIO_API_KEY and TWILIO_API_SECRET)"
        )
      }
      credentials = { _tag: "AuthToken", authToken: Redacted.make(authToken) }
    }
    const publicUrlText = get("SVC_PUBLIC_URL")
    if (publicUrlText === undefined) {
      return yield* invalid("SVC_PUBLIC_URL", "is required when SVC_DIALER=twilio (the base URL Twilio calls back)")
    }
    // the one spelling the server validates signatures with (decision 0606): Twilio signs the exact URL it calls
    const base = publicBaseUrl(publicUrlText)
    if (Result.isFailure(base)) return yield* invalid("SVC_PUBLIC_URL", base.failure.replace(/^SVC_PUBLIC_URL /, ""))
    const publicUrl = base.success
    const apiUrlText = get("SVC_TWILIO_API_URL") ?? TWILIO_API_URL
    let apiUrl: URL
    try {
      apiUrl = new URL(apiUrlText)
    } catch {
      return yield* invalid("SVC_TWILIO_API_URL", `must be an absolute http(s) URL (got "${apiUrlText}")`)
    }
    if ((apiUrl.protocol !== "https:" && apiUrl.protocol !== "http:") || apiUrl.search !== "" || apiUrl.hash !== "") {
      return yield* invalid(
        "SVC_TWILIO_API_URL",
        `must be an http(s) URL without query or fragment (got "${apiUrlText}")`
      )
    }
    const sipServer = get("SVC_AGENT_SIP_SERVER")
    if (sipServer === undefined) {
      return yield* invalid("SVC_AGENT_SIP_SERVER", "is required when SVC_DIALER=twilio (the agent runtime's SIP host)")
    }
    if (!/^[A-Za-z0-9.-]+(:[0-9]{1,5})?$/.test(sipServer)) {
      return yield* invalid(
        "SVC_AGENT_SIP_SERVER",
        `must be a host name or address with an optional :port (got "${sipServer}")`
      )
    }
    const detection = get("SVC_TWILIO_MACHINE_DETECTION") ?? "off"
    if (detection !== "off" && detection !== "Enable" && detection !== "DetectMessageEnd") {
      return yield* invalid(
        "SVC_TWILIO_MACHINE_DETECTION",
        `must be off, Enable or DetectMessageEnd (got "${detection}")`
      )
    }
    const ringText = get("SVC_TWILIO_RING_TIMEOUT_S") ?? "30"
    const ringTimeoutS = Number(ringText)
    // Twilio accepts a Timeout of 5 to 600 seconds
    if (!/^[0-9]+$/.test(ringText) || ringTimeoutS < 5 || ringTimeoutS > 600) {
      return yield* invalid(
        "SVC_TWILIO_RING_TIMEOUT_S",
        `must be a whole number of seconds from 5 to 600 (got "${ringText}")`
      )
    }
    return {
      accountSid,
      credentials,
      publicUrl,
      apiUrl: apiUrlText.replace(/\/+$/, ""),
      sipServer,
      machineDetection: detection,
      ringTimeoutS
    }
  })

/**
 * The settings from the environment (the ConfigProvider).
 *
 * @category constructors
 */
export const load: Effect.Effect<TwilioSettings, InvalidTwilioConfig | Config.ConfigError> = Effect.gen(function*() {
  const env: Record<string, string | undefined> = {}
  for (const name of VARIABLES) {
    env[name] = Option.getOrUndefined(yield* Config.option(Config.String(name)))
  }
  return yield* parse(env)
})
