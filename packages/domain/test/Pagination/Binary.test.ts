// The byte-level pieces of a pagination key, held to the formats they implement rather than to each other: unsigned
// LEB128 (DWARF 5 §7.6), the zigzag mapping of protobuf's sint64, IEEE 754 binary64 in big-endian byte order,
// UTF-8 (RFC 3629, §3 and §4: no overlong forms, nothing above U+10FFFF) as TextEncoder writes it, and WTF-8
// (https://simonsapin.github.io/wtf-8/: an unpaired surrogate is the three-byte generalized UTF-8 of its code unit, a
// paired one is never spelled that way). Found necessary by mutation testing (tools/mutation, docs/testing.md): these
// modules were only tested through whole keys.
import { assert, describe, it } from "@effect/vitest"
import {
  fromCharCodes,
  maxStringBytes,
  readDouble,
  type Reader,
  readSafeInteger,
  readString,
  readVarint,
  writeDouble,
  writeSafeInteger,
  writeString,
  writeVarint
} from "../../src/Pagination/Binary.ts"

const reader = (bytes: ReadonlyArray<number>, end = bytes.length): Reader => ({
  bytes: Uint8Array.from(bytes),
  offset: 0,
  end
})

const written = (write: (out: Uint8Array, offset: number) => number): Array<number> => {
  const out = new Uint8Array(64)
  const end = write(out, 0)
  return [...out.subarray(0, end)]
}

/** A string's bytes as writeString should lay them out: varint length, then the bytes. */
const lengthPrefixed = (bytes: ReadonlyArray<number>): Array<number> => [
  ...written((out, o) => writeVarint(out, o, bytes.length)),
  ...bytes
]

describe("Binary", () => {
  it("writes unsigned LEB128: seven bits a byte, low group first, high bit set on all but the last", () => {
    assert.deepStrictEqual(written((out, o) => writeVarint(out, o, 0)), [0x00])
    assert.deepStrictEqual(written((out, o) => writeVarint(out, o, 127)), [0x7f])
    assert.deepStrictEqual(written((out, o) => writeVarint(out, o, 128)), [0x80, 0x01])
    assert.deepStrictEqual(written((out, o) => writeVarint(out, o, 624485)), [0xe5, 0x8e, 0x26]) // DWARF's example
    assert.deepStrictEqual(written((out, o) => writeVarint(out, o, 2 ** 31 - 1)), [0xff, 0xff, 0xff, 0xff, 0x07])
  })

  it("reads LEB128 below 2^31, refusing a second (non-minimal) spelling, 2^31 and more, and truncation", () => {
    assert.strictEqual(readVarint(reader([0xe5, 0x8e, 0x26])), 624485)
    assert.strictEqual(readVarint(reader([0xff, 0xff, 0xff, 0xff, 0x07])), 2 ** 31 - 1)
    assert.strictEqual(readVarint(reader([0x00])), 0)
    assert.strictEqual(readVarint(reader([0x80, 0x00])), -1) // 0 again, with a trailing zero group
    assert.strictEqual(readVarint(reader([0xff, 0x00])), -1)
    assert.strictEqual(readVarint(reader([0x80, 0x80, 0x80, 0x80, 0x08])), -1) // 2^31
    assert.strictEqual(readVarint(reader([0x80, 0x80, 0x80, 0x80, 0x80, 0x01])), -1) // six groups
    assert.strictEqual(readVarint(reader([0x80])), -1)
    assert.strictEqual(readVarint(reader([0x80, 0x01], 1)), -1) // the range ends before the buffer does
    assert.strictEqual(readVarint(reader([])), -1)
    const r = reader([0x80, 0x01, 0x05])
    assert.strictEqual(readVarint(r), 128)
    assert.strictEqual(r.offset, 2)
  })

  it("writes safe integers zigzag-encoded (0, -1, 1, -2 -> 0, 1, 2, 3) as LEB128", () => {
    const cases: ReadonlyArray<readonly [number, ReadonlyArray<number>]> = [
      [0, [0x00]],
      [-1, [0x01]],
      [1, [0x02]],
      [-2, [0x03]],
      [63, [0x7e]],
      [-64, [0x7f]],
      [64, [0x80, 0x01]],
      [-65, [0x81, 0x01]],
      [8191, [0xfe, 0x7f]],
      [8192, [0x80, 0x80, 0x01]]
    ]
    for (const [value, bytes] of cases) {
      assert.deepStrictEqual(written((out, o) => writeSafeInteger(out, o, value)), bytes, String(value))
      assert.strictEqual(readSafeInteger(reader(bytes)), value, String(value))
    }
    for (const value of [Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 1_733_000_000_000, -1_733_000_000_000]) {
      const bytes = written((out, o) => writeSafeInteger(out, o, value))
      assert.isAtMost(bytes.length, 8, String(value))
      const r = reader(bytes)
      assert.strictEqual(readSafeInteger(r), value)
      assert.strictEqual(r.offset, bytes.length)
    }
  })

  it("refuses a safe integer that is truncated, not minimal, longer than 8 bytes or past 2^53", () => {
    assert.strictEqual(readSafeInteger(reader([])), undefined)
    assert.strictEqual(readSafeInteger(reader([0x80])), undefined)
    assert.strictEqual(readSafeInteger(reader([0x80, 0x01], 1)), undefined)
    assert.strictEqual(readSafeInteger(reader([0x80, 0x00])), undefined)
    assert.strictEqual(readSafeInteger(reader([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01])), undefined)
    // 2^53 (one past MAX_SAFE_INTEGER): the eighth group weighs 2^48, and 0x20 of it is 2^53
    const tooBig = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20]
    assert.strictEqual(readSafeInteger(reader(tooBig)), undefined)
  })

  it("writes doubles as 8 big-endian bytes of IEEE 754 binary64", () => {
    assert.deepStrictEqual(written((out, o) => writeDouble(out, o, 1)), [0x3f, 0xf0, 0, 0, 0, 0, 0, 0])
    assert.deepStrictEqual(written((out, o) => writeDouble(out, o, -2.5)), [0xc0, 0x04, 0, 0, 0, 0, 0, 0])
    assert.strictEqual(readDouble(reader([0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18])), Math.PI)
    assert.strictEqual(readDouble(reader([0x3f, 0xf0, 0, 0, 0, 0, 0])), undefined) // seven bytes
    assert.strictEqual(readDouble(reader([0x3f, 0xf0, 0, 0, 0, 0, 0, 0], 7)), undefined)
    const r = { bytes: Uint8Array.from([9, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0]), offset: 1, end: 9 }
    assert.strictEqual(readDouble(r), 1)
    assert.strictEqual(r.offset, 9)
  })

  it("writes well-formed text as its UTF-8 bytes (as TextEncoder does), length-prefixed, one to four bytes a character", () => {
    const utf8 = new TextEncoder()
    const texts = [
      "",
      "abc",
      "\u007f",
      "\u0080",
      "\u07ff",
      "\u0800",
      "\ud7ff",
      "\ue000",
      "\uffff",
      "\u{10000}",
      "\u{10ffff}",
      "é😀x",
      "x".repeat(127) + "é",
      "é".repeat(200)
    ]
    for (const text of texts) {
      const expected = lengthPrefixed([...utf8.encode(text)])
      const out = new Uint8Array(maxStringBytes(text))
      const end = writeString(out, 0, text)
      assert.deepStrictEqual([...out.subarray(0, end)], expected, JSON.stringify(text))
      assert.strictEqual(readString(reader(expected)), text, JSON.stringify(text))
    }
  })

  it("writes an unpaired surrogate as the three bytes of its code unit (WTF-8) and reads it back intact", () => {
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<number>]> = [
      ["\ud800", [0xed, 0xa0, 0x80]],
      ["\udbff", [0xed, 0xaf, 0xbf]],
      ["\udc00", [0xed, 0xb0, 0x80]],
      ["\udfff", [0xed, 0xbf, 0xbf]],
      ["\ud800a", [0xed, 0xa0, 0x80, 0x61]],
      ["a\ud800", [0x61, 0xed, 0xa0, 0x80]],
      ["\udc00\ud800", [0xed, 0xb0, 0x80, 0xed, 0xa0, 0x80]], // low then high: two unpaired units
      ["\ud800\ud800\udc00", [0xed, 0xa0, 0x80, 0xf0, 0x90, 0x80, 0x80]] // the second high pairs
    ]
    for (const [text, bytes] of cases) {
      const out = new Uint8Array(maxStringBytes(text))
      const end = writeString(out, 0, text)
      assert.deepStrictEqual([...out.subarray(0, end)], lengthPrefixed(bytes), JSON.stringify(text))
      assert.strictEqual(readString(reader(lengthPrefixed(bytes))), text, JSON.stringify(text))
    }
  })

  it("writes at an offset and returns the next one", () => {
    const out = new Uint8Array(16).fill(0xaa)
    assert.strictEqual(writeString(out, 3, "é"), 6)
    assert.deepStrictEqual([...out.subarray(0, 7)], [0xaa, 0xaa, 0xaa, 0x02, 0xc3, 0xa9, 0xaa])
    assert.strictEqual(writeString(out, 8, "ab"), 11)
    assert.deepStrictEqual([...out.subarray(8, 11)], [0x02, 0x61, 0x62])
  })

  it("refuses bytes that are not well-formed WTF-8, keeping one encoding per string", () => {
    const refused: ReadonlyArray<readonly [string, ReadonlyArray<number>]> = [
      ["a lone continuation byte", [0x80]],
      ["C0 and C1 (overlong two-byte forms)", [0xc0, 0x80]],
      ["C1", [0xc1, 0xbf]],
      ["an overlong three-byte form of U+007F", [0xe0, 0x81, 0xbf]],
      ["an overlong three-byte form of U+07FF", [0xe0, 0x9f, 0xbf]],
      ["an overlong four-byte form of U+FFFF", [0xf0, 0x8f, 0xbf, 0xbf]],
      ["a code point above U+10FFFF", [0xf4, 0x90, 0x80, 0x80]],
      ["F5, never a lead byte", [0xf5, 0x80, 0x80, 0x80]],
      ["FF", [0xff]],
      ["a two-byte form without its continuation", [0xc3, 0x41]],
      ["a three-byte form with a bad second byte", [0xe2, 0x41, 0x80]],
      ["a three-byte form with a bad third byte", [0xe2, 0x82, 0x41]],
      ["a four-byte form with a bad second byte", [0xf0, 0x41, 0x80, 0x80]],
      ["a four-byte form with a bad third byte", [0xf0, 0x90, 0x41, 0x80]],
      ["a four-byte form with a bad fourth byte", [0xf0, 0x90, 0x80, 0x41]],
      ["a surrogate pair spelled as two three-byte forms", [0xed, 0xa0, 0x80, 0xed, 0xb0, 0x80]],
      ["a truncated two-byte form", [0xc3]],
      ["a truncated three-byte form", [0xe2, 0x82]],
      ["a truncated four-byte form", [0xf0, 0x90, 0x80]]
    ]
    for (const [what, bytes] of refused) {
      assert.strictEqual(readString(reader(lengthPrefixed(bytes))), undefined, what)
    }
  })

  it("reads a string only within its declared length and its range, and moves past it", () => {
    // the declared length cuts a character in two, though the buffer holds the rest of it
    for (const bytes of [[0x01, 0xc3, 0xa9], [0x02, 0xe2, 0x82, 0xac], [0x03, 0xf0, 0x9f, 0x98, 0x80]]) {
      assert.strictEqual(readString(reader(bytes)), undefined, JSON.stringify(bytes))
    }
    assert.strictEqual(readString(reader([0x03, 0x61, 0x62])), undefined) // length past the end
    assert.strictEqual(readString(reader([0x02, 0x61, 0x62], 2)), undefined) // past the range's end
    assert.strictEqual(readString(reader([0x80])), undefined) // a malformed length
    const r = reader([0x02, 0xc3, 0xa9, 0x01, 0x61])
    assert.strictEqual(readString(r), "é")
    assert.strictEqual(r.offset, 3)
    assert.strictEqual(readString(r), "a")
    assert.strictEqual(r.offset, 5)
  })

  it("builds strings of any length from code units, past the chunk it passes to fromCharCode", () => {
    for (const length of [0, 1, 8191, 8192, 8193, 20_000]) {
      const codes = Array.from({ length }, (_, i) => 0x41 + (i % 26))
      const text = fromCharCodes(codes)
      assert.strictEqual(text.length, length)
      assert.isTrue([...text].every((ch, i) => ch.charCodeAt(0) === codes[i]), String(length))
    }
    const long = "é".repeat(10_000) + "\ud800"
    const out = new Uint8Array(maxStringBytes(long))
    const end = writeString(out, 0, long)
    assert.strictEqual(readString(reader([...out.subarray(0, end)])), long)
  })
})
