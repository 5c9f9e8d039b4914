import { assert, describe, it } from "@effect/vitest"
import { fnv1a } from "../src/Fnv1a.ts"

describe("fnv1a", () => {
  it("matches the published FNV-1a 32-bit test vectors", () => {
    assert.strictEqual(fnv1a(""), 0x811c9dc5)
    assert.strictEqual(fnv1a("a"), 0xe40c292c)
    assert.strictEqual(fnv1a("foobar"), 0xbf9cf968)
  })

  it("is an unsigned 32-bit integer that changes with every character", () => {
    const a = fnv1a("org_1:task_1")
    const b = fnv1a("org_1:task_2")
    assert.notStrictEqual(a, b)
    for (const h of [a, b]) assert.isTrue(Number.isInteger(h) && h >= 0 && h < 2 ** 32)
  })
})
