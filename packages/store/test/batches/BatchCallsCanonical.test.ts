// The walkers create-batch-call runs over each task's JSON (issue 27: they recursed, and a body nested ~4,500 levels
// deep overflowed the stack: a 500). Now iterative, they must write the same canonical text as the recursive
// definition (the request hash of an idempotent retry depends on it: keys sorted by code unit, no whitespace, members
// whose value is undefined left out), over randomized values, and walk any depth.
import { assert, describe, it } from "@effect/vitest"
import { canonical, canonicalJson, hasUnstorable, isCanonicalOrder } from "../../src/batches/CanonicalJson.ts"

/** The definition, recursive: only ever given shallow values here. */
const reference = (value: unknown): string => {
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) return "[" + value.map(reference).join(",") + "]"
  const record = value as Record<string, unknown>
  return "{" +
    Object.keys(record).sort().filter((key) => record[key] !== undefined).map((key) =>
      JSON.stringify(key) + ":" + reference(record[key])
    ).join(",") + "}"
}

/** mulberry32, seeded: a failure replays from its seed. */
const random = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const KEYS = ["b", "a", "10", "9", "", "é", "Z", "__proto__", "aa", "a\u0000", "\ud83d\ude00"]

const value = (next: () => number, depth: number): unknown => {
  const kind = Math.floor(next() * (depth > 4 ? 5 : 8))
  switch (kind) {
    case 0:
      return null
    case 1:
      return next() < 0.5
    case 2:
      return Math.floor(next() * 1e6) / (next() < 0.5 ? 1 : 7)
    case 3:
      return KEYS[Math.floor(next() * KEYS.length)]
    case 4:
      return undefined
    case 5:
      return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1))
    default: {
      const members = Array.from({ length: Math.floor(next() * 5) }, () => {
        const key = KEYS[Math.floor(next() * KEYS.length)]!
        return `${JSON.stringify(key)}:${JSON.stringify(value(next, depth + 1)) ?? "null"}`
      })
      const object = JSON.parse(`{${members.join(",")}}`) as Record<string, unknown>
      if (next() < 0.2) object["gone"] = undefined
      return object
    }
  }
}

describe("canonical JSON of a task's values", () => {
  it("is the recursive definition's text over 5,000 randomized values (seeds 1-5000)", () => {
    let unsorted = 0
    for (let seed = 1; seed <= 5000; seed++) {
      const next = random(seed)
      const v = value(next, 0)
      const expected = reference(v)
      assert.strictEqual(canonical(v), expected, `seed ${seed}`)
      if (v !== undefined) assert.strictEqual(canonicalJson(v), expected, `seed ${seed}`)
      const sorted = isCanonicalOrder(v)
      if (!sorted) unsorted++
      // sorted means JSON.stringify already writes the canonical text (the fast path of canonicalJson)
      if (sorted && v !== undefined) {
        assert.strictEqual(JSON.stringify(v), expected, `seed ${seed}`)
      }
      assert.strictEqual(hasUnstorable(v), expected.includes("\\u0000"), `seed ${seed}`)
    }
    assert.isAbove(unsorted, 500, "the generator reaches the slow path")
  })

  it("walks a value nested 200,000 levels deep without recursion", () => {
    const levels = 200_000
    let deep: unknown = "x\u0000"
    for (let i = 0; i < levels; i++) deep = { b: 1, a: [deep] }
    assert.isFalse(isCanonicalOrder(deep))
    const text = canonical(deep)
    assert.strictEqual(text.length, levels * "{\"a\":[],\"b\":1}".length + "\"x\\u0000\"".length)
    assert.isTrue(text.startsWith("{\"a\":[{\"a\":[{"))
    assert.isTrue(text.includes("{\"a\":[\"x\\u0000\"],\"b\":1}],\"b\":1}"))
    assert.isTrue(text.endsWith("],\"b\":1}],\"b\":1}"))
    assert.isTrue(hasUnstorable(deep))
    let sorted: unknown = 0
    for (let i = 0; i < levels; i++) sorted = { a: sorted }
    assert.isTrue(isCanonicalOrder(sorted))
    assert.isFalse(hasUnstorable(sorted))
  })
})
