import { assert, describe, it } from "@effect/vitest"
import { allocate, freeSlots } from "../../src/dispatch/DispatchAllocation.ts"

const grants = (map: Map<string, number>) => Object.fromEntries(map)

describe("DispatchAllocation.allocate", () => {
  it("gives one batch alone the org's free slots, less its reservation", () => {
    assert.deepStrictEqual(grants(allocate(10, 0, [{ batchCallId: "a", reservedConcurrency: 3, inFlight: 0 }])), {
      a: 7
    })
    assert.deepStrictEqual(grants(allocate(10, 5, [{ batchCallId: "a", reservedConcurrency: 3, inFlight: 0 }])), {
      a: 2
    })
    assert.deepStrictEqual(grants(allocate(10, 7, [{ batchCallId: "a", reservedConcurrency: 3, inFlight: 2 }])), {})
  })

  it("splits the slots evenly between batches with work, whatever their order", () => {
    const batches = [
      { batchCallId: "a", reservedConcurrency: 0, inFlight: 0 },
      { batchCallId: "b", reservedConcurrency: 0, inFlight: 0 },
      { batchCallId: "c", reservedConcurrency: 0, inFlight: 0 }
    ]
    assert.deepStrictEqual(grants(allocate(9, 0, batches)), { a: 3, b: 3, c: 3 })
    // an odd slot goes to the earlier batch
    assert.deepStrictEqual(grants(allocate(10, 0, batches)), { a: 4, b: 3, c: 3 })
  })

  it("lets a starved batch catch up first (max-min fairness)", () => {
    assert.deepStrictEqual(
      grants(allocate(6, 4, [
        { batchCallId: "a", reservedConcurrency: 0, inFlight: 4 },
        { batchCallId: "b", reservedConcurrency: 0, inFlight: 0 }
      ])),
      { b: 2 }
    )
  })

  it("stops a batch at its own ceiling and gives the rest to a batch with a smaller reservation", () => {
    // b may only run while the org has at most 10 - 6 = 4 calls: it gets 2, a the remaining 8
    assert.deepStrictEqual(
      grants(allocate(10, 0, [
        { batchCallId: "a", reservedConcurrency: 0, inFlight: 0 },
        { batchCallId: "b", reservedConcurrency: 6, inFlight: 0 }
      ])),
      { a: 8, b: 2 }
    )
  })

  it("bounds each batch's grant by maxPerBatch", () => {
    assert.deepStrictEqual(
      grants(allocate(100, 0, [{ batchCallId: "a", reservedConcurrency: 0, inFlight: 0 }], 25)),
      { a: 25 }
    )
  })

  it("never grants beyond the limit, nor to a batch past its own ceiling, for any counts", () => {
    for (let limit = 1; limit <= 12; limit++) {
      for (let busy = 0; busy <= limit + 2; busy++) {
        const batches = [
          { batchCallId: "a", reservedConcurrency: limit % 3, inFlight: Math.min(busy, 1) },
          { batchCallId: "b", reservedConcurrency: 0, inFlight: 0 },
          { batchCallId: "c", reservedConcurrency: limit % 5, inFlight: 0 }
        ]
        const given = allocate(limit, busy, batches)
        const total = busy + [...given.values()].reduce((a, b) => a + b, 0)
        assert.isAtMost(total, Math.max(limit, busy), `limit ${limit}, busy ${busy}`)
        for (const batch of batches) {
          const n = given.get(batch.batchCallId) ?? 0
          if (n > 0) assert.isAtMost(busy + n, limit - batch.reservedConcurrency, `${batch.batchCallId}`)
        }
      }
    }
  })

  // issue 31 item 4 (decision 0549): a batch's calls in flight never exceed its max_concurrency; what it cannot
  // take goes to the others ("one campaign cannot starve another")
  it("stops a batch at its max_concurrency, counting its calls in flight, and gives the rest to the others", () => {
    assert.deepStrictEqual(
      grants(allocate(10, 0, [
        { batchCallId: "a", reservedConcurrency: 0, inFlight: 0, maxConcurrency: 2 },
        { batchCallId: "b", reservedConcurrency: 0, inFlight: 0 }
      ])),
      { a: 2, b: 8 }
    )
    // already at its cap: none; one below: one
    assert.deepStrictEqual(
      grants(allocate(10, 3, [
        { batchCallId: "a", reservedConcurrency: 0, inFlight: 3, maxConcurrency: 3 },
        { batchCallId: "b", reservedConcurrency: 0, inFlight: 0, maxConcurrency: 4 }
      ])),
      { b: 4 }
    )
    assert.deepStrictEqual(
      grants(allocate(10, 2, [{ batchCallId: "a", reservedConcurrency: 0, inFlight: 2, maxConcurrency: 3 }])),
      { a: 1 }
    )
    // the org's limit binds below the cap
    assert.deepStrictEqual(
      grants(allocate(3, 0, [{ batchCallId: "a", reservedConcurrency: 0, inFlight: 0, maxConcurrency: 5 }])),
      { a: 3 }
    )
  })

  it("freeSlots is the limit less the reservation and the org's calls, never negative", () => {
    assert.strictEqual(freeSlots(20, 2, 5), 13)
    assert.strictEqual(freeSlots(20, 2, 19), 0)
  })
})
