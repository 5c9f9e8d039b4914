// svc-server's Twilio settings (issue 14; decision 0606): both set is "configured", either missing or empty is
// "unconfigured" naming what is missing (the endpoint then answers 403), a malformed SVC_PUBLIC_URL fails start-up.
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Redacted } from "effect"
import { TwilioCallbackConfig } from "../../../src/carriers/twilio/TwilioCallbackConfig.ts"

const load = (env: Record<string, string>) =>
  TwilioCallbackConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))))

describe("TwilioCallbackConfig", () => {
  it.effect("is configured with both settings, the URL spelled without its trailing slash", () =>
    Effect.gen(function*() {
      const settings = yield* load({ TWILIO_AUTH_TOKEN: "secret-token", SVC_PUBLIC_URL: "https://svc.example.com/" })
      assert.strictEqual(settings._tag, "Configured")
      if (settings._tag !== "Configured") return
      assert.strictEqual(settings.publicUrl, "https://svc.example.com")
      assert.strictEqual(Redacted.value(settings.authToken), "secret-token")
      assert.notInclude(String(settings.authToken), "secret-token", "the token prints redacted")
    }))

  it.effect("names every missing setting; an empty value is missing", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* load({}), {
        _tag: "Unconfigured",
        missing: ["TWILIO_AUTH_TOKEN", "SVC_PUBLIC_URL"]
      })
      assert.deepStrictEqual(yield* load({ TWILIO_AUTH_TOKEN: " ", SVC_PUBLIC_URL: "https://svc.example.com" }), {
        _tag: "Unconfigured",
        missing: ["TWILIO_AUTH_TOKEN"]
      })
      assert.deepStrictEqual(yield* load({ TWILIO_AUTH_TOKEN: "t", SVC_PUBLIC_URL: "" }), {
        _tag: "Unconfigured",
        missing: ["SVC_PUBLIC_URL"]
      })
    }))

  it.effect("fails start-up on a SVC_PUBLIC_URL that is set but not an absolute http(s) URL", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(load({ TWILIO_AUTH_TOKEN: "t", SVC_PUBLIC_URL: "svc.example.com" }))
      assert.match(String(error), /SVC_PUBLIC_URL must be the absolute http\(s\) URL/)
    }))
})
