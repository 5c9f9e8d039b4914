// create-batch-call's body read as a stream answers what decoding the whole body answered (decision 0303):
// thousands of generated bodies, valid and invalid in every field, keys in any order, cut into chunks anywhere,
// give the same tasks and fields, or the same first error with the same message, as JSON.parse of the whole text
// and the request schema did before; a body is refused as it arrives once it passes the endpoint's limit or the
// budget, and the budget's bytes are counted as they come.
import { assert, describe, it } from "@effect/vitest"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { formatDecodeError } from "@svc/domain/models/DecodeMessage.ts"
import { requestParseOptions } from "@svc/domain/models/RequestDecoding.ts"
import { Effect, Exit, Result, Schema, Stream } from "effect"
import * as BatchCallBody from "../../src/handlers/BatchCallBody.ts"
import { BodyBudget } from "../../src/middleware/BodyBudget.ts"

/** mulberry32: small, fast, deterministic. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const encoder = new TextEncoder()

/** What the server answered before streaming: the message of the first error, or the decoded request. */
const wholeBody = (bytes: Uint8Array) => {
  const text = new TextDecoder().decode(bytes)
  let value: unknown
  if (text !== "") {
    try {
      value = JSON.parse(text)
    } catch {
      return { error: "request body: Expected a valid JSON body" } as const
    }
  }
  const decoded = Schema.decodeUnknownResult(Schema.Union([CreateBatchCallRequest]), requestParseOptions)(value)
  return Result.isFailure(decoded)
    ? { error: formatDecodeError(decoded.failure, { root: "request body" }) } as const
    : { request: decoded.success } as const
}

/** The streamed read of `bytes` cut at `cuts`: every chunk of tasks, then the fields; or the error. */
const streamed = (bytes: Uint8Array, cuts: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    const chunks: Array<Uint8Array> = []
    let at = 0
    for (const cut of [...cuts, bytes.length]) {
      chunks.push(bytes.subarray(at, cut))
      at = cut
    }
    const { source } = BatchCallBody.read(Stream.fromIterable(chunks), { limit: undefined, budget: undefined })
    const tasks = yield* Stream.runCollect(source.tasks)
    const head = yield* source.head
    return { tasks: tasks.flat(), head }
  }).pipe(
    Effect.map((request) => ({ request }) as const),
    Effect.catchTags({
      InvalidBody: (e) => Effect.succeed({ error: formatDecodeError(e.error, { root: "request body" }) } as const),
      BodyRefused: (e) => Effect.succeed({ refused: e.message } as const)
    })
  )

describe("BatchCallBody.read", () => {
  it.effect("gives the tasks, fields and first error of decoding the whole body, for 3,000 generated bodies", () =>
    Effect.gen(function*() {
      const random = prng(16032026)
      const int = (n: number) => Math.floor(random() * n)
      const pick = <A>(xs: ReadonlyArray<A>): A => xs[int(xs.length)]!
      const maybe = (p: number) => random() < p
      const task = (): Record<string, unknown> => {
        const t: Record<string, unknown> = {}
        const fields: Array<[string, () => unknown]> = [
          ["to_number", () => pick(["+14155550101", "+14155550102", "555-1234", "", 5, null])],
          ["ignore_e164_validation", () => pick([true, false, "yes"])],
          ["override_agent_id", () => pick(["agent_1", "", 3])],
          ["override_agent_version", () => pick([1, "latest", -1, 1.5, ""])],
          ["agent_override", () =>
            pick([
              { agent: { voice_id: "v", language: pick(["en-US", "multi", ["en-US", "multi"], []]) } },
              { svc_llm: { model_temperature: pick([0.2, "hot"]) } },
              { agent: { voicemail_option: { action: { type: pick(["hangup", ""]) } } } },
              "not an object"
            ])],
          ["svc_llm_dynamic_variables", () => pick([{ first_name: "Ann" }, { n: 1 }, "x"])],
          ["metadata", () => pick([{ crm: "c-1", nested: { a: [1, 2] } }, [1], "m"])],
          ["custom_sip_headers", () => pick([{ "X-A": "b" }, { "X-A": 1 }])],
          ["unknown_field", () => pick([1, "x"])]
        ]
        for (const [name, make] of fields) {
          if (name === "to_number" ? maybe(0.97) : maybe(0.25)) t[name] = make()
        }
        // mostly valid tasks, so that later fields and later tasks are reached
        if (maybe(0.95)) {
          return { to_number: `+1415555${String(1000 + int(8999))}`, ...(maybe(0.3) ? { metadata: { i: 1 } } : {}) }
        }
        return t
      }
      const request = (): Record<string, unknown> => {
        const fields: Array<[string, () => unknown]> = [
          ["from_number", () => maybe(0.9) ? "+14155550100" : pick(["415", 7, null, ""])],
          ["tasks", () =>
            maybe(0.9)
              ? Array.from({ length: int(8) === 0 ? 0 : 1 + int(12) }, task)
              : pick([{}, "tasks", 3, null, { 0: { to_number: "+14155550101" } }])],
          ["name", () => maybe(0.9) ? "spring" : pick([5, null, ["n"]])],
          ["trigger_timestamp", () => maybe(0.9) ? 1_900_000_000_000 : pick([-1, 1.5, "soon"])],
          ["reserved_concurrency", () => maybe(0.9) ? 2 : pick([-1, 0.5, "2"])],
          ["call_time_window", () =>
            maybe(0.85)
              ? { windows: [{ start: 540, end: 1020 }], timezone: "America/New_York" }
              : pick([{ windows: [{ start: 600, end: 600 }] }, { windows: [] }, "always", {
                windows: [{ start: -1, end: 5 }]
              }])],
          ["retry_policy", () =>
            maybe(0.8)
              ? { max_retries: 2, retry_on: ["no_answer"], min_spacing_ms: 60_000 }
              : pick([{ max_retries: 11, retry_on: ["busy"] }, { max_retries: 1, retry_on: [] }, "always", {
                max_retries: 1,
                retry_on: ["busy"],
                spacing: 1
              }])],
          ["extra", () => pick([1, { a: 1 }])]
        ]
        const present = fields.filter(([name]) =>
          name === "from_number" || name === "tasks" ? maybe(0.95) : name === "extra" ? maybe(0.1) : maybe(0.5)
        )
        // any key order: a client may send tasks before from_number
        for (let i = present.length - 1; i > 0; i--) {
          const j = int(i + 1)
          ;[present[i], present[j]] = [present[j]!, present[i]!]
        }
        return Object.fromEntries(present.map(([name, make]) => [name, make()]))
      }
      const text = (): string => {
        const value = request()
        switch (int(20)) {
          case 0:
            return JSON.stringify(value).slice(0, int(200)) // truncated
          case 1:
            return JSON.stringify(value, null, pick([1, 2, "\t"])) // other whitespace
          case 2:
            return pick(["", " ", "null", "[]", "[{\"to_number\":\"+14155550101\"}]", "\"x\"", "{}", "{,}"])
          case 3:
            return JSON.stringify(value) + pick(["x", "}", " "])
          default:
            return JSON.stringify(value)
        }
      }
      const outcomes = new Map<string, number>()
      for (let round = 0; round < 3000; round++) {
        const source = text()
        const bytes = maybe(0.05)
          ? Uint8Array.from([0xef, 0xbb, 0xbf, ...encoder.encode(source)])
          : encoder.encode(source)
        const cuts = Array.from({ length: int(5) }, () => int(bytes.length + 1)).sort((a, b) => a - b)
        const expected = wholeBody(bytes)
        const actual = yield* streamed(bytes, cuts)
        const context = `#${round} ${source.slice(0, 400)} cut at ${cuts.join(",")}`
        if ("error" in expected) {
          assert.deepStrictEqual(actual, { error: expected.error }, context)
          outcomes.set("error", (outcomes.get("error") ?? 0) + 1)
          if (expected.error.startsWith("tasks[")) outcomes.set("task error", (outcomes.get("task error") ?? 0) + 1)
        } else {
          assert.isTrue("request" in actual, context)
          if (!("request" in actual)) continue
          const { tasks, ...fields } = expected.request
          assert.deepStrictEqual(actual.request.tasks, tasks, context)
          assert.deepStrictEqual(actual.request.head, fields, context)
          outcomes.set("request", (outcomes.get("request") ?? 0) + 1)
        }
      }
      // the generator reached every kind of answer
      assert.isAbove(outcomes.get("request") ?? 0, 500, JSON.stringify([...outcomes]))
      assert.isAbove(outcomes.get("error") ?? 0, 1000)
      assert.isAbove(outcomes.get("task error") ?? 0, 200)
    }))

  it.effect("names from_number's error first even when the tasks come first and one of them is invalid", () =>
    Effect.gen(function*() {
      const body = encoder.encode(JSON.stringify({ tasks: [{ to_number: "bad" }], from_number: "also bad" }))
      assert.deepStrictEqual(yield* streamed(body, [5]), {
        error: "from_number must be an E.164 number like +14155550123"
      })
      const later = encoder.encode(
        JSON.stringify({
          name: 5,
          tasks: [{ to_number: "+14155550101" }, { to_number: "x" }],
          from_number: "+14155550100"
        })
      )
      assert.deepStrictEqual(yield* streamed(later, []), {
        error: "tasks[1].to_number must be an E.164 number like +14155550123"
      })
    }))

  it.effect("refuses tasks given twice, a task over 1 MiB and more than 1 MiB outside the tasks, naming the bound", () =>
    Effect.gen(function*() {
      const twice = encoder.encode(
        "{\"from_number\":\"+14155550100\",\"tasks\":[],\"tasks\":[{\"to_number\":\"+14155550101\"}]}"
      )
      assert.deepStrictEqual(yield* streamed(twice, []), {
        refused: "tasks is given more than once; send one tasks array"
      })
      const big = { to_number: "+14155550101", metadata: { note: "x".repeat(BatchCallBody.MAX_TASK_BYTES) } }
      const bigTask = encoder.encode(
        JSON.stringify({ from_number: "+14155550100", tasks: [{ to_number: "+14155550101" }, big] })
      )
      assert.deepStrictEqual(yield* streamed(bigTask, [1000]), {
        refused: "tasks[1] is larger than 1 MiB of JSON, the most one task may take"
      })
      const bigName = encoder.encode(
        JSON.stringify({ from_number: "+14155550100", name: "n".repeat(BatchCallBody.MAX_REST_BYTES), tasks: [] })
      )
      assert.deepStrictEqual(yield* streamed(bigName, []), {
        refused: "the request holds more than 1 MiB of JSON outside its tasks, the most create-batch-call accepts there"
      })
    }))

  it.effect("hands the tasks over in chunks while the body arrives, not at its end", () =>
    Effect.gen(function*() {
      const tasks = Array.from({ length: 5_000 }, (_, i) => ({ to_number: `+1415${String(i).padStart(7, "0")}` }))
      const bytes = encoder.encode(JSON.stringify({ tasks, from_number: "+14155550100" }))
      let delivered = 0
      const deliveredBefore: Array<number> = []
      const chunks = Array.from({ length: Math.ceil(bytes.length / 4096) }, (_, i) =>
        bytes.subarray(i * 4096, (i + 1) * 4096))
      const body = Stream.fromIterable(chunks).pipe(Stream.tap(() =>
        Effect.sync(() => deliveredBefore.push(delivered))
      ))
      const { source } = BatchCallBody.read(body, { limit: undefined, budget: undefined })
      yield* Stream.runForEach(source.tasks, (chunk) => Effect.sync(() => (delivered += chunk.length)))
      assert.strictEqual(delivered, 5_000)
      // the first 2,000 tasks were handed over while more than half of the body was still to come
      const half = deliveredBefore[Math.floor(chunks.length / 2)]!
      assert.isAtLeast(half, 2_000)
      assert.strictEqual((yield* source.head).from_number, "+14155550100")
    }))

  it.effect("stops at the endpoint's limit, and takes bytes from the budget as they come when none was declared", () =>
    Effect.gen(function*() {
      const bytes = encoder.encode(
        JSON.stringify({ from_number: "+14155550100", tasks: [{ to_number: "+14155550101" }] })
      )
      const limit = {
        endpoint: "POST /create-batch-call",
        bytes: bytes.length - 1,
        setting: "SVC_MAX_BODY_BYTES"
      } as const
      const over = BatchCallBody.read(Stream.make(bytes.subarray(0, 10), bytes.subarray(10)), {
        limit,
        budget: undefined
      })
      const error = yield* Effect.flip(Stream.runDrain(over.source.tasks))
      assert.strictEqual(error._tag, "RequestBodyTooLarge")

      const budget = BodyBudget.make(bytes.length + 5)
      const fits = BatchCallBody.read(Stream.make(bytes.subarray(0, 10), bytes.subarray(10)), {
        limit: undefined,
        budget
      })
      yield* Stream.runDrain(fits.source.tasks)
      assert.strictEqual(fits.taken(), bytes.length)
      assert.strictEqual(yield* budget.inUse, bytes.length)
      // what is left cannot hold a second body
      const second = BatchCallBody.read(Stream.make(bytes.subarray(0, 10), bytes.subarray(10)), {
        limit: undefined,
        budget
      })
      const exit = yield* Effect.exit(Stream.runDrain(second.source.tasks))
      assert.isTrue(Exit.isFailure(exit))
      assert.strictEqual(second.taken(), 0)
      assert.strictEqual(yield* budget.inUse, bytes.length)
    }))

  it.effect("applies the body text rule of every endpoint (decision 0011) wherever the chunks are cut", () =>
    Effect.gen(function*() {
      const RULE = "must not contain a NUL character (\\u0000) or an unpaired surrogate (\\ud800-\\udfff)"
      const cases: Array<[Uint8Array, string]> = [
        [
          encoder.encode(
            `{"from_number":"+14155550100","tasks":[{"to_number":"+14155550101"},` +
              `{"to_number":"+14155550102","svc_llm_dynamic_variables":{"name":"a\\ud800"}}]}`
          ),
          `tasks[1].svc_llm_dynamic_variables.name ${RULE}`
        ],
        [
          encoder.encode(`{"from_number":"+14155550100","name":"x\\u0000","tasks":[{"to_number":"+14155550101"}]}`),
          `name ${RULE}`
        ],
        [
          // "é" cut to its first byte inside a task's string: not UTF-8, wherever the chunk boundary falls
          new Uint8Array([
            ...encoder.encode(
              `{"from_number":"+14155550100","tasks":[{"to_number":"+14155550101","svc_llm_dynamic_variables":{"x":"`
            ),
            0xc3,
            ...encoder.encode(`"}}]}`)
          ]),
          "request body is not valid UTF-8"
        ],
        [
          // a body cut off inside a multi-byte character (of a string, the only place one can be)
          new Uint8Array([...encoder.encode(`{"from_number":"+14155550100","tasks":[],"name":"`), 0xe2, 0x82]),
          "request body is not valid UTF-8"
        ]
      ]
      for (const [bytes, message] of cases) {
        for (let cut = 1; cut < bytes.length; cut++) {
          const result = yield* streamed(bytes, [cut])
          assert.deepStrictEqual(result, { refused: message }, `cut at ${cut}`)
        }
        // the same bodies whole, in one chunk
        assert.deepStrictEqual(yield* streamed(bytes, []), { refused: message })
      }
      // a literal backslash before "u0000" is no NUL, wherever it is cut
      const fine = encoder.encode(
        `{"from_number":"+14155550100","tasks":[{"to_number":"+14155550101","svc_llm_dynamic_variables":{"x":"\\\\u0000"}}]}`
      )
      for (let cut = 1; cut < fine.length; cut++) {
        const result = yield* streamed(fine, [cut])
        assert.isTrue("request" in result, `cut at ${cut}: ${JSON.stringify(result)}`)
      }
    }))
})
