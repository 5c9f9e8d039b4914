// The Twilio adapter's settings (issue 14): every variable checked, errors name the variable, secrets stay redacted.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { parse, type TwilioEnv } from "../../../src/carriers/twilio/TwilioConfig.ts"

const SID = "AC" + "0123456789abcdef".repeat(2)
const base: TwilioEnv = {
  TWILIO_ACCOUNT_SID: SID,
  TWILIO_AUTH_TOKEN: "secret-token",
  SVC_PUBLIC_URL: "https://svc.example.com/",
  SVC_AGENT_SIP_SERVER: "sip.example.com:5060"
}

const failure = (env: TwilioEnv) => Effect.flip(parse(env))

describe("TwilioConfig.parse", () => {
  it.effect("defaults: detection off, 30 s ring timeout, the base URL without its trailing slash", () =>
    Effect.gen(function*() {
      const s = yield* parse(base)
      assert.strictEqual(s.accountSid, SID)
      assert.strictEqual(s.publicUrl, "https://svc.example.com")
      assert.strictEqual(s.sipServer, "sip.example.com:5060")
      assert.strictEqual(s.machineDetection, "off")
      assert.strictEqual(s.ringTimeoutS, 30)
      assert.strictEqual(s.credentials._tag, "AuthToken")
      if (s.credentials._tag === "AuthToken") {
        assert.strictEqual(Redacted.value(s.credentials.authToken), "secret-token")
        // never printed
        assert.notInclude(String(s.credentials.authToken), "secret-token")
        assert.notInclude(JSON.stringify(s), "secret-token")
      }
    }))

  it.effect("an API key and secret instead of the auth token", () =>
    Effect.gen(function*() {
      const s = yield* parse({
        ...base,
        TWILIO_AUTH_TOKEN: undefined,
        TWILIO_API_KEY: "SK" + "a".repeat(32),
        TWILIO_API_SECRET: "shh",
        SVC_TWILIO_MACHINE_DETECTION: "DetectMessageEnd",
        SVC_TWILIO_RING_TIMEOUT_S: "45"
      })
      assert.strictEqual(s.credentials._tag, "ApiKey")
      assert.strictEqual(s.machineDetection, "DetectMessageEnd")
      assert.strictEqual(s.ringTimeoutS, 45)
    }))

  it.effect("an auth token beside an API key (the server's, for signatures): calls are created with the key", () =>
    Effect.gen(function*() {
      const s = yield* parse({ ...base, TWILIO_API_KEY: "SK" + "a".repeat(32), TWILIO_API_SECRET: "shh" })
      assert.strictEqual(s.credentials._tag, "ApiKey")
    }))

  it.effect("the API base: Twilio's by default, SVC_TWILIO_API_URL (a proxy) without its trailing slash", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* parse(base)).apiUrl, "https://api.twilio.com")
      const s = yield* parse({ ...base, SVC_TWILIO_API_URL: "http://127.0.0.1:8099/" })
      assert.strictEqual(s.apiUrl, "http://127.0.0.1:8099")
      // http callbacks are Twilio's to accept (https in production: docs/dialer.md)
      assert.strictEqual(
        (yield* parse({ ...base, SVC_PUBLIC_URL: "http://10.0.0.5:8080" })).publicUrl,
        "http://10.0.0.5:8080"
      )
    }))

  const bad: ReadonlyArray<readonly [string, TwilioEnv, string]> = [
    ["no account SID", { ...base, TWILIO_ACCOUNT_SID: undefined }, "TWILIO_ACCOUNT_SID"],
    ["a malformed account SID", { ...base, TWILIO_ACCOUNT_SID: "AC123" }, "TWILIO_ACCOUNT_SID"],
    ["no credentials", { ...base, TWILIO_AUTH_TOKEN: "  " }, "TWILIO_AUTH_TOKEN"],
    [
      "an API key without its secret",
      { ...base, TWILIO_AUTH_TOKEN: undefined, TWILIO_API_KEY: "SK" + "a".repeat(32) },
      "TWILIO_API_SECRET"
    ],
    ["a secret without its key", { ...base, TWILIO_AUTH_TOKEN: undefined, TWILIO_API_SECRET: "x" }, "TWILIO_API_KEY"],
    ["no public URL", { ...base, SVC_PUBLIC_URL: undefined }, "SVC_PUBLIC_URL"],
    ["an ftp public URL", { ...base, SVC_PUBLIC_URL: "ftp://svc.example.com" }, "SVC_PUBLIC_URL"],
    ["a public URL with credentials", { ...base, SVC_PUBLIC_URL: "https://u:p@svc.example.com" }, "SVC_PUBLIC_URL"],
    ["a relative API URL", { ...base, SVC_TWILIO_API_URL: "api.twilio.com" }, "SVC_TWILIO_API_URL"],
    ["an API URL with a query", { ...base, SVC_TWILIO_API_URL: "https://proxy.example/?a" }, "SVC_TWILIO_API_URL"],
    ["a public URL with a query", { ...base, SVC_PUBLIC_URL: "https://svc.example.com/?a=1" }, "SVC_PUBLIC_URL"],
    ["a relative public URL", { ...base, SVC_PUBLIC_URL: "svc.example.com" }, "SVC_PUBLIC_URL"],
    ["no SIP server", { ...base, SVC_AGENT_SIP_SERVER: undefined }, "SVC_AGENT_SIP_SERVER"],
    ["a SIP server with a user part", { ...base, SVC_AGENT_SIP_SERVER: "a@b.example" }, "SVC_AGENT_SIP_SERVER"],
    ["an unknown detection mode", { ...base, SVC_TWILIO_MACHINE_DETECTION: "enable" }, "SVC_TWILIO_MACHINE_DETECTION"],
    ["a ring timeout below 5", { ...base, SVC_TWILIO_RING_TIMEOUT_S: "4" }, "SVC_TWILIO_RING_TIMEOUT_S"],
    ["a ring timeout above 600", { ...base, SVC_TWILIO_RING_TIMEOUT_S: "601" }, "SVC_TWILIO_RING_TIMEOUT_S"],
    ["a fractional ring timeout", { ...base, SVC_TWILIO_RING_TIMEOUT_S: "7.5" }, "SVC_TWILIO_RING_TIMEOUT_S"]
  ]
  for (const [name, env, variable] of bad) {
    it.effect(`${name}: InvalidTwilioConfig naming ${variable}`, () =>
      Effect.gen(function*() {
        const error = yield* failure(env)
        assert.strictEqual(error._tag, "InvalidTwilioConfig")
        assert.strictEqual(error.variable, variable)
        assert.isTrue(error.message.startsWith(variable), error.message)
        assert.notInclude(error.message, "secret-token")
      }))
  }
})
