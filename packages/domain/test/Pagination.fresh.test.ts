// The codec mints into one scratch buffer per process that grows when a position needs more room (Pagination.ts).
// These cases must run in a process where nothing has been minted yet, so they live in their own file (vitest loads
// each file's modules afresh): the first keys a server mints after a start may be its largest. Expectation: decision
// 0102, every position within maxKeyLength round-trips exactly.
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { OrgId } from "../src/models/Ids.ts"
import { type CursorContext, type CursorPosition, makeCursorCodec, queryFingerprint } from "../src/Pagination.ts"

const codec = makeCursorCodec({ secret: "test secret: 32 bytes or more, never used in production" })
const context: CursorContext = {
  orgId: OrgId.make("org_1"),
  queryFingerprint: queryFingerprint({ resource: "contacts" })
}

describe("Pagination keys, the first ones a process mints", () => {
  // Near maxKeyLength (3,072 bytes), with characters of three UTF-8 bytes: about 3 KB of buffer at once.
  it("round-trips a first key whose sort value is a long string and whose id is short", () => {
    const position: CursorPosition = { sortValue: "€".repeat(1000), id: "x" }
    const key = codec.encode(position, context)
    assert.isAbove(key.length, 4000)
    assert.deepStrictEqual(codec.decode(key, context), Result.succeed(position))
  })

  it("round-trips a key with a numeric sort value and a long id, larger than any minted before", () => {
    const position: CursorPosition = { sortValue: 0, id: "€".repeat(1013) }
    const key = codec.encode(position, context)
    assert.isAbove(key.length, 4090)
    assert.deepStrictEqual(codec.decode(key, context), Result.succeed(position))
  })
})
