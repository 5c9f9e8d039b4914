// The mapping of Twilio's call ends and create refusals to the Dialer port (issue 14; decision 0603).
import { assert, describe, it } from "@effect/vitest"
import { callEnd, createFailure, isMachine, type TwilioFinishedCall } from "../../src/carrier/TwilioOutcome.ts"

describe("TwilioOutcome.callEnd", () => {
  const cases: ReadonlyArray<readonly [string, TwilioFinishedCall, string, string]> = [
    ["completed, no detection", { status: "completed" }, "answered", "user_hangup"],
    ["completed, human", { status: "completed", answeredBy: "human" }, "answered", "user_hangup"],
    ["completed, unknown", { status: "completed", answeredBy: "unknown" }, "answered", "user_hangup"],
    ["completed, machine_start", { status: "completed", answeredBy: "machine_start" }, "answered", "voicemail_reached"],
    [
      "completed, machine_end_beep",
      { status: "completed", answeredBy: "machine_end_beep" },
      "answered",
      "voicemail_reached"
    ],
    [
      "completed, machine_end_silence",
      { status: "completed", answeredBy: "machine_end_silence" },
      "answered",
      "voicemail_reached"
    ],
    [
      "completed, machine_end_other",
      { status: "completed", answeredBy: "machine_end_other" },
      "answered",
      "voicemail_reached"
    ],
    ["completed, fax", { status: "completed", answeredBy: "fax" }, "answered", "voicemail_reached"],
    ["busy", { status: "busy" }, "busy", "dial_busy"],
    ["busy with a machine answer recorded", { status: "busy", answeredBy: "machine_start" }, "busy", "dial_busy"],
    ["no-answer", { status: "no-answer" }, "no_answer", "dial_no_answer"],
    ["canceled", { status: "canceled" }, "failed", "manual_stopped"],
    ["failed, nothing known", { status: "failed" }, "failed", "dial_failed"],
    ["failed, 13224 invalid number", { status: "failed", errorCode: 13224 }, "failed", "invalid_destination"],
    [
      "failed, 13227 no international authorization",
      { status: "failed", errorCode: 13227 },
      "failed",
      "telephony_provider_permission_denied"
    ],
    ["failed, unknown error code", { status: "failed", errorCode: 31000 }, "failed", "dial_failed"],
    ["failed, SIP 404", { status: "failed", sipResponseCode: 404 }, "failed", "invalid_destination"],
    ["failed, SIP 484", { status: "failed", sipResponseCode: 484 }, "failed", "invalid_destination"],
    ["failed, SIP 604", { status: "failed", sipResponseCode: 604 }, "failed", "invalid_destination"],
    ["failed, SIP 403", { status: "failed", sipResponseCode: 403 }, "failed", "telephony_provider_permission_denied"],
    ["failed, SIP 603", { status: "failed", sipResponseCode: 603 }, "failed", "user_declined"],
    ["failed, SIP 486", { status: "failed", sipResponseCode: 486 }, "failed", "dial_busy"],
    ["failed, SIP 480", { status: "failed", sipResponseCode: 480 }, "failed", "dial_no_answer"],
    ["failed, SIP 503", { status: "failed", sipResponseCode: 503 }, "failed", "telephony_provider_unavailable"],
    ["failed, SIP 488 (not mapped)", { status: "failed", sipResponseCode: 488 }, "failed", "dial_failed"],
    [
      "failed, the error code wins over the SIP code",
      { status: "failed", errorCode: 21215, sipResponseCode: 404 },
      "failed",
      "telephony_provider_permission_denied"
    ],
    ["failed, null fields", { status: "failed", errorCode: null, sipResponseCode: null }, "failed", "dial_failed"]
  ]
  for (const [name, call, outcome, reason] of cases) {
    it(name, () => {
      const end = callEnd(call)
      assert.strictEqual(end.outcome, outcome)
      assert.strictEqual(end.disconnection_reason, reason)
    })
  }

  it("isMachine: machine_* and fax only", () => {
    assert.isTrue(isMachine("machine_start"))
    assert.isTrue(isMachine("fax"))
    assert.isFalse(isMachine("human"))
    assert.isFalse(isMachine("unknown"))
    assert.isFalse(isMachine(null))
    assert.isFalse(isMachine(undefined))
    assert.isFalse(isMachine("machine"))
  })
})

describe("TwilioOutcome.createFailure", () => {
  const refused: ReadonlyArray<readonly [number, string]> = [
    [21211, "invalid_destination"],
    [21214, "invalid_destination"],
    [21217, "invalid_destination"],
    [21401, "invalid_destination"],
    [21612, "invalid_destination"],
    [21614, "invalid_destination"],
    [13223, "invalid_destination"],
    [13224, "invalid_destination"],
    [21215, "telephony_provider_permission_denied"],
    [21216, "telephony_provider_permission_denied"],
    [21210, "telephony_provider_permission_denied"],
    [21212, "telephony_provider_permission_denied"],
    [21213, "telephony_provider_permission_denied"],
    [21219, "telephony_provider_permission_denied"],
    [21610, "telephony_provider_permission_denied"],
    [13225, "telephony_provider_permission_denied"],
    [13227, "telephony_provider_permission_denied"]
  ]
  for (const [code, reason] of refused) {
    it(`400 with ${code} is refused as ${reason}`, () => {
      assert.deepStrictEqual(createFailure(400, code), { _tag: "Refused", reason })
    })
  }

  it("429, or error 20429, is rate limited: no call exists", () => {
    assert.deepStrictEqual(createFailure(429, 20429), { _tag: "RateLimited" })
    assert.deepStrictEqual(createFailure(429, undefined), { _tag: "RateLimited" })
    assert.deepStrictEqual(createFailure(400, 20429), { _tag: "RateLimited" })
  })

  it("another 4xx is not created, but not the task's fault", () => {
    assert.deepStrictEqual(createFailure(401, 20003), { _tag: "NotCreated" })
    assert.deepStrictEqual(createFailure(400, 21205), { _tag: "NotCreated" })
    assert.deepStrictEqual(createFailure(404, undefined), { _tag: "NotCreated" })
  })

  it("a 5xx, no response, or an odd status may have created the call", () => {
    assert.deepStrictEqual(createFailure(500, undefined), { _tag: "MayExist" })
    assert.deepStrictEqual(createFailure(503, 20500), { _tag: "MayExist" })
    // a refusal code on a 5xx is not trusted: the call may exist
    assert.deepStrictEqual(createFailure(502, 21211), { _tag: "MayExist" })
    assert.deepStrictEqual(createFailure(undefined, undefined), { _tag: "MayExist" })
    assert.deepStrictEqual(createFailure(302, undefined), { _tag: "MayExist" })
  })
})
