import { assert, describe, it } from "@effect/vitest"
import { heartbeatMs, mayStartDial, safetyMs } from "../../src/dispatch/Lease.ts"

describe("Lease", () => {
  it("a dial starts only while its claim is more than 1 s from expiring (0401)", () => {
    assert.strictEqual(safetyMs, 1_000)
    const expires = 1_000_000
    assert.isTrue(mayStartDial(expires - 30_000, expires))
    assert.isTrue(mayStartDial(expires - 1_000, expires))
    assert.isFalse(mayStartDial(expires - 999, expires))
    assert.isFalse(mayStartDial(expires, expires))
    assert.isFalse(mayStartDial(expires + 5, expires))
  })

  it("the heartbeat renews every third of the lease (0401: 10 s for the default 30 s)", () => {
    assert.strictEqual(heartbeatMs(30_000), 10_000)
    // whole milliseconds, rounded down so a renewal is never late
    assert.strictEqual(heartbeatMs(1_000), 333)
    assert.strictEqual(heartbeatMs(5), 1)
    // at least one: a zero wait would renew in a busy loop
    assert.strictEqual(heartbeatMs(2), 1)
    assert.strictEqual(heartbeatMs(0), 1)
  })
})
