import { assert, describe, it } from "@effect/vitest"
import { Redacted, Result, Schema } from "effect"
import { OrgId } from "../src/models/Ids.ts"
import {
  type CursorContext,
  CursorError,
  CursorPosition,
  type CursorPosition as Position,
  isAfter,
  keysetOrder,
  keysetPage,
  keysetSeek,
  makeCursorCodec,
  maxKeyLength,
  minimumSecretBytes,
  queryFingerprint,
  type SortDirection,
  SortValue
} from "../src/Pagination.ts"
import * as Base64Url from "../src/Pagination/Base64Url.ts"
import { canonicalJson } from "../src/Pagination/CanonicalJson.ts"
import { hmacSha256, sha256 } from "../src/Pagination/Sha256.ts"

const text = (value: string): Uint8Array => Uint8Array.from(value, (c) => c.charCodeAt(0))
const hex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
const fromHex = (value: string): Uint8Array => Uint8Array.from(value.match(/../g) ?? [], (h) => parseInt(h, 16))

const SECRET = "test secret: 32 bytes or more, never used in production"
const OTHER_SECRET = "another secret of at least thirty-two bytes"
const contactsQuery = { resource: "contacts", sort_order: "desc", search_query: "ann" }
const context: CursorContext = { orgId: OrgId.make("org_1"), queryFingerprint: queryFingerprint(contactsQuery) }
const codec = makeCursorCodec({ secret: SECRET })
const position: Position = { sortValue: 1_718_123_456_789, id: "3f2b1c9e-8d7a-4b6f-9e0d-1a2b3c4d5e6f" }

const errorTags = new Set(CursorError.members.map((member) => member.identifier))

/** Asserts that decoding failed with a typed cursor error, and returns its tag. */
const failureTag = (result: Result.Result<Position, CursorError>): string => {
  assert.isTrue(Result.isFailure(result), "expected the key to be refused")
  if (Result.isSuccess(result)) return "Success"
  assert.isTrue(errorTags.has(result.failure._tag), `unexpected error ${result.failure._tag}`)
  return result.failure._tag
}

const decodedBytes = (key: string): Uint8Array => {
  const bytes = new Uint8Array(Base64Url.decodedLength(key.length))
  assert.strictEqual(Base64Url.decodeInto(key, bytes), bytes.length)
  return bytes
}

describe("Sha256", () => {
  // FIPS 180-2 appendix B and the NIST example values; boundary lengths checked against OpenSSL.
  const vectors: ReadonlyArray<readonly [string, string]> = [
    ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    [
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    ],
    [
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn" +
      "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
    ],
    ["a".repeat(55), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"],
    ["a".repeat(56), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"],
    ["a".repeat(63), "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"],
    ["a".repeat(64), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"],
    ["a".repeat(119), "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"],
    ["a".repeat(120), "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"],
    ["a".repeat(128), "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"]
  ]
  for (const [message, digest] of vectors) {
    it(`hashes a ${message.length}-byte message like FIPS 180-4`, () => {
      assert.strictEqual(hex(sha256(text(message))), digest)
    })
  }

  it("hashes one million 'a' like FIPS 180-2 appendix B.3", () => {
    assert.strictEqual(
      hex(sha256(new Uint8Array(1_000_000).fill(0x61))),
      "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
    )
  })
})

describe("HmacSha256", () => {
  const largeKey = new Uint8Array(131).fill(0xaa)
  // RFC 4231 §4.2 to §4.8.
  const cases: ReadonlyArray<readonly [string, Uint8Array, Uint8Array, string]> = [
    [
      "1",
      new Uint8Array(20).fill(0x0b),
      text("Hi There"),
      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
    ],
    [
      "2 (key shorter than the output)",
      text("Jefe"),
      text("what do ya want for nothing?"),
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    ],
    [
      "3",
      new Uint8Array(20).fill(0xaa),
      new Uint8Array(50).fill(0xdd),
      "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
    ],
    [
      "4",
      fromHex("0102030405060708090a0b0c0d0e0f10111213141516171819"),
      new Uint8Array(50).fill(0xcd),
      "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
    ],
    [
      "6 (key larger than a block)",
      largeKey,
      text("Test Using Larger Than Block-Size Key - Hash Key First"),
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
    ],
    [
      "7 (key and data larger than a block)",
      largeKey,
      text(
        "This is a test using a larger than block-size key and a larger than block-size data. " +
          "The key needs to be hashed before being used by the HMAC algorithm."
      ),
      "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
    ]
  ]
  for (const [name, key, data, mac] of cases) {
    it(`matches RFC 4231 test case ${name}`, () => {
      assert.strictEqual(hex(hmacSha256(key, data)), mac)
    })
  }

  it("truncates to the leftmost 128 bits like RFC 4231 test case 5", () => {
    assert.strictEqual(
      hex(hmacSha256(new Uint8Array(20).fill(0x0c), text("Test With Truncation"), 16)),
      "a3b6167473100ee06e0c796c2955552b"
    )
  })
})

describe("Base64Url", () => {
  it.prop("round-trips any bytes", [Schema.Uint8Array], ([bytes]) => {
    const encoded = Base64Url.encode(bytes)
    assert.match(encoded, /^[A-Za-z0-9_-]*$/)
    const decoded = new Uint8Array(bytes.length)
    assert.strictEqual(Base64Url.decodeInto(encoded, decoded), bytes.length)
    assert.deepStrictEqual(decoded, bytes)
  })

  it("refuses padding, other alphabets, impossible lengths and non-zero trailing bits", () => {
    const out = new Uint8Array(16)
    for (const input of ["AA==", "AA=", "+/8", "a b", "A", "AAAAA", "AB", "AAB", "é", "\u0141A"]) {
      assert.strictEqual(Base64Url.decodeInto(input, out), -1, input)
    }
    assert.strictEqual(Base64Url.decodeInto("AA", out), 1)
    assert.strictEqual(Base64Url.decodeInto("AAA", out), 2)
  })
})

describe("CanonicalJson", () => {
  it("sorts keys at every depth and keeps array order", () => {
    assert.strictEqual(
      canonicalJson({ b: [3, { z: 1, a: 2 }], a: "x", c: undefined }),
      `{"a":"x","b":[3,{"a":2,"z":1}]}`
    )
  })

  it("is total on values JSON.stringify throws on", () => {
    const cyclic: Record<string, unknown> = { a: 1 }
    cyclic["self"] = cyclic
    assert.strictEqual(canonicalJson(cyclic), `{"a":1,"self":null}`)
    assert.strictEqual(canonicalJson({ n: 10n }), `{"n":10}`)
    assert.strictEqual(canonicalJson([undefined, NaN, -0]), "[null,null,0]")
  })
})

describe("queryFingerprint", () => {
  it("ignores the order of keys in the request", () => {
    assert.strictEqual(
      queryFingerprint({
        sort_order: "asc",
        filter_criteria: { external_id: { type: "string", value: "x" }, custom_fields: [] }
      }),
      queryFingerprint({
        filter_criteria: { custom_fields: [], external_id: { value: "x", type: "string" } },
        sort_order: "asc"
      })
    )
  })

  it.prop(
    "is the same for any permutation of an object's keys",
    [Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Finite, Schema.Boolean]))],
    ([record]) => {
      const reversed = Object.fromEntries(Object.entries(record).reverse())
      assert.strictEqual(queryFingerprint(reversed), queryFingerprint(record))
    }
  )

  it("changes with any filter, search or sort value", () => {
    const fingerprints = new Set([
      queryFingerprint(contactsQuery),
      queryFingerprint({ ...contactsQuery, sort_order: "asc" }),
      queryFingerprint({ ...contactsQuery, search_query: "anna" }),
      queryFingerprint({ ...contactsQuery, filter_criteria: { external_id: { type: "string", value: "1" } } }),
      queryFingerprint({ ...contactsQuery, resource: "batch-tests" })
    ])
    assert.strictEqual(fingerprints.size, 5)
  })

  it("is eight base64url characters", () => {
    assert.match(queryFingerprint({}), /^[A-Za-z0-9_-]{8}$/)
  })
})

describe("CursorCodec", () => {
  it("mints URL-safe, deterministic keys", () => {
    const key = codec.encode(position, context)
    assert.match(key, /^o[A-Za-z0-9_-]+$/)
    assert.strictEqual(codec.encode(position, context), key)
  })

  it.prop(
    "decodes every key to the position it was minted from",
    [CursorPosition, Schema.String, Schema.Unknown],
    ([minted, orgId, query]) => {
      // any text binds a key, the empty and over-long ones too: a type-level brand only, so the property keeps them
      const bound: CursorContext = { orgId: orgId as OrgId, queryFingerprint: queryFingerprint(query) }
      assert.deepStrictEqual(codec.decode(codec.encode(minted, bound), bound), Result.succeed(minted))
    },
    { timeout: 15_000, arbitrary: { runs: 500 } }
  )

  it.prop(
    "round-trips millisecond timestamps and ids of every shape",
    [Schema.Int.check(Schema.isBetween({ minimum: -(2 ** 53) + 1, maximum: 2 ** 53 - 1 })), Schema.String],
    ([sortValue, id]) => {
      const minted: Position = { sortValue, id }
      assert.deepStrictEqual(codec.decode(codec.encode(minted, context), context), Result.succeed(minted))
    }
  )

  it("keeps -0, fractions, extreme doubles and the safe-integer bounds exact", () => {
    const integers = [0, -1, 63, -64, 64, 2 ** 52 + 1, -(2 ** 52) - 1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]
    const doubles = [-0, 0.1, -1e-300, Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 53, -(2 ** 60)]
    for (const sortValue of [...integers, ...doubles]) {
      const result = codec.decode(codec.encode({ sortValue, id: "x" }, context), context)
      assert.isTrue(Result.isSuccess(result) && Object.is(result.success.sortValue, sortValue), String(sortValue))
    }
  })

  it("keeps unpaired surrogates and astral characters in ids", () => {
    for (const id of ["\ud800", "\udc00", "a\ud83d", "\ud83d\ude00", "\udc00\ud800", "ü€😀"]) {
      assert.deepStrictEqual(
        codec.decode(codec.encode({ sortValue: "é", id }, context), context),
        Result.succeed({ sortValue: "é", id })
      )
    }
  })

  it.prop("refuses any string with a typed error and never throws", [Schema.String], ([input]) => {
    failureTag(codec.decode(input, context))
  }, { arbitrary: { runs: 500 } })

  it.prop("refuses random bytes in base64url", [Schema.Uint8Array], ([bytes]) => {
    failureTag(codec.decode(Base64Url.encode(bytes), context))
    // Also past the marker check: a plausible first byte, then noise.
    failureTag(codec.decode(Base64Url.encode(Uint8Array.of(0xa1, ...bytes)), context))
  }, { arbitrary: { runs: 500 } })

  it("refuses empty, huge, padded and non-base64url input as malformed", () => {
    const key = codec.encode(position, context)
    for (const input of ["", "=", "o", key + "=", key.replace(/.$/, "+"), " " + key, "x".repeat(10_000_000)]) {
      assert.strictEqual(failureTag(codec.decode(input, context)), "CursorMalformed")
    }
    assert.strictEqual(failureTag(codec.decode("A".repeat(maxKeyLength + 4), context)), "CursorMalformed")
  })

  it("mints keys up to maxKeyLength for ids and sort values of a few KB, and refuses longer ones", () => {
    const long: Position = { sortValue: "s".repeat(1000), id: "i".repeat(2000) }
    const key = codec.encode(long, context)
    assert.isAtMost(key.length, maxKeyLength)
    assert.deepStrictEqual(codec.decode(key, context), Result.succeed(long))
    const tooLong = codec.encode({ sortValue: 0, id: "i".repeat(4000) }, context)
    assert.strictEqual(failureTag(codec.decode(tooLong, context)), "CursorMalformed")
  })

  it("refuses a value that is not a string at all, as untyped JSON may send", () => {
    // JSON.parse returns untyped values: this is what a handler without a schema would pass on.
    for (const raw of ["123", "null", "{}", "[\"key\"]"]) {
      assert.strictEqual(failureTag(codec.decode(JSON.parse(raw), context)), "CursorMalformed")
    }
  })

  it("refuses every truncation and every extension of a valid key", () => {
    const key = codec.encode(position, context)
    for (let length = 0; length < key.length; length++) failureTag(codec.decode(key.slice(0, length), context))
    for (const suffix of ["A", "AA", "AAA", "AAAA", "w", "_-_"]) failureTag(codec.decode(key + suffix, context))
  })

  it("refuses every single-bit flip of a valid key's bytes", () => {
    const key = codec.encode(position, context)
    const bytes = decodedBytes(key)
    for (let bit = 0; bit < bytes.length * 8; bit++) {
      const flipped = Uint8Array.from(bytes)
      flipped[bit >>> 3] = flipped[bit >>> 3]! ^ (1 << (bit & 7))
      failureTag(codec.decode(Base64Url.encode(flipped), context))
    }
  })

  it("refuses every single-bit flip of a valid key's characters", () => {
    const key = codec.encode(position, context)
    for (let i = 0; i < key.length; i++) {
      for (let bit = 0; bit < 16; bit++) {
        const flipped = key.slice(0, i) + String.fromCharCode(key.charCodeAt(i) ^ (1 << bit)) + key.slice(i + 1)
        failureTag(codec.decode(flipped, context))
      }
    }
  })

  it("refuses a key minted for another organization", () => {
    const key = codec.encode(position, context)
    assert.strictEqual(failureTag(codec.decode(key, { ...context, orgId: OrgId.make("org_2") })), "CursorForeign")
  })

  it("refuses a key used with another query", () => {
    const key = codec.encode(position, context)
    const otherSort = { ...context, queryFingerprint: queryFingerprint({ ...contactsQuery, sort_order: "asc" }) }
    assert.strictEqual(failureTag(codec.decode(key, otherSort)), "CursorQueryMismatch")
  })

  it("accepts a key with the same query written in another key order", () => {
    const key = codec.encode(position, context)
    const reordered = { search_query: "ann", sort_order: "desc", resource: "contacts" }
    assert.deepStrictEqual(
      codec.decode(key, { ...context, queryFingerprint: queryFingerprint(reordered) }),
      Result.succeed(position)
    )
  })

  it("refuses a key of another format version as stale, before checking its tag", () => {
    const bytes = decodedBytes(codec.encode(position, context))
    for (const marker of [0xa0, 0xa2, 0xaf]) {
      bytes[0] = marker
      const result = codec.decode(Base64Url.encode(bytes), context)
      assert.strictEqual(failureTag(result), "CursorStale")
      assert.isTrue(Result.isFailure(result) && "version" in result.failure && result.failure.version === marker - 0xa0)
    }
  })

  it("refuses a key signed with another secret as tampered", () => {
    const key = makeCursorCodec({ secret: OTHER_SECRET }).encode(position, context)
    assert.strictEqual(failureTag(codec.decode(key, context)), "CursorTampered")
  })

  it("accepts keys signed with a previous secret during rotation, and signs only with the current one", () => {
    const before = makeCursorCodec({ secret: SECRET })
    const after = makeCursorCodec({ secret: OTHER_SECRET, previousSecrets: [SECRET] })
    const retired = makeCursorCodec({ secret: OTHER_SECRET })
    const oldKey = before.encode(position, context)
    assert.deepStrictEqual(after.decode(oldKey, context), Result.succeed(position))
    assert.strictEqual(failureTag(retired.decode(oldKey, context)), "CursorTampered")
    const newKey = after.encode(position, context)
    assert.strictEqual(newKey, retired.encode(position, context))
    assert.strictEqual(failureTag(before.decode(newKey, context)), "CursorTampered")
  })

  it("treats string, byte and redacted secrets alike", () => {
    const key = codec.encode(position, context)
    for (const secret of [text(SECRET), Redacted.make(SECRET), Redacted.make(text(SECRET))]) {
      assert.strictEqual(makeCursorCodec({ secret }).encode(position, context), key)
    }
  })

  it("refuses to start with a secret shorter than 32 bytes", () => {
    assert.throws(() => makeCursorCodec({ secret: "too short" }), /at least 32/)
    assert.throws(() => makeCursorCodec({ secret: SECRET, previousSecrets: [""] }), /at least 32/)
  })

  it("explains every refusal in words a client can act on", () => {
    const key = codec.encode(position, context)
    const bytes = decodedBytes(key)
    bytes[0] = 0xa7
    const refusals = [
      codec.decode("%%%", context),
      codec.decode(makeCursorCodec({ secret: OTHER_SECRET }).encode(position, context), context),
      codec.decode(key, { ...context, orgId: OrgId.make("org_2") }),
      codec.decode(key, { ...context, queryFingerprint: queryFingerprint({}) }),
      codec.decode(Base64Url.encode(bytes), context)
    ]
    const tags = new Set<string>()
    for (const result of refusals) {
      tags.add(failureTag(result))
      if (Result.isFailure(result)) {
        assert.include(result.failure.message, "pagination_key")
        assert.include(result.failure.message, "start again without pagination_key")
      }
    }
    assert.strictEqual(tags.size, 5)
  })
})

describe("Keyset", () => {
  const rows: ReadonlyArray<Position> = [
    { sortValue: 3, id: "b" },
    { sortValue: 3, id: "a" },
    { sortValue: 1, id: "c" },
    { sortValue: 2, id: "a" }
  ]

  it("orders by sort value then id, both in the listing's direction", () => {
    const ids = (direction: SortDirection) =>
      [...rows].sort(keysetOrder(direction)).map((row) => `${row.sortValue}${row.id}`)
    assert.deepStrictEqual(ids("desc"), ["3b", "3a", "2a", "1c"])
    assert.deepStrictEqual(ids("asc"), ["1c", "2a", "3a", "3b"])
  })

  it("describes the seek condition without SQL", () => {
    assert.deepStrictEqual(keysetSeek("desc", { sortValue: 3, id: "a" }), {
      direction: "desc",
      operator: "<",
      sortValue: 3,
      id: "a"
    })
    assert.strictEqual(keysetSeek("asc", { sortValue: 3, id: "a" }).operator, ">")
    assert.isTrue(isAfter("desc", { sortValue: 3, id: "b" }, { sortValue: 3, id: "a" }))
    assert.isFalse(isAfter("desc", { sortValue: 3, id: "a" }, { sortValue: 3, id: "a" }))
    assert.isTrue(isAfter("asc", { sortValue: 3, id: "a" }, { sortValue: 3, id: "b" }))
  })

  it("cuts a page from limit + 1 rows", () => {
    const sorted = [...rows].sort(keysetOrder("desc"))
    const page = keysetPage(sorted, 2, (row) => row)
    assert.deepStrictEqual(page, { items: sorted.slice(0, 2), hasMore: true, last: sorted[1] })
    assert.deepStrictEqual(keysetPage(sorted.slice(0, 2), 2, (row) => row), {
      items: sorted.slice(0, 2),
      hasMore: false,
      last: sorted[1]
    })
    assert.deepStrictEqual(keysetPage([], 2, (row: Position) => row), { items: [], hasMore: false, last: undefined })
  })

  const Row = Schema.Struct({
    sortValue: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 4 })),
    id: Schema.String
  })
  const PageSize = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5 }))

  it.prop(
    "pages through ties and changing page sizes visiting every row exactly once",
    [Schema.Array(Row), Schema.NonEmptyArray(PageSize), Schema.Literals(["asc", "desc"])],
    ([generated, sizes, direction]) => {
      // One row per id, as a primary key guarantees.
      const table = [...new Map(generated.map((row) => [row.id, row])).values()]
      const expected = [...table].sort(keysetOrder(direction))
      const seen: Array<Position> = []
      let key: string | undefined
      for (let request = 0; request <= table.length; request++) {
        const limit = sizes[request % sizes.length]!
        let after: Position | undefined
        if (key !== undefined) {
          const decoded = codec.decode(key, context)
          assert.isTrue(Result.isSuccess(decoded))
          if (Result.isSuccess(decoded)) after = decoded.success
        }
        const candidates = expected.filter((row) => after === undefined || isAfter(direction, after, row))
        const page = keysetPage(candidates.slice(0, limit + 1), limit, (row) => row)
        seen.push(...page.items)
        if (!page.hasMore || page.last === undefined) break
        key = codec.encode(page.last, context)
      }
      assert.deepStrictEqual(seen, expected)
    }
  )

  it.prop("sort values of either type order totally", [SortValue, SortValue], ([a, b]) => {
    const order = keysetOrder("asc")
    const x: Position = { sortValue: a, id: "x" }
    const y: Position = { sortValue: b, id: "y" }
    assert.strictEqual(order(x, y), -order(y, x) || 0)
  })
})

// Found unpinned by mutation testing (tools/mutation, docs/testing.md). Expectations: JSON.stringify's rules, which
// CanonicalJson promises to follow (ECMA-262 SerializeJSONProperty), and decision 0102.
describe("CanonicalJson, as JSON.stringify", () => {
  it("writes booleans, honours toJSON with the member's key, and repeats a value that is not a cycle", () => {
    const cases: ReadonlyArray<unknown> = [
      true,
      [false, true],
      { b: false, a: true },
      new Date(0),
      { when: new Date(86_400_000) },
      { a: { toJSON: (key: string) => `key ${key}` } },
      { toJSON: (key: string) => ({ root: key, z: 1, a: 2 }) }
    ]
    for (const value of cases) {
      const sorted = JSON.stringify(
        JSON.parse(JSON.stringify(value)),
        (_key, v: unknown) =>
          v !== null && typeof v === "object" && !Array.isArray(v)
            ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
            : v
      )
      assert.strictEqual(canonicalJson(value), sorted)
    }
    const shared = { x: 1 }
    assert.strictEqual(canonicalJson([shared, { again: shared }]), JSON.stringify([shared, { again: shared }]))
    assert.strictEqual(canonicalJson({ f: () => 1, s: Symbol("s"), n: null }), `{"n":null}`)
  })
})

describe("Pagination keys, edges", () => {
  it("accepts a secret of exactly minimumSecretBytes bytes and refuses one byte less", () => {
    assert.strictEqual(minimumSecretBytes, 32)
    const exact = "s".repeat(minimumSecretBytes)
    const own = makeCursorCodec({ secret: exact })
    assert.deepStrictEqual(Result.getOrThrow(own.decode(own.encode(position, context), context)), position)
    assert.throws(() => makeCursorCodec({ secret: exact.slice(1) }), /at least 32/)
  })

  it("never decodes a position with a non-finite sort value, even under a valid tag (decision 0102: finite doubles)", () => {
    for (const sortValue of [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN]) {
      const key = codec.encode({ sortValue, id: "a" }, context)
      assert.strictEqual(failureTag(codec.decode(key, context)), "CursorMalformed")
    }
  })

  it("names the check a malformed key failed", () => {
    const reasonOf = (key: unknown) => {
      const result = codec.decode(key as string, context)
      return Result.isFailure(result) && result.failure._tag === "CursorMalformed" ? result.failure.reason : undefined
    }
    assert.include(reasonOf(""), "empty")
    assert.include(reasonOf("A".repeat(maxKeyLength + 1)), String(maxKeyLength))
    assert.include(reasonOf("a=="), "base64url")
    assert.include(reasonOf(42), "not a string")
  })

  it("orders numbers before strings whatever the direction's ties, so the order stays total", () => {
    const n: Position = { sortValue: 5, id: "a" }
    const s: Position = { sortValue: "5", id: "a" }
    assert.strictEqual(keysetOrder("asc")(n, s), -1)
    assert.strictEqual(keysetOrder("asc")(s, n), 1)
    assert.strictEqual(keysetOrder("desc")(n, s), 1)
  })

  it("an empty page has no last position", () => {
    const page = keysetPage<Position>([], 10, () => assert.fail("no row to read"))
    assert.deepStrictEqual({ ...page, items: [...page.items] }, { items: [], hasMore: false, last: undefined })
  })
})

// Found unpinned by mutation testing (issue 28 item 1). Expectations: decision 0102 (the key format table, byte by
// byte; the checks in order and their errors; "a tampered, foreign or stale key answered by a 400 with a clear
// message"; "A contact key with a UUID is 95 characters, a batch-test key with a 24-character id 79") and the
// codec's documentation (a key longer than maxKeyLength decodes as CursorMalformed).
describe("Pagination keys, as decision 0102 lays them out", () => {
  const utf8 = (value: string) => new TextEncoder().encode(value)
  const orgTag = (orgId: string) => sha256(utf8(`svc/pagination/org\0${orgId}`)).subarray(0, 4)
  const queryTag = (fingerprint: string) => decodedBytes(fingerprint)
  /** A version-1 key over `body` (kind, sort value, id), signed with SECRET as the table says. */
  const keyOf = (body: ReadonlyArray<number>, ctx: CursorContext = context, marker = 0xa1): string => {
    const signed = Uint8Array.of(marker, ...orgTag(ctx.orgId), ...queryTag(ctx.queryFingerprint), ...body)
    return Base64Url.encode(Uint8Array.of(...signed, ...hmacSha256(text(SECRET), signed, 16)))
  }
  const malformedReason = (result: Result.Result<Position, CursorError>): string => {
    assert.strictEqual(failureTag(result), "CursorMalformed")
    return Result.isFailure(result) && result.failure._tag === "CursorMalformed" ? result.failure.reason : ""
  }

  it("mints exactly the bytes of the table: marker, org tag, query tag, kind, sort value, id, truncated HMAC", () => {
    // 5 as a zigzag varint is 10; "ab" is a length byte and two bytes of UTF-8
    assert.strictEqual(codec.encode({ sortValue: 5, id: "ab" }, context), keyOf([1, 10, 2, 0x61, 0x62]))
    assert.strictEqual(codec.encode({ sortValue: -3, id: "" }, context), keyOf([1, 5, 0]))
    assert.strictEqual(codec.encode({ sortValue: "é", id: "a" }, context), keyOf([3, 2, 0xc3, 0xa9, 1, 0x61]))
    // a double is its 8 bytes, big-endian (0.5 = 0x3FE0000000000000)
    assert.strictEqual(
      codec.encode({ sortValue: 0.5, id: "a" }, context),
      keyOf([2, 0x3f, 0xe0, 0, 0, 0, 0, 0, 0, 1, 0x61])
    )
    const other: CursorContext = {
      orgId: OrgId.make("org_other"),
      queryFingerprint: queryFingerprint({ resource: "batch-tests" })
    }
    assert.strictEqual(codec.encode({ sortValue: 5, id: "ab" }, other), keyOf([1, 10, 2, 0x61, 0x62], other))
    assert.deepStrictEqual(
      codec.decode(keyOf([1, 10, 2, 0x61, 0x62]), context),
      Result.succeed({ sortValue: 5, id: "ab" })
    )
  })

  it("has the lengths the decision gives: a contact key with a UUID 95 characters, a batch-test key with a 24-character id 79", () => {
    const timestamp = 1_718_123_456_789
    assert.strictEqual(
      codec.encode({ sortValue: timestamp, id: "3f2b1c9e-8d7a-4b6f-9e0d-1a2b3c4d5e6f" }, context).length,
      95
    )
    assert.strictEqual(codec.encode({ sortValue: timestamp, id: "b".repeat(24) }, context).length, 79)
  })

  it("refuses a signed key whose body is not exactly one sort value and one id", () => {
    const unreadable = [
      keyOf([4, 1, 0x61]), // a kind the format does not have, followed by what reads as an id
      keyOf([1, 10, 2, 0x61, 0x62, 0]), // a byte after the id
      keyOf([1, 10, 5]), // an id whose length runs past the end
      keyOf([1, 10]) // no id
    ]
    const reasons = unreadable.map((key) => malformedReason(codec.decode(key, context)))
    for (const reason of reasons) assert.isAbove(reason.length, 0)
  })

  it("refuses a key that does not start with the 0xA_ marker as malformed, even when its low nibble is this version", () => {
    const bytes = decodedBytes(codec.encode(position, context))
    for (const marker of [0x01, 0x11, 0xb1, 0xf1]) {
      bytes[0] = marker
      assert.isAbove(malformedReason(codec.decode(Base64Url.encode(bytes), context)).length, 0, String(marker))
    }
  })

  it("gives each failed check its own reason, and puts it in the message", () => {
    const bytes = decodedBytes(codec.encode(position, context))
    bytes[0] = 0x11
    const results = [
      codec.decode("", context),
      codec.decode("a==", context),
      codec.decode(Base64Url.encode(bytes), context),
      codec.decode(Base64Url.encode(Uint8Array.of(0xa1, 0, 0, 0)), context),
      codec.decode(keyOf([4, 1, 0x61]), context),
      codec.decode("A".repeat(maxKeyLength + 1), context)
    ]
    const reasons = results.map(malformedReason)
    assert.strictEqual(new Set(reasons).size, reasons.length, JSON.stringify(reasons))
    for (const [i, result] of results.entries()) {
      assert.isAbove(reasons[i]!.length, 0)
      if (Result.isFailure(result)) assert.include(result.failure.message, `(${reasons[i]})`)
    }
  })

  it("says why a key was refused in each message, as a client can act on it", () => {
    const key = codec.encode(position, context)
    const messageOf = (result: Result.Result<Position, CursorError>) =>
      Result.isFailure(result) ? result.failure.message : ""
    const tampered = messageOf(
      codec.decode(makeCursorCodec({ secret: OTHER_SECRET }).encode(position, context), context)
    )
    assert.include(tampered, "altered")
    assert.include(tampered, "rotated")
    const mismatch = messageOf(codec.decode(key, { ...context, queryFingerprint: queryFingerprint({}) }))
    assert.include(mismatch, "different query")
    assert.include(mismatch, "sort order")
    assert.include(mismatch, "limit may change")
    const bytes = decodedBytes(key)
    bytes[0] = 0xa7
    const stale = messageOf(codec.decode(Base64Url.encode(bytes), context))
    assert.include(stale, "format version 7")
    assert.include(stale, "release")
  })

  it("reads a key of exactly maxKeyLength characters, and refuses one byte more", () => {
    // 1 + 4 + 6 bytes of header, kind, sort value 0, a 2-byte length, the id, 16 bytes of tag: 3,072 bytes = 4,096 characters
    const fits: Position = { sortValue: 0, id: "i".repeat(3041) }
    const key = codec.encode(fits, context)
    assert.strictEqual(key.length, maxKeyLength)
    assert.deepStrictEqual(codec.decode(key, context), Result.succeed(fits))
    const over = codec.encode({ sortValue: 0, id: "i".repeat(3042) }, context)
    assert.isAbove(over.length, maxKeyLength)
    assert.strictEqual(failureTag(codec.decode(over, context)), "CursorMalformed")
  })

  it("binds a key to a fingerprint forged with a type cast too, telling two of them apart", () => {
    // QueryFingerprint is branded; untyped code could still pass any string, and a key must stay bound to it.
    const forged = (fingerprint: string): CursorContext => ({ ...context, queryFingerprint: fingerprint as never })
    const first = codec.encode(position, forged("first"))
    const second = codec.encode(position, forged("second!"))
    assert.notStrictEqual(first, second)
    assert.deepStrictEqual(codec.decode(first, forged("first")), Result.succeed(position))
    assert.strictEqual(failureTag(codec.decode(first, forged("second!"))), "CursorQueryMismatch")
    assert.strictEqual(failureTag(codec.decode(second, context)), "CursorQueryMismatch")
  })
})
