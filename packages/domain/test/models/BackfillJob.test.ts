import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { BackfillContactAnalysisDataRequest, BackfillJobStatus } from "../../src/models/BackfillJob.ts"
import { formatDecodeError } from "../../src/models/DecodeMessage.ts"
import { requestParseOptions } from "../../src/models/RequestDecoding.ts"

// as the HTTP edge decodes it
const decode = (input: unknown) =>
  Schema.decodeUnknownResult(BackfillContactAnalysisDataRequest)(input, { ...requestParseOptions, reportInput: true })

const failure = (input: unknown): string => {
  const result = decode(input)
  if (Result.isSuccess(result)) return assert.fail("expected a decode failure")
  return formatDecodeError(result.failure)
}

const roundTrip = (input: unknown): unknown => {
  const result = decode(input)
  if (Result.isFailure(result)) return assert.fail(formatDecodeError(result.failure))
  return Schema.encodeSync(BackfillContactAnalysisDataRequest)(result.success)
}

describe("BackfillContactAnalysisDataRequest", () => {
  it("decodes the vendor client's minimal and full examples", () => {
    assert.deepStrictEqual<unknown>(roundTrip({ backfill_attributes: ["string"] }), { backfill_attributes: ["string"] })
    const full = {
      backfill_attributes: ["string"],
      backfill_call_filter: {
        agent: [{ agent_id: "x", version: [0] }],
        start_timestamp: { op: "eq", type: "number", value: 0 }
      }
    }
    assert.deepStrictEqual<unknown>(roundTrip(full), full)
  })

  it("accepts an agent without versions and a range of start times", () => {
    const body = {
      backfill_attributes: ["city", "plan"],
      backfill_call_filter: {
        agent: [{ agent_id: "agent_1" }, { agent_id: "agent_2", version: [] }],
        start_timestamp: { type: "range", value: [1735689600000, 1735775999999] }
      }
    }
    assert.deepStrictEqual<unknown>(roundTrip(body), {
      ...body,
      backfill_call_filter: {
        ...body.backfill_call_filter,
        start_timestamp: { type: "range", op: "bt", value: [1735689600000, 1735775999999] }
      }
    })
  })

  it("requires at least one attribute name", () => {
    assert.strictEqual(failure({}), "backfill_attributes is required")
    assert.strictEqual(
      failure({ backfill_attributes: [] }),
      "backfill_attributes must be a list of at least one attribute name (got [])"
    )
    assert.strictEqual(
      failure({ backfill_attributes: ["city", ""] }),
      "backfill_attributes[1] must be a non-empty string (got \"\")"
    )
  })

  it("checks the call filter", () => {
    assert.strictEqual(
      failure({ backfill_attributes: ["a"], backfill_call_filter: { agent: [{ version: [1] }] } }),
      "backfill_call_filter.agent[0].agent_id is required"
    )
    assert.strictEqual(
      failure({ backfill_attributes: ["a"], backfill_call_filter: { agent: [{ agent_id: "x", version: [1.5] }] } }),
      "backfill_call_filter.agent[0].version[0] must be an integer (got 1.5)"
    )
    assert.strictEqual(
      failure({
        backfill_attributes: ["a"],
        backfill_call_filter: { start_timestamp: { type: "number", op: "sw", value: 1 } }
      }),
      "backfill_call_filter.start_timestamp.op must be one of \"eq\", \"ne\", \"gt\", \"ge\", \"lt\", \"le\" (got \"sw\")"
    )
    assert.strictEqual(
      failure({
        backfill_attributes: ["a"],
        backfill_call_filter: { start_timestamp: { type: "string", value: "1" } }
      }),
      "backfill_call_filter.start_timestamp.type must be one of \"number\", \"range\" (got \"string\")"
    )
  })

  it("rejects unknown fields at every level, naming them (decision 0105)", () => {
    assert.strictEqual(
      failure({ backfill_attributes: ["a"], dry_run: true }),
      "dry_run is not a known field of this request (got true)"
    )
    assert.strictEqual(
      failure({ backfill_attributes: ["a"], backfill_call_filter: { channel: "voice" } }),
      "backfill_call_filter.channel is not a known field of this request (got \"voice\")"
    )
    assert.strictEqual(
      failure({ backfill_attributes: ["a"], backfill_call_filter: { agent: [{ agent_id: "a", versions: [1] }] } }),
      "backfill_call_filter.agent[0].versions is not a known field of this request (got [1])"
    )
  })

  it.prop("keeps its wire form through decode and encode", [BackfillContactAnalysisDataRequest], ([request]) => {
    const wire = JSON.parse(JSON.stringify(Schema.encodeSync(BackfillContactAnalysisDataRequest)(request)))
    assert.deepStrictEqual<unknown>(JSON.parse(JSON.stringify(roundTrip(wire))), wire)
  })
})

describe("BackfillJobStatus", () => {
  const status = { status: "queued", start_timestamp: 1735718400000, succeeded: 0, failed: 0, triggered_by: "manual" }

  it("round-trips every state and trigger", () => {
    for (const state of ["queued", "running", "idle"]) {
      for (const trigger of ["manual", "cron"]) {
        const body = { ...status, status: state, triggered_by: trigger }
        assert.deepStrictEqual<unknown>(
          Schema.encodeSync(BackfillJobStatus)(Schema.decodeUnknownSync(BackfillJobStatus)(body)),
          body
        )
      }
    }
  })

  it("rejects unknown states and negative counters", () => {
    const decodeStatus = (input: unknown) => {
      const result = Schema.decodeUnknownResult(BackfillJobStatus)(input, { reportInput: true })
      return Result.isFailure(result) ? formatDecodeError(result.failure) : "ok"
    }
    assert.strictEqual(
      decodeStatus({ ...status, status: "done" }),
      "status must be one of \"queued\", \"running\", \"idle\" (got \"done\")"
    )
    assert.strictEqual(decodeStatus({ ...status, failed: -1 }), "failed must be an integer >= 0 (got -1)")
    assert.strictEqual(
      decodeStatus({ ...status, triggered_by: "api" }),
      "triggered_by must be one of \"manual\", \"cron\" (got \"api\")"
    )
  })
})
