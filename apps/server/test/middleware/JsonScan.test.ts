// The byte scans that spare well-formed bodies a parse and a walk (BodyText.check for whole bodies, the flags of
// StreamingJsonObject for create-batch-call's tasks) may say "maybe" for nothing, never "fine" for a body that breaks
// a rule of decision 0106 (nesting past 64 levels, a number beyond ±(2^53 - 1)). Checked here against the walk over
// the parsed value itself, on randomized JSON texts cut into randomized chunks (seeds 1-3000).
import { assert, describe, it } from "@effect/vitest"
import { firstJsonProblem } from "@svc/domain/models/JsonLimits.ts"
import { StreamingJsonObject } from "../../src/handlers/StreamingJsonObject.ts"
import * as BodyText from "../../src/middleware/BodyText.ts"

const random = (seed: number) => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  return { int, pick: <A>(items: ReadonlyArray<A>): A => items[int(items.length)]!, chance: (p: number) => next() < p }
}
type Random = ReturnType<typeof random>

// literals as a client writes them, near the rules' edges; strings that look like numbers or brackets
const NUMBERS = [
  "0",
  "-1",
  "0.5",
  "1E5",
  "1e-7",
  "-2.5e+3",
  "999999999999999",
  "9007199254740991",
  "9007199254740992",
  "-9007199254740993",
  "0.12345678901234567890",
  "1e400",
  "123456789012345678901234567890"
]
const STRINGS = [
  "\"\"",
  "\"1e5\"",
  "\"[[[[\"",
  "\"{\\\"a\\\":1}\"",
  "\"\\\\\"",
  "\"\\\"]\"",
  "\"12345678901234567890\""
]

/** A JSON text; `stop` is the chance that a level is the last (0.012: ~80 levels, past the limit half the time). */
const text = (r: Random, depth: number, stop: number): string => {
  if (depth > 90 || r.chance(stop)) {
    return r.pick([() => r.pick(NUMBERS), () => r.pick(STRINGS), () => r.pick(["true", "false", "null"])])()
  }
  // a few members near the top, one below: wide enough to mix rules, never exponential
  const n = depth < 4 && r.chance(0.5) ? 1 + r.int(3) : 1
  const members = Array.from({ length: n }, () => text(r, depth + 1, stop))
  const space = r.chance(0.2) ? " " : ""
  return r.chance(0.5)
    ? `{${members.map((m, i) => `"k${i}"${space}:${space}${m}`).join(",")}}`
    : `[${space}${members.join(`,${space}`)}]`
}

const chunks = (r: Random, bytes: Uint8Array): Array<Uint8Array> => {
  const out: Array<Uint8Array> = []
  for (let at = 0; at < bytes.length;) {
    const size = 1 + r.int(r.chance(0.3) ? 4 : 200)
    out.push(bytes.subarray(at, at + size))
    at += size
  }
  return out
}

describe("the scans before the walk", () => {
  it("BodyText.check says what the walk over the parsed body says", () => {
    const refused = { depth: 0, number: 0 }
    for (let seed = 1; seed <= 3000; seed++) {
      const r = random(seed)
      const body = text(r, 1, r.pick([0.1, 0.02, 0.012]))
      const problem = firstJsonProblem(JSON.parse(body), { text: true })
      const expected = problem === undefined ? undefined : BodyText.checkValue(JSON.parse(body), [], {
        text: true,
        levelsAbove: 0
      })
      assert.strictEqual(BodyText.check(new TextEncoder().encode(body)), expected, `seed ${seed}: ${body}`)
      if (problem?.rule === "depth" || problem?.rule === "number") refused[problem.rule]++
    }
    assert.isAbove(refused.depth, 300, `the generator reaches each rule: ${JSON.stringify(refused)}`)
    assert.isAbove(refused.number, 300, `the generator reaches each rule: ${JSON.stringify(refused)}`)
  })

  it("StreamingJsonObject flags every task that breaks a rule, whatever the chunks", () => {
    const flagged = { depth: 0, number: 0 }
    for (let seed = 1; seed <= 3000; seed++) {
      const r = random(seed)
      const stop = r.pick([0.1, 0.02, 0.012])
      const tasks = Array.from({ length: 1 + r.int(4) }, () => text(r, 3, stop))
      const body = new TextEncoder().encode(`{"from_number":"+1","tasks":[${tasks.join(",")}]}`)
      const parser = new StreamingJsonObject("tasks", 1 << 20, 1 << 20, 62)
      const elements: Array<unknown> = []
      for (const chunk of chunks(r, body)) elements.push(...parser.push(chunk))
      assert.strictEqual(parser.end()._tag, "Object", `seed ${seed}`)
      assert.strictEqual(elements.length, tasks.length, `seed ${seed}`)
      elements.forEach((element, i) => {
        const problem = firstJsonProblem(element, { levelsAbove: 2 })
        if (problem !== undefined && problem.rule !== "text") {
          flagged[problem.rule]++
          assert.isTrue(parser.mayBreakRules(i), `seed ${seed}: tasks[${i}] ${tasks[i]}`)
        }
      })
    }
    assert.isAbove(flagged.depth, 300, `the generator reaches each rule: ${JSON.stringify(flagged)}`)
    assert.isAbove(flagged.number, 300, `the generator reaches each rule: ${JSON.stringify(flagged)}`)
  })
})
