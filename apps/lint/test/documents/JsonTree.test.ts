import { assert, describe, it } from "@effect/vitest"
import * as JsonTree from "../../src/documents/JsonTree.ts"
import { mulberry32 } from "../support/Corpus.ts"

const WS = [" ", "\t", "\n", "\r\n", "  "]
const CHARS = ["a", "Z", "é", "Š", "日", "😀", "\"", "\\", "/", "\n", "\t", "\u0001", "\u2028", " ", "'", "{", "]"]
const NUMBERS = ["0", "-0", "1", "-12", "3.25", "1e3", "-2.5E-7", "6.02e+23", "123456789012345678901234567890", "0.1"]

/** A random JSON text, written with random whitespace and escapes, as editors and tools write it. */
const randomJson = (rnd: () => number, depth = 0): string => {
  const ws = () => (rnd() < 0.5 ? "" : WS[Math.floor(rnd() * WS.length)]!)
  const pick = <A>(xs: ReadonlyArray<A>) => xs[Math.floor(rnd() * xs.length)]!
  const str = () => {
    const chars = Array.from({ length: Math.floor(rnd() * 6) }, () => pick(CHARS)).join("")
    // JSON.stringify escapes what must be; some strings also get \uXXXX escapes of plain characters.
    const text = JSON.stringify(chars)
    return rnd() < 0.2 ? text.replace(/a/g, "\\u0061") : text
  }
  const r = rnd()
  if (depth < 4 && r < 0.3) {
    const n = Math.floor(rnd() * 5)
    const keys = Array.from({ length: n }, () => (rnd() < 0.2 ? "\"dup\"" : str()))
    return `{${ws()}${keys.map((k) => `${k}${ws()}:${ws()}${randomJson(rnd, depth + 1)}${ws()}`).join(`,${ws()}`)}}`
  }
  if (depth < 4 && r < 0.5) {
    const n = Math.floor(rnd() * 5)
    return `[${ws()}${Array.from({ length: n }, () => randomJson(rnd, depth + 1)).join(`${ws()},${ws()}`)}${ws()}]`
  }
  if (r < 0.7) return str()
  if (r < 0.85) return pick(NUMBERS)
  return pick(["true", "false", "null"])
}

/** The value a tree holds, as `JSON.parse` would build it. */
const valueOf = (node: JsonTree.JsonNode): unknown => {
  if (node.type === "scalar") return node.value
  if (node.type === "array") return node.items.map(valueOf)
  const out: Record<string, unknown> = {}
  for (const m of node.members) {
    if (m.key === "__proto__") Object.defineProperty(out, m.key, { value: valueOf(m.value), enumerable: true })
    else out[m.key] = valueOf(m.value)
  }
  return out
}

/** Every range points at its own token: scalars and keys re-parse to their values, collections at their brackets. */
const checkRanges = (text: string, node: JsonTree.JsonNode) => {
  if (node.type === "scalar") {
    assert.deepStrictEqual(JSON.parse(text.slice(node.start, node.end)), node.value)
    return
  }
  assert.strictEqual(text[node.start], node.type === "object" ? "{" : "[")
  assert.strictEqual(text[node.end - 1], node.type === "object" ? "}" : "]")
  if (node.type === "array") node.items.forEach((item) => checkRanges(text, item))
  else {
    for (const m of node.members) {
      assert.strictEqual(JSON.parse(text.slice(m.keyStart, m.keyEnd)), m.key)
      checkRanges(text, m.value)
    }
  }
}

describe("JsonTree", () => {
  it("parses 3,000 random JSON texts to JSON.parse's value, each range on its own token", () => {
    const rnd = mulberry32(2026)
    for (let k = 0; k < 3_000; k++) {
      const body = randomJson(rnd)
      const text = (rnd() < 0.1 ? "\ufeff" : "") + (rnd() < 0.3 ? " \n" : "") + body + (rnd() < 0.3 ? "\n" : "")
      const tree = JsonTree.parse(text)
      assert.deepStrictEqual(valueOf(tree), JSON.parse(text.replace(/^\ufeff/, "")), text)
      checkRanges(text, tree)
    }
  })

  it("refuses what JSON.parse refuses, at an offset inside the text", () => {
    const rnd = mulberry32(7)
    let refused = 0
    for (let k = 0; k < 3_000; k++) {
      const good = randomJson(rnd)
      // one character removed, doubled or replaced
      const at = Math.floor(rnd() * good.length)
      const r = rnd()
      const bad = r < 0.33
        ? good.slice(0, at) + good.slice(at + 1)
        : r < 0.66
        ? good.slice(0, at) + good[at] + good.slice(at)
        : good.slice(0, at) + "x" + good.slice(at + 1)
      let expected = true
      try {
        JSON.parse(bad)
      } catch {
        expected = false
      }
      if (expected) {
        assert.deepStrictEqual(valueOf(JsonTree.parse(bad)), JSON.parse(bad), bad)
        continue
      }
      refused++
      try {
        JsonTree.parse(bad)
        assert.fail(`accepted ${JSON.stringify(bad)}`)
      } catch (error) {
        assert.instanceOf(error, JsonTree.JsonSyntaxError, bad)
        const offset = (error as JsonTree.JsonSyntaxError).offset
        assert.isTrue(offset >= 0 && offset <= bad.length, `${offset} in ${JSON.stringify(bad)}`)
      }
    }
    assert.isAbove(refused, 1_000)
  })

  it("says where and why, for the messages the linter reports", () => {
    const cases: ReadonlyArray<[string, number, string]> = [
      ["{\"a\": 1,}", 8, "expected a property name in double quotes, found \"}\""],
      ["{\"a\" 1}", 5, "expected \":\" after property name, found \"1\""],
      ["[1 2]", 3, "expected \",\" or \"]\" after array element, found \"2\""],
      ["{\"a\": tru}", 6, "unexpected \"t\""],
      ["\"abc", 0, "unterminated string"],
      ["\"a\\x\"", 0, "invalid escape in string"],
      ["\"a\u0001\"", 2, "control character in string"],
      ["{} x", 3, "unexpected \"x\" after the JSON value"],
      ["", 0, "unexpected end of input"]
    ]
    for (const [text, offset, message] of cases) {
      try {
        JsonTree.parse(text)
        assert.fail(`accepted ${JSON.stringify(text)}`)
      } catch (error) {
        assert.instanceOf(error, JsonTree.JsonSyntaxError)
        assert.strictEqual((error as JsonTree.JsonSyntaxError).message, message, text)
        assert.strictEqual((error as JsonTree.JsonSyntaxError).offset, offset, text)
      }
    }
  })

  it("reads a number of any length, as JSON.parse does", () => {
    const long = "9".repeat(1_000)
    const tree = JsonTree.parse(`{"n": ${long}}`)
    assert.deepStrictEqual(valueOf(tree), { n: Number(long) })
    assert.deepStrictEqual(JsonTree.rangeOf(tree, ["n"]), { start: 1, end: 4 })
  })
})
