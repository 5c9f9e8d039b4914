import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import * as ErrorBody from "../src/ErrorBody.ts"

describe("ErrorBody", () => {
  it("encodes the spec's shape and nothing else", () => {
    const encoded = Schema.encodeSync(ErrorBody.ErrorBody)(ErrorBody.make("limit must be between 1 and 1000"))
    assert.deepStrictEqual(encoded, { status: "error", message: "limit must be between 1 and 1000" })
  })

  it("rejects a body whose status is not \"error\"", () => {
    assert.isTrue(Schema.decodeUnknownExit(ErrorBody.ErrorBody)({ status: "ok", message: "x" })._tag === "Failure")
  })
})
