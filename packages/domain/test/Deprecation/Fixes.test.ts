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

// Found unpinned by mutation testing (issue 28 item 1). Expectations: the contract in Fixes.ts's documentation and
// decision 0103 ("paths as arrays": object keys and array indexes; `set` needs an existing parent; `remove` and
// `rename` do nothing when the source is absent; a fix shared by several findings is applied once). The linter's
// text editors (apps/lint JsonEdit.ts, YamlEdit.ts) read `op`, so the constructors' shape is part of the contract.
describe("Fixes, edges of the path contract", () => {
  const doc = { a: { b: [1, { c: 2 }] }, d: "x", n: null }

  it("builds the three operations the linter's editors switch on", () => {
    assert.deepStrictEqual(set(["a"], 1), { op: "set", path: ["a"], value: 1 })
    assert.deepStrictEqual(remove(["a"]), { op: "remove", path: ["a"] })
    assert.deepStrictEqual(rename(["a"], "z"), { op: "rename", path: ["a"], to: "z" })
  })

  it("steps into an array only by a non-negative integer index, never by a string key", () => {
    const untouched = [
      set(["a", "b", "1", "c"], 3),
      set(["a", "b", "1"], 3),
      set(["a", "b", 1.5], 3),
      set(["a", "b", -1], 3),
      remove(["a", "b", "1"]),
      remove(["a", "b", 1.5]),
      remove(["a", "b", -1]),
      remove(["a", "b", 2]),
      rename(["a", "b", 0], "z")
    ]
    for (const op of untouched) assert.strictEqual(applyOperation(doc, op), doc, JSON.stringify(op))
    assert.deepStrictEqual(applyOperation(doc, set(["a", "b", 0], "first")), {
      a: { b: ["first", { c: 2 }] },
      d: "x",
      n: null
    })
    assert.deepStrictEqual(applyOperation(doc, remove(["a", "b", 1])), { a: { b: [1] }, d: "x", n: null })
  })

  it("does nothing through a null or a string, or through a key the document only inherits", () => {
    for (
      const op of [
        set(["n", "x", "y"], 1),
        set(["n", "x"], 1),
        remove(["d", 0]),
        remove(["n", "x"]),
        rename(["n", "x"], "y"),
        rename(["d", 0], "y"),
        set(["__proto__", "polluted"], true),
        remove(["__proto__", "toString"]),
        set(["constructor", "name"], "x")
      ]
    ) {
      assert.strictEqual(applyOperation(doc, op), doc, JSON.stringify(op))
    }
  })

  it("applies a fix shared by several findings once, even one whose removal is not idempotent", () => {
    const shared: Fix = { description: "remove the first element", safe: true, operations: [remove(["a", "b", 0])] }
    assert.deepStrictEqual(applyFixes(doc, [shared, shared]), { a: { b: [{ c: 2 }] }, d: "x", n: null })
    const twin: Fix = { ...shared }
    assert.deepStrictEqual(applyFixes(doc, [shared, twin]), { a: { b: [] }, d: "x", n: null })
  })
})
