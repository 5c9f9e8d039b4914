import { assert, describe, it } from "@effect/vitest"
import Retell from "retell-sdk"
import * as Signature from "../../src/webhooks/Signature.ts"

// The vendor SDK's verify compares with Date.now() (5 minutes either way), so signatures here use the real time.
describe("Signature (checked by the vendor SDK's own verify)", () => {
  const body = JSON.stringify({ event: "call_ended", call: { call_id: "call_1", metadata: { note: "é ✓ \u2028" } } })
  const secret = "whsec_test-secret"

  it("is accepted by Retell.verify for the exact body and secret", async () => {
    const signature = Signature.sign(body, secret, Date.now())
    assert.match(signature, /^v=\d+,d=[0-9a-f]{64}$/)
    assert.isTrue(await Retell.verify(body, secret, signature))
  })

  it("matches the SDK's own sign for the same timestamp", async () => {
    const theirs = await Retell.sign(body, secret)
    const timestamp = Number(/^v=(\d+)/.exec(theirs)![1])
    assert.strictEqual(Signature.sign(body, secret, timestamp), theirs)
  })

  it("is rejected for a tampered body, another secret, a tampered digest, or a stale timestamp", async () => {
    const now = Date.now()
    const signature = Signature.sign(body, secret, now)
    assert.isFalse(await Retell.verify(body.replace("call_1", "call_2"), secret, signature))
    assert.isFalse(await Retell.verify(body, "whsec_other", signature))
    const digit = signature.at(-1) === "0" ? "1" : "0"
    assert.isFalse(await Retell.verify(body, secret, signature.slice(0, -1) + digit))
    assert.isFalse(await Retell.verify(body, secret, Signature.sign(body, secret, now - 6 * 60_000)))
  })
})
