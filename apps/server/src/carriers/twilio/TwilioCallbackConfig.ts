/**
 * What svc-server needs to accept Twilio's status callbacks (decision 0606): `TWILIO_AUTH_TOKEN`, the
 * account's auth token (Twilio signs callbacks with it even when calls are created with an API key), and
 * `SVC_PUBLIC_URL`, the base Twilio posts to (the signature covers the full URL Twilio was given). Neither is
 * required: a server without them serves everything else and refuses every callback with 403 naming what is missing.
 * A `SVC_PUBLIC_URL` that is set but not an absolute http(s) URL fails start-up, naming the rule. The token is held
 * `Redacted` and never logged.
 */
import { publicBaseUrl } from "@svc/domain/carrier/TwilioStatusCallbackUrl.ts"
import { Config, Effect, Option, Redacted, Result } from "effect"

/** @category models */
export type TwilioCallbackSettings =
  | {
    readonly _tag: "Configured"
    readonly authToken: Redacted.Redacted<string>
    /** `SVC_PUBLIC_URL` as `publicBaseUrl` spells it (no trailing slash). */
    readonly publicUrl: string
  }
  | {
    readonly _tag: "Unconfigured"
    readonly missing: ReadonlyArray<"TWILIO_AUTH_TOKEN" | "SVC_PUBLIC_URL">
  }

const raw = Config.all({
  authToken: Config.option(Config.Redacted("TWILIO_AUTH_TOKEN")),
  publicUrl: Config.option(Config.String("SVC_PUBLIC_URL"))
})

/**
 * The settings, from the environment; an empty value counts as unset.
 *
 * @category constructors
 */
export const TwilioCallbackConfig: Effect.Effect<TwilioCallbackSettings, Config.ConfigError | Error> = Effect.gen(
  function*() {
    const { authToken, publicUrl } = yield* raw
    const token = Option.filter(authToken, (t) => Redacted.value(t).trim() !== "")
    const url = Option.filter(publicUrl, (u) => u.trim() !== "")
    let base: string | undefined
    if (Option.isSome(url)) {
      const checked = publicBaseUrl(url.value)
      if (Result.isFailure(checked)) return yield* Effect.fail(new Error(checked.failure))
      base = checked.success
    }
    if (Option.isSome(token) && base !== undefined) {
      return { _tag: "Configured", authToken: token.value, publicUrl: base } as const
    }
    return {
      _tag: "Unconfigured",
      missing: [
        ...(Option.isNone(token) ? ["TWILIO_AUTH_TOKEN" as const] : []),
        ...(base === undefined ? ["SVC_PUBLIC_URL" as const] : [])
      ]
    } as const
  }
)
