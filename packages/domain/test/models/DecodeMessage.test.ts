import { assert, describe, it } from "@effect/vitest"
import { Result, Schema, SchemaIssue } from "effect"
import { formatDecodeError, formatPath } from "../../src/models/DecodeMessage.ts"

const messageOf = <S extends Schema.Decoder<unknown>>(
  schema: S,
  input: unknown,
  mode: "reportInput" | "rawInput" | "neither" = "reportInput"
): string => {
  const result = Schema.decodeUnknownResult(schema)(input, { reportInput: mode === "reportInput" })
  if (Result.isSuccess(result)) return assert.fail("expected a decode failure")
  return formatDecodeError(result.failure, mode === "rawInput" ? { input } : undefined)
}

describe("formatPath", () => {
  it("writes identifiers with dots, indexes in brackets and other keys quoted", () => {
    assert.strictEqual(formatPath(["tasks", 3, "to_number"]), "tasks[3].to_number")
    assert.strictEqual(formatPath(["headers", "X-Id"]), "headers[\"X-Id\"]")
    assert.strictEqual(formatPath([]), "")
  })
})

describe("formatDecodeError", () => {
  const Body = Schema.Struct({
    name: Schema.String,
    count: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0, { expected: "an integer >= 0" })),
    order: Schema.optionalKey(Schema.Literals(["asc", "desc"])),
    items: Schema.optionalKey(Schema.Array(Schema.Struct({ id: Schema.String })))
  })

  it("says a missing field is required", () => {
    assert.strictEqual(messageOf(Body, { count: 1 }), "name is required")
  })

  it("names the expected type and the value sent", () => {
    assert.strictEqual(messageOf(Body, { name: 5, count: 1 }), "name must be a string (got 5)")
  })

  it("uses the check's expected phrase", () => {
    assert.strictEqual(messageOf(Body, { name: "a", count: -1 }), "count must be an integer >= 0 (got -1)")
    assert.strictEqual(messageOf(Body, { name: "a", count: 1.5 }), "count must be an integer (got 1.5)")
  })

  it("lists the allowed literals", () => {
    assert.strictEqual(
      messageOf(Body, { name: "a", count: 1, order: "up" }),
      "order must be one of \"asc\", \"desc\" (got \"up\")"
    )
  })

  it("writes nested paths as a.b[3].c", () => {
    assert.strictEqual(
      messageOf(Body, { name: "a", count: 1, items: [{ id: "x" }, { id: "y" }, { id: "z" }, { id: 4 }] }),
      "items[3].id must be a string (got 4)"
    )
  })

  it("says an unknown field is not a known field of the request (decoded with the request options)", () => {
    const result = Schema.decodeUnknownResult(Body)({ name: "a", count: 1, colour: "red" }, {
      onExcessProperty: "error",
      reportInput: true
    })
    if (Result.isSuccess(result)) return assert.fail("expected a decode failure")
    assert.strictEqual(formatDecodeError(result.failure), "colour is not a known field of this request (got \"red\")")
    assert.strictEqual(
      formatDecodeError(result.failure, { root: "query", parameters: "query" }),
      "query parameter colour is not a known parameter of this endpoint (got \"red\")"
    )
  })

  it("names path and query parameters as such", () => {
    const Params = Schema.Struct({ contact_id: Schema.String.check(Schema.isNonEmpty({ expected: "an id" })) })
    const result = Schema.decodeUnknownResult(Params)({ contact_id: "" }, { reportInput: true })
    if (Result.isSuccess(result)) return assert.fail("expected a decode failure")
    assert.strictEqual(
      formatDecodeError(result.failure, { root: "path", parameters: "path" }),
      "path parameter contact_id must be an id (got \"\")"
    )
  })

  it("calls the root the request body", () => {
    assert.strictEqual(messageOf(Body, null), "request body must be an object (got null)")
  })

  it("reads the value from the raw input when the issues carry none", () => {
    assert.strictEqual(messageOf(Body, { name: "a", count: -1 }, "rawInput"), "count must be an integer >= 0 (got -1)")
    assert.strictEqual(messageOf(Body, { name: "a", count: -1 }, "neither"), "count must be an integer >= 0")
  })

  it("names the discriminator of a union of objects", () => {
    const Shape = Schema.Struct({
      shape: Schema.Union([
        Schema.Struct({ kind: Schema.Literal("circle"), radius: Schema.Number }),
        Schema.Struct({ kind: Schema.Literal("square"), side: Schema.Number })
      ])
    })
    assert.strictEqual(
      messageOf(Shape, { shape: { kind: "triangle" } }),
      "shape.kind must be one of \"circle\", \"square\" (got \"triangle\")"
    )
    assert.strictEqual(
      messageOf(Shape, { shape: { side: 1 } }),
      "shape.kind is required and must be one of \"circle\", \"square\""
    )
    assert.strictEqual(messageOf(Shape, { shape: 3 }), "shape must be an object (got 3)")
    assert.strictEqual(messageOf(Shape, { shape: { kind: "circle" } }), "shape.radius is required")
  })

  it("quotes the value a cross-field check points at, not the whole object", () => {
    const Pair = Schema.Struct({ low: Schema.Number, high: Schema.Number }).check(
      Schema.makeFilter((pair) => pair.low <= pair.high ? undefined : { path: ["high"], issue: "must be >= low" })
    )
    assert.strictEqual(
      messageOf(Schema.Struct({ pair: Pair }), { pair: { low: 5, high: 1 } }),
      "pair.high must be >= low (got 1)"
    )
  })

  it("attaches a message that is not a clause after a colon", () => {
    const issue = new SchemaIssue.Pointer(["a"], new SchemaIssue.InvalidValue({ message: "Something is off" }))
    assert.strictEqual(formatDecodeError(issue), "a: Something is off")
  })

  it("does not repeat a value the message already quotes", () => {
    const issue = new SchemaIssue.Pointer(["a"], new SchemaIssue.InvalidValue({ message: "must be small (got 9)" }))
    assert.strictEqual(formatDecodeError(issue, { input: { a: 9 } }), "a must be small (got 9)")
  })
})
