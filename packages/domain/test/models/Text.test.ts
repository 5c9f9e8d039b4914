import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import {
  firstInvalidUtf8,
  firstUnacceptableText,
  jsonPathAt,
  mayHoldUnacceptableEscape,
  textProblem
} from "../../src/models/Text.ts"

const bytes = (...values: ReadonlyArray<number>) => new Uint8Array(values)
const utf8 = (text: string) => new TextEncoder().encode(text)

describe("textProblem", () => {
  it("accepts ordinary text, other control characters and paired surrogates", () => {
    for (const text of ["", "Zoë", "tab\there", "😀", "\u001f", "\uffff"]) assert.isUndefined(textProblem(text))
  })

  it("refuses NUL anywhere", () => {
    for (const text of ["\u0000", "a\u0000b", "ab\u0000"]) {
      assert.strictEqual(textProblem(text), "must not contain the NUL character (\\u0000)")
    }
  })

  it("refuses unpaired surrogates, high or low, alone or reversed", () => {
    for (const text of ["\ud800", "a\udfffb", "\ude00\ud83d", "x\ud83d"]) {
      assert.include(textProblem(text) ?? "", "unpaired UTF-16 surrogate")
    }
  })
})

describe("firstUnacceptableText", () => {
  it("finds nothing in acceptable JSON, whatever its shape", () => {
    assert.isUndefined(firstUnacceptableText({ a: [1, "b", { c: null, d: true }], e: "😀" }))
    assert.isUndefined(firstUnacceptableText(null))
    assert.isUndefined(firstUnacceptableText("plain"))
  })

  it("names the first offending value by its path, in document order", () => {
    const found = firstUnacceptableText({
      tasks: [{ to_number: "+1" }, { to_number: "+2", metadata: { note: "a\u0000", later: "\ud800" } }]
    })
    assert.deepStrictEqual(found, {
      path: ["tasks", 1, "metadata", "note"],
      problem: "must not contain the NUL character (\\u0000)",
      value: "a\u0000",
      inName: false
    })
  })

  it("checks field names, before their values", () => {
    const found = firstUnacceptableText({ custom_fields: { "ci\u0000ty": "\u0000" } })
    assert.deepStrictEqual(found?.path, ["custom_fields", "ci\u0000ty"])
    assert.isTrue(found?.inName)
  })

  it("finds a string at the root and in nested arrays", () => {
    assert.deepStrictEqual(firstUnacceptableText("\ud800")?.path, [])
    assert.deepStrictEqual(firstUnacceptableText({ a: [[["ok", "\udc00"]]] })?.path, ["a", 0, 0, 1])
  })
})

describe("mayHoldUnacceptableEscape", () => {
  it("spots \\u0000 and surrogate escapes in either case", () => {
    for (const json of ["\"\\u0000\"", "\"a\\ud800\"", "\"\\uDFFF\"", "{\"k\\uDbFf\":1}", "\"\\ud83d\\ude00\""]) {
      assert.isTrue(mayHoldUnacceptableEscape(utf8(json)), json)
    }
  })

  it("passes bodies without them: other escapes, raw non-ASCII text, a cut-off escape", () => {
    for (
      const json of ["{\"a\":1}", "\"\\u00e9\\n\\\\\"", "\"Zoë 😀\"", "\"\\u000\"", "\"\\ucfff\"", "\"\\u\"", "\\"]
    ) {
      assert.isFalse(mayHoldUnacceptableEscape(utf8(json)), json)
    }
  })
})

describe("firstInvalidUtf8", () => {
  it("accepts UTF-8 of every length", () => {
    assert.strictEqual(firstInvalidUtf8(utf8("a é € 😀 \uffff \u{10ffff}")), -1)
    assert.strictEqual(firstInvalidUtf8(bytes()), -1)
  })

  it("points at the first byte of a bad sequence", () => {
    assert.strictEqual(firstInvalidUtf8(bytes(0x61, 0xff, 0x62)), 1) // never a lead byte
    assert.strictEqual(firstInvalidUtf8(bytes(0x61, 0x80)), 1) // a lone continuation byte
    assert.strictEqual(firstInvalidUtf8(bytes(0xc0, 0xaf)), 0) // overlong "/"
    assert.strictEqual(firstInvalidUtf8(bytes(0xe0, 0x80, 0xaf)), 0) // overlong, three bytes
    assert.strictEqual(firstInvalidUtf8(bytes(0xed, 0xa0, 0x80)), 0) // U+D800 encoded
    assert.strictEqual(firstInvalidUtf8(bytes(0xf4, 0x90, 0x80, 0x80)), 0) // above U+10FFFF
    assert.strictEqual(firstInvalidUtf8(bytes(0x61, 0xe2, 0x82)), 1) // cut short by the end
    assert.strictEqual(firstInvalidUtf8(bytes(0xe2, 0x28, 0xa1)), 0) // a bad continuation byte
  })

  const decoder = new TextDecoder("utf-8", { fatal: true })
  const isUtf8 = (input: Uint8Array) => {
    try {
      decoder.decode(input)
      return true
    } catch {
      return false
    }
  }
  const Byte = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 255 }))

  it.prop("agrees with a fatal TextDecoder on any bytes", [Schema.Uint8Array], ([input]) => {
    assert.strictEqual(firstInvalidUtf8(input) === -1, isUtf8(input))
  }, { arbitrary: { runs: 2000 } })

  it.prop(
    "agrees with a fatal TextDecoder on text with one byte changed",
    [Schema.String, Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 10_000 })), Byte],
    ([text, at, byte]) => {
      const input = utf8(text)
      if (input.length > 0) input[at % input.length] = byte
      assert.strictEqual(firstInvalidUtf8(input) === -1, isUtf8(input))
    },
    { arbitrary: { runs: 2000 } }
  )

  it.prop("finds the exact offset of an invalid byte placed in valid text", [Schema.String, Schema.String], ([
    before,
    after
  ]) => {
    const head = utf8(before)
    assert.strictEqual(firstInvalidUtf8(new Uint8Array([...head, 0xff, ...utf8(after)])), head.length)
  })
})

describe("jsonPathAt", () => {
  const at = (json: string, marker: string) => jsonPathAt(json, json.indexOf(marker))

  it("names the value that holds the offset", () => {
    const json = "{\"from_number\":\"+1\",\"tasks\":[{\"to_number\":\"+2\"},{\"to_number\":\"X\",\"n\":[1,\"Y\"]}]}"
    assert.deepStrictEqual(at(json, "X"), ["tasks", 1, "to_number"])
    assert.deepStrictEqual(at(json, "Y"), ["tasks", 1, "n", 1])
    assert.deepStrictEqual(at(json, "+1"), ["from_number"])
  })

  it("names a field name that holds the offset", () => {
    const json = "{\"custom_fields\":{\"plan\":\"a\",\"ciXty\":\"b\"}}"
    assert.deepStrictEqual(at(json, "X"), ["custom_fields", "ciXty"])
  })

  it("reads keys with escapes and ignores what follows the offset", () => {
    const json = "{\"a\\\"b\":{\"c\":\"X\" , broken"
    assert.deepStrictEqual(at(json, "X"), ["a\"b", "c"])
  })

  it("is undefined outside a string", () => {
    assert.isUndefined(jsonPathAt("{\"a\": 1X}", 8))
    assert.isUndefined(jsonPathAt("[1, 2]", 1))
  })

  it("names the root string", () => {
    assert.deepStrictEqual(jsonPathAt("\"aXb\"", 2), [])
  })
})
