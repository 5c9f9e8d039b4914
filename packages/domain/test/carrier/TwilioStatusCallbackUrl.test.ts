// The one spelling of SVC_PUBLIC_URL that the Twilio adapter (StatusCallback) and svc-server (signature check) share
// (issue 14; decision 0606): Twilio signs the URL it was given, so both sides must build it the same way.
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { publicBaseUrl, STATUS_CALLBACK_PATH, statusCallbackUrl } from "../../src/carrier/TwilioStatusCallbackUrl.ts"

const ok = (text: string) => Result.getOrThrow(publicBaseUrl(text))
const failure = (text: string) => {
  const result = publicBaseUrl(text)
  if (Result.isSuccess(result)) throw new Error(`expected ${text} to be refused`)
  return result.failure
}

describe("publicBaseUrl", () => {
  it("keeps the URL as given, without surrounding spaces and trailing slashes", () => {
    assert.strictEqual(ok("https://svc.example.com"), "https://svc.example.com")
    assert.strictEqual(ok(" https://svc.example.com/ "), "https://svc.example.com")
    assert.strictEqual(ok("https://svc.example.com:8443/voice//"), "https://svc.example.com:8443/voice")
    assert.strictEqual(ok("http://localhost:8080"), "http://localhost:8080")
  })

  it("refuses what Twilio cannot post to or what would change the signed URL, naming the setting", () => {
    assert.match(
      failure("svc.example.com"),
      /^SVC_PUBLIC_URL must be the absolute http\(s\) URL .*; got "svc.example.com"$/
    )
    assert.match(failure("ftp://svc.example.com"), /^SVC_PUBLIC_URL must be .*; got the scheme ftp:$/)
    assert.match(failure("https://svc.example.com/?a=1"), /^SVC_PUBLIC_URL must be .*without query, fragment/)
    assert.match(failure("https://svc.example.com#rc=3"), /^SVC_PUBLIC_URL must be /)
    assert.match(failure("https://user:secret@svc.example.com"), /; got a URL with credentials$/)
    assert.match(failure(""), /^SVC_PUBLIC_URL must be /)
  })
})

describe("statusCallbackUrl", () => {
  it("puts the key, percent-encoded, in the query of the endpoint's path", () => {
    assert.strictEqual(STATUS_CALLBACK_PATH, "/carrier/twilio/status")
    assert.strictEqual(
      statusCallbackUrl(ok("https://svc.example.com/"), "task 1/é&x=y"),
      "https://svc.example.com/carrier/twilio/status?key=task%201%2F%C3%A9%26x%3Dy"
    )
  })
})
