// The console's pure helpers: durations, progress, the batch's sampled series, and its routes.
import { assert, describe, it } from "@effect/vitest"
import type { TaskState } from "../src/api/Types.ts"
import { addSample, duration, MAX_SAMPLES, percentDone, relative, type Sample } from "../src/Format.ts"
import { href, parseRoute } from "../src/Router.ts"

const counts = (pending: number, completed = 0): Record<TaskState, number> => ({
  pending,
  dialling: 0,
  unknown: 0,
  completed,
  failed: 0,
  skipped: 0,
  cancelled: 0
})

describe("Format", () => {
  it("writes durations to the minute, hours and days", () => {
    assert.strictEqual(duration(42_000), "42 s")
    assert.strictEqual(duration(7 * 60_000), "7 min")
    assert.strictEqual(duration(3 * 3_600_000 + 12 * 60_000), "3 h 12 min")
    assert.strictEqual(duration(2 * 86_400_000 + 4 * 3_600_000), "2 d 4 h")
  })

  it("says whether an instant is ahead or behind", () => {
    assert.strictEqual(relative(1_000_000 + 120_000, 1_000_000), "in 2 min")
    assert.strictEqual(relative(1_000_000 - 120_000, 1_000_000), "2 min ago")
    assert.strictEqual(relative(1_000_000, 1_000_000), "now")
  })

  it("counts skipped and cancelled tasks as finished in the progress", () => {
    const batch = { total_task_count: 10, tasks: { ...counts(4, 3), skipped: 2, cancelled: 1 } }
    assert.strictEqual(percentDone(batch), 60)
    assert.strictEqual(percentDone({ total_task_count: 0, tasks: counts(0) }), 100)
  })
})

describe("addSample", () => {
  it("appends changes and keeps only the ends of a run of equal samples", () => {
    let series: ReadonlyArray<Sample> = []
    series = addSample(series, { t: 1, counts: counts(10) })
    series = addSample(series, { t: 2, counts: counts(10) })
    series = addSample(series, { t: 3, counts: counts(10) })
    series = addSample(series, { t: 4, counts: counts(10) })
    assert.deepStrictEqual(series.map((s) => s.t), [1, 4])
    series = addSample(series, { t: 5, counts: counts(9, 1) })
    assert.deepStrictEqual(series.map((s) => s.t), [1, 4, 5])
  })

  it("ignores a sample that is not later than the last", () => {
    const series = addSample([{ t: 5, counts: counts(1) }], { t: 5, counts: counts(0, 1) })
    assert.strictEqual(series.length, 1)
  })

  it(`keeps at most ${MAX_SAMPLES} samples, dropping the oldest`, () => {
    let series: ReadonlyArray<Sample> = []
    for (let t = 1; t <= MAX_SAMPLES + 10; t++) series = addSample(series, { t, counts: counts(t) })
    assert.strictEqual(series.length, MAX_SAMPLES)
    assert.strictEqual(series[0]?.t, 11)
  })
})

describe("Router", () => {
  it("reads every page and its id from the fragment, and writes the same back", () => {
    assert.deepStrictEqual(parseRoute(""), { page: "batches" })
    assert.deepStrictEqual(parseRoute(href.batch("batch_1")), { page: "batch", id: "batch_1" })
    assert.deepStrictEqual(parseRoute(href.calls("b 2")), { page: "calls", batchCallId: "b 2" })
    assert.deepStrictEqual(parseRoute(href.call("call/x")), { page: "call", id: "call/x" })
    assert.deepStrictEqual(parseRoute(href.contact("c1")), { page: "contact", id: "c1" })
    assert.deepStrictEqual(parseRoute(href.webhooks("call_9")), { page: "webhooks", callId: "call_9" })
    assert.deepStrictEqual(parseRoute(href.test("job_1")), { page: "test", id: "job_1" })
    assert.deepStrictEqual(parseRoute("#/nowhere"), { page: "batches" })
  })
})
