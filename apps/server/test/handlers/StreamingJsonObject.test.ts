// The streaming parser against JSON.parse of the whole body (decision 0303): for generated bodies, valid and
// broken, cut into chunks at random places, it accepts exactly what JSON.parse of the UTF-8 text accepts and finds
// the same values; and it holds no more than its bounds.
import { assert, describe, it } from "@effect/vitest"
import { StreamingJsonObject } from "../../src/handlers/StreamingJsonObject.ts"

/** mulberry32: small, fast, deterministic. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const encoder = new TextEncoder()

/** Runs the parser over `bytes` cut at `cuts`; the elements it gave and its result. */
const scan = (bytes: Uint8Array, cuts: ReadonlyArray<number>, maxElement = 1 << 20, maxRest = 1 << 20) => {
  const parser = new StreamingJsonObject("tasks", maxElement, maxRest)
  const elements: Array<unknown> = []
  let at = 0
  for (const cut of [...cuts, bytes.length]) {
    elements.push(...parser.push(bytes.subarray(at, cut)))
    at = cut
  }
  return { elements, result: parser.end() }
}

/** What the whole-body path made of `bytes`: TextDecoder (which drops a leading BOM), then JSON.parse. */
const reference = (bytes: Uint8Array): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(new TextDecoder().decode(bytes)) }
  } catch {
    return { ok: false }
  }
}

/** The keys of the top-level object of a text JSON.parse accepted, duplicates included, in order. */
const topLevelKeys = (text: string): Array<string> => {
  const keys: Array<string> = []
  let depth = 0
  let expectKey = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === "\"") {
      let j = i + 1
      while (text[j] !== "\"") j += text[j] === "\\" ? 2 : 1
      if (depth === 1 && expectKey) keys.push(JSON.parse(text.slice(i, j + 1)) as string)
      expectKey = false
      i = j
    } else if (c === "{" || c === "[") {
      depth++
      expectKey = depth === 1
    } else if (c === "}" || c === "]") {
      depth--
    } else if (c === "," && depth === 1) {
      expectKey = true
    }
  }
  return keys
}

describe("StreamingJsonObject", () => {
  it("reads objects, their streamed array and other members like JSON.parse, however the bytes are cut", () => {
    const random = prng(3030303)
    const int = (n: number) => Math.floor(random() * n)
    const pick = <A>(xs: ReadonlyArray<A>): A => xs[int(xs.length)]!
    const scalars = [
      "0",
      "-1.5e3",
      "1e400",
      "true",
      "false",
      "null",
      "\"\"",
      "\"a \\\"quoted\\\" \\\\ word\"",
      "\"\\u00e9t\\u00E9 \\ud83d\\ude00\"",
      "\"é😀 ]}[{,:\"",
      "\"\\\\\"",
      "12345678901234567890"
    ]
    const ws = () => pick(["", "", " ", "\n", "\t ", "\r\n  "])
    const value = (depth: number): string => {
      switch (depth > 3 ? 0 : int(4)) {
        case 0:
        case 1:
          return pick(scalars)
        case 2:
          return `[${ws()}${Array.from({ length: int(4) }, () => value(depth + 1)).join(`${ws()},${ws()}`)}${ws()}]`
        default:
          return `{${ws()}${
            Array.from({ length: int(4) }, () =>
              `${
                pick(scalars.filter((s) => s.startsWith("\"")))
              }${ws()}:${ws()}${value(depth + 1)}`)
              .join(`${ws()},${ws()}`)
          }${ws()}}`
      }
    }
    const keys = ["\"from_number\"", "\"name\"", "\"tasks\"", "\"t\\u0061sks\"", "\"__proto__\"", "\"x\"", "\"name\""]
    const body = (): string => {
      const members = Array.from(
        { length: int(5) },
        () => {
          const key = pick(keys)
          const isTasks = key.includes("sks") && random() < 0.8
          const v = isTasks
            ? `[${ws()}${Array.from({ length: int(5) }, () => value(1)).join(`${ws()},${ws()}`)}${ws()}]`
            : value(1)
          return `${ws()}${key}${ws()}:${ws()}${v}`
        }
      )
      const text = random() < 0.9 ? `${ws()}{${members.join(",")}${ws()}}${ws()}` : value(0)
      return text
    }
    const breakIt = (text: string): Uint8Array => {
      const bytes = encoder.encode(text)
      switch (int(12)) {
        case 0:
          return bytes.subarray(0, int(bytes.length)) // truncated
        case 1: {
          // one byte changed to a structural or stray byte
          const copy = Uint8Array.from(bytes)
          if (copy.length > 0) copy[int(copy.length)] = pick([0x2c, 0x7d, 0x5d, 0x22, 0x5c, 0x3a, 0x78, 0xff, 0x00])
          return copy
        }
        case 2:
          return Uint8Array.from([0xef, 0xbb, 0xbf, ...bytes]) // a byte-order mark
        case 3:
          return Uint8Array.from([...bytes, pick([0x78, 0x2c, 0x7d, 0x5d])]) // trailing garbage
        case 4:
          return Uint8Array.from([0xef, 0xbb, ...bytes]) // half a mark
        default:
          return bytes
      }
    }
    let accepted = 0
    let refused = 0
    for (let round = 0; round < 4000; round++) {
      const bytes = breakIt(body())
      const cuts = Array.from({ length: int(6) }, () => int(bytes.length + 1)).sort((a, b) => a - b)
      if (random() < 0.1) { for (let i = 1; i < bytes.length; i++) cuts.push(i) // byte by byte
       }
      cuts.sort((a, b) => a - b)
      const { elements, result } = scan(bytes, cuts)
      const expected = reference(bytes)
      const context = `#${round} ${JSON.stringify(new TextDecoder().decode(bytes))} cut at ${cuts.join(",")}`
      if (bytes.length === 0 || (bytes.length === 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)) {
        assert.strictEqual(result._tag, "Empty", context)
        continue
      }
      if (!expected.ok) {
        // refused; a second "tasks" met before the broken part is refused as such, sooner
        assert.strictEqual(result._tag, "Failed", context)
        if (result._tag === "Failed") {
          assert.include(["Syntax", "DuplicateStreamedMember"], result.failure._tag, context)
        }
        refused++
        continue
      }
      const parsed = expected.value
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        assert.deepStrictEqual(result, { _tag: "NotObject", value: parsed }, context)
        continue
      }
      const text = new TextDecoder().decode(bytes)
      if (topLevelKeys(text).filter((key) => key === "tasks").length > 1) {
        assert.deepStrictEqual(result, { _tag: "Failed", failure: { _tag: "DuplicateStreamedMember" } }, context)
        continue
      }
      accepted++
      assert.strictEqual(result._tag, "Object", context)
      if (result._tag !== "Object") continue
      const { tasks, ...rest } = parsed as Record<string, unknown>
      assert.deepStrictEqual(result.rest, rest, context)
      assert.deepStrictEqual(Object.keys(result.rest), Object.keys(rest), context)
      if (tasks === undefined) {
        assert.deepStrictEqual(result.streamed, { _tag: "Absent" }, context)
      } else if (Array.isArray(tasks)) {
        assert.deepStrictEqual(result.streamed, { _tag: "Array", length: tasks.length }, context)
        assert.deepStrictEqual(elements, tasks, context)
      } else {
        assert.deepStrictEqual(result.streamed, { _tag: "Other", value: tasks }, context)
      }
    }
    // the generator reached both sides
    assert.isAbove(accepted, 1000)
    assert.isAbove(refused, 500)
  })

  it("refuses an element over its bound, and more than the bound outside the streamed array", () => {
    const task = JSON.stringify({ to_number: "+14155550100", pad: "x".repeat(100) })
    const body = encoder.encode(`{"tasks":[${task},${task},{"pad":"${"y".repeat(300)}"}]}`)
    const { elements, result } = scan(body, [10, 150], 200)
    assert.strictEqual(elements.length, 2)
    assert.deepStrictEqual(result, { _tag: "Failed", failure: { _tag: "ElementTooLarge", index: 2, max: 200 } })
    // exactly at the bound is fine
    const exact = encoder.encode(`{"tasks":[${task}]}`)
    assert.strictEqual(scan(exact, [], task.length).result._tag, "Object")
    assert.deepStrictEqual(scan(exact, [], task.length - 1).result, {
      _tag: "Failed",
      failure: { _tag: "ElementTooLarge", index: 0, max: task.length - 1 }
    })
    const rest = encoder.encode(`{"name":"${"n".repeat(300)}","tasks":[]}`)
    assert.deepStrictEqual(scan(rest, [7], 1000, 200).result, {
      _tag: "Failed",
      failure: { _tag: "RestTooLarge", max: 200 }
    })
    const notObject = encoder.encode(`"${"s".repeat(300)}"`)
    assert.deepStrictEqual(scan(notObject, [], 1000, 200).result, {
      _tag: "Failed",
      failure: { _tag: "RestTooLarge", max: 200 }
    })
  })

  it("keeps nothing of the elements it gave out: a long array within small bounds", () => {
    const parser = new StreamingJsonObject("tasks", 100, 100)
    const element = encoder.encode(JSON.stringify({ to_number: "+14155550100" }) + ",")
    let count = 0
    count += parser.push(encoder.encode("{\"tasks\":[")).length
    for (let i = 0; i < 10_000; i++) count += parser.push(element).length
    count += parser.push(encoder.encode("{}]}")).length
    assert.strictEqual(count, 10_001)
    assert.deepStrictEqual(parser.end(), { _tag: "Object", rest: {}, streamed: { _tag: "Array", length: 10_001 } })
  })
})
