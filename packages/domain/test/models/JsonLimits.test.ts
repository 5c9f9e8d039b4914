// The structural rules of request JSON (issue 27, decision 0106) and the read guard built on the same number. The
// expectations come from the rules' sources: 64 levels counted from the body's own object or array (the decision,
// as .NET's System.Text.Json's MaxDepth counts them), numbers within ±(2^53 - 1) (I-JSON, RFC 7493 §2.2: the
// integers a double holds exactly), and the read path's encoder measured in this very process.
import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { ListCallsResponse, UpdateCallBody } from "../../src/models/Call.ts"
import { CallImportLine } from "../../src/models/CallImportLine.ts"
import { listCallsJson, readableCall, unreadableMetadata } from "../../src/models/CallJson.ts"
import { formatDecodeError } from "../../src/models/DecodeMessage.ts"
import {
  firstJsonProblem,
  formatJsonPath,
  jsonDepth,
  maxJsonDepth,
  structureMessage,
  unreadableMarker
} from "../../src/models/JsonLimits.ts"
import { requestParseOptions } from "../../src/models/RequestDecoding.ts"
import { firstUnacceptableText } from "../../src/models/Text.ts"

/** `levels` objects, each the only member `a` of the one above, around `inner`. */
const nested = (levels: number, inner: unknown = 0): unknown => {
  let value = inner
  for (let i = 0; i < levels; i++) value = { a: value }
  return value
}
const nestedArrays = (levels: number): unknown => {
  let value: unknown = 0
  for (let i = 0; i < levels; i++) value = [value]
  return value
}

/** The deepest object nesting `encode` survives in this process, by bisection. */
const capacity = (encode: (value: unknown) => unknown): number => {
  let low = 1
  let high = 200_000
  while (low < high) {
    const mid = Math.ceil((low + high) / 2)
    try {
      encode(nested(mid))
      low = mid
    } catch {
      high = mid - 1
    }
  }
  return low
}

describe("nesting", () => {
  it("allows 64 levels, the body's own object being the first, and names the 65th", () => {
    assert.isUndefined(firstJsonProblem(nested(64)))
    assert.deepStrictEqual(firstJsonProblem(nested(65)), { rule: "depth", path: Array(64).fill("a") })
    assert.isUndefined(firstJsonProblem(nestedArrays(64)))
    assert.deepStrictEqual(firstJsonProblem(nestedArrays(65)), { rule: "depth", path: Array(64).fill(0) })
    // a value inside a body: its levels add to those above it (a task of create-batch-call has 2)
    assert.isUndefined(firstJsonProblem(nested(62), { levelsAbove: 2 }))
    assert.strictEqual(firstJsonProblem(nested(63), { levelsAbove: 2 })?.rule, "depth")
    // scalars are not levels
    assert.isUndefined(firstJsonProblem(nested(64, "deep string")))
    assert.strictEqual(jsonDepth(nested(64)), 64)
    assert.strictEqual(jsonDepth(nested(200)), 65, "counts no further than one past the limit")
    assert.strictEqual(jsonDepth("x"), 0)
    assert.strictEqual(jsonDepth([]), 1)
  })

  it("walks a value nested 200,000 levels deep in constant stack (the recursive walks failed near 4,000)", () => {
    const deep = nested(200_000)
    assert.strictEqual(firstJsonProblem(deep)?.rule, "depth")
    assert.strictEqual(jsonDepth(deep, Number.POSITIVE_INFINITY), 200_000)
    assert.isUndefined(firstUnacceptableText(deep))
    assert.deepStrictEqual(firstUnacceptableText(nested(100_000, "a\u0000"))?.path, Array(100_000).fill("a"))
  })

  it("reports the first problem in document order, a wide value included", () => {
    const wide = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i === 9_999 ? nested(64) : i]))
    assert.deepStrictEqual(firstJsonProblem(wide)?.path.slice(0, 2), ["k9999", "a"])
    assert.deepStrictEqual(firstJsonProblem({ a: [1, 2 ** 60], b: nested(70) }), {
      rule: "number",
      path: ["a", 1],
      value: 2 ** 60
    })
    assert.deepStrictEqual(firstJsonProblem({ "x\u0000": 1 }, { text: true }), {
      rule: "text",
      path: ["x\u0000"],
      inName: true
    })
    assert.isUndefined(firstJsonProblem({ "x\u0000": "\ud800" }), "strings only when asked")
  })

  it("names the field in a message a person can read, not 64 levels of path", () => {
    const problem = firstJsonProblem(nested(70), { levelsAbove: 3 })
    assert.strictEqual(problem?.rule, "depth")
    assert.strictEqual(
      structureMessage({ rule: "depth", path: ["tasks", 0, "metadata", ...problem!.path] }),
      "tasks[0].metadata.a… is nested too deep: objects and arrays may nest at most 64 levels in a request body"
    )
    assert.strictEqual(formatJsonPath([]), "request body")
    assert.strictEqual(formatJsonPath(["metadata", "ids", 3]), "metadata.ids[3]")
  })
})

describe("numbers", () => {
  it("holds every number within ±(2^53 - 1), where a double is exact", () => {
    for (const fine of [0, -0, 1.5, -1e-300, 2 ** 53 - 1, -(2 ** 53 - 1), 0.1]) {
      assert.isUndefined(firstJsonProblem({ n: fine }), String(fine))
    }
    const parsedBig = Number("12345678901234567890")
    for (const over of [2 ** 53, -(2 ** 53), parsedBig, 1e300, Number.POSITIVE_INFINITY, Number.NaN]) {
      assert.deepStrictEqual(firstJsonProblem({ n: over }), { rule: "number", path: ["n"], value: over })
    }
    // what JSON.parse makes of a literal past the range: rounded, so it must be refused, not stored
    const parsed = JSON.parse("{\"id\": 12345678901234567891}") as { id: number }
    assert.notStrictEqual(String(parsed.id), "12345678901234567891")
    assert.strictEqual(firstJsonProblem(parsed)?.rule, "number")
    assert.strictEqual(
      structureMessage({ rule: "number", path: ["metadata", "id"], value: parsed.id }),
      "metadata.id is a number beyond ±9007199254740991 (2^53 - 1), the largest a JSON number holds exactly; " +
        "send it as a string"
    )
    assert.isUndefined(firstJsonProblem({ n: 1e300 }, { numbers: false }))
  })
})

describe("the read path at the limit", () => {
  const call = (metadata: unknown) => ({
    call_id: "call_1",
    call_type: "phone_call",
    direction: "outbound",
    call_status: "ended",
    from_number: "+14155550100",
    to_number: "+14155550101",
    metadata
  })

  it("encodes the deepest accepted value with room to spare: the limit is far below the encoder's capacity", () => {
    // JSON.stringify writes every response (listCallsJson and the schemas' encoding alike); measured here, on the
    // stack this test runs on. A list-calls response wraps metadata in 3 levels (the page, items, the call).
    const stringify = capacity((value) => JSON.stringify(value))
    assert.isAbove(stringify, 10 * (maxJsonDepth + 3), `JSON.stringify handles ${stringify} levels`)
    const encodeList = Schema.encodeSync(ListCallsResponse)
    const schema = capacity((value) => JSON.stringify(encodeList({ has_more: false, items: [call(value) as never] })))
    assert.isAbove(schema, 10 * (maxJsonDepth + 3), `the list-calls schema encodes ${schema} levels`)
    // the deepest metadata update-call accepts (64 levels in its body: 63 of its own) reads back whole
    const deepest = nested(maxJsonDepth - 1)
    const page = { has_more: false, items: [call(deepest)] }
    assert.strictEqual(listCallsJson(page), JSON.stringify(encodeList(page as never)))
    assert.deepStrictEqual(readableCall(call(deepest)), call(deepest))
  })

  it("shows a stored value nested past the limit as a marked error value, whatever its depth", () => {
    for (const levels of [maxJsonDepth + 1, 5_000, 100_000]) {
      const stored = call(nested(levels))
      const shown = readableCall(stored) as Record<string, unknown>
      assert.deepStrictEqual(shown["metadata"], unreadableMetadata)
      assert.include((shown["metadata"] as Record<string, string>)[unreadableMarker], "nested more than 64 levels")
      const page = { has_more: false, items: [stored, call({ ok: true })] }
      const text = listCallsJson(page)
      assert.isDefined(text, `${levels} levels: the fast path answers the page`)
      assert.deepStrictEqual(JSON.parse(text!), {
        has_more: false,
        items: [shown, call({ ok: true })]
      })
    }
    // the analysis data too; the other members are kept as they are
    const analysed = {
      ...call({ crm: 1 }),
      call_analysis: { call_summary: "s", custom_analysis_data: { deep: nested(5_000) } }
    }
    const shown = readableCall(analysed) as { call_analysis: { custom_analysis_data: object; call_summary: string } }
    assert.strictEqual(shown.call_analysis.call_summary, "s")
    assert.deepStrictEqual(Object.keys(shown.call_analysis.custom_analysis_data), [unreadableMarker])
    const fine = call({ a: [1, { b: 2 }] })
    assert.strictEqual(readableCall(fine), fine, "nothing to replace: the same object")
  })
})

describe("schemas that take free-form JSON", () => {
  it("update-call's metadata: refused past the limit before its size is measured (no stack overflow)", () => {
    const result = Schema.decodeUnknownResult(UpdateCallBody)({ metadata: nested(50_000) }, requestParseOptions)
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) {
      assert.include(formatDecodeError(result.failure.issue), "metadata is nested too deep")
    }
    assert.isTrue(Result.isSuccess(Schema.decodeUnknownResult(UpdateCallBody)({ metadata: nested(63) })))
  })

  it("an imported call's free-form members follow the request rules, so every imported call reads back", () => {
    const line = {
      call_id: "call_1",
      call_status: "ended",
      from_number: "+14155550100",
      to_number: "+14155550101"
    }
    const decode = (extra: Record<string, unknown>) => {
      const result = Schema.decodeUnknownResult(CallImportLine)({ ...line, ...extra }, requestParseOptions)
      return Result.isFailure(result) ? formatDecodeError(result.failure.issue) : undefined
    }
    assert.isUndefined(decode({ metadata: nested(maxJsonDepth) }))
    assert.include(decode({ metadata: nested(50_000) }), "metadata is nested too deep")
    assert.include(decode({ metadata: JSON.parse("{\"id\": 12345678901234567890}") }), "metadata.id is a number beyond")
    assert.include(decode({ metadata: { a: ["x\u0000"] } }), "metadata must not contain U+0000")
    assert.include(
      decode({ call_analysis: { custom_analysis_data: { score: nested(50_000) } } }),
      "call_analysis.custom_analysis_data.score is nested too deep"
    )
  })
})
