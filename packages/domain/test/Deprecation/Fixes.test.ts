import { assert, describe, it } from "@effect/vitest"
import { applyFixes, applyOperation, type Fix, remove, rename, set } from "../../src/Deprecation/Fixes.ts"

const fix = (...operations: Fix["operations"]): Fix => ({ description: "test", safe: true, operations })

describe("Fixes", () => {
  const doc = { a: { b: [1, { c: 2 }] }, d: "x" }

  it("sets, removes and renames along object and array paths", () => {
    assert.deepStrictEqual(applyOperation(doc, set(["a", "b", 1, "c"], 3)), { a: { b: [1, { c: 3 }] }, d: "x" })
    assert.deepStrictEqual(applyOperation(doc, set(["a", "b", 2], "end")), { a: { b: [1, { c: 2 }, "end"] }, d: "x" })
    assert.deepStrictEqual(applyOperation(doc, remove(["a", "b", 0])), { a: { b: [{ c: 2 }] }, d: "x" })
    assert.deepStrictEqual(applyOperation(doc, remove(["d"])), { a: { b: [1, { c: 2 }] } })
    assert.deepStrictEqual(Object.keys(applyOperation(doc, rename(["a"], "z")) as object), ["z", "d"])
    assert.deepStrictEqual(applyOperation(doc, set([], 1)), 1)
  })

  it("does nothing where a path does not lead", () => {
    for (
      const op of [
        set(["missing", "x"], 1),
        set(["a", "b", 5], 1),
        set(["d", "x"], 1),
        remove(["missing"]),
        remove(["a", "b", 9]),
        rename(["missing"], "x"),
        rename(["a"], "d"),
        remove([])
      ]
    ) {
      assert.strictEqual(applyOperation(doc, op), doc)
    }
  })

  it("never modifies its input and keeps untouched subtrees", () => {
    const before = structuredClone(doc)
    const after = applyFixes(doc, [fix(set(["d"], "y"), remove(["a", "b", 1, "c"]))])
    assert.deepStrictEqual(doc, before)
    assert.deepStrictEqual(after, { a: { b: [1, {}] }, d: "y" })
    const other = applyFixes(doc, [fix(set(["d"], "y"))]) as typeof doc
    assert.strictEqual(other.a, doc.a)
  })

  it("is idempotent and applies a shared fix once", () => {
    const shared = fix(set(["e"], [1]), remove(["d"]), rename(["a"], "f"))
    const once = applyFixes(doc, [shared, shared])
    assert.deepStrictEqual(once, { f: { b: [1, { c: 2 }] }, e: [1] })
    assert.deepStrictEqual(applyFixes(once, [shared]), once)
  })
})
