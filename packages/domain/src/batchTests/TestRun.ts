/**
 * Test runs and the request that starts them (decision 0702; reference: vendor-calls-facts.md §4). A run
 * is `pending`, then `in_progress`, then one of `pass`, `fail`, `error`; it carries the definition as it was when
 * the batch test was created, so later edits of the definition do not change what a run tested.
 */
import { Schema } from "effect"
import { IdText } from "../models/Ids.ts"
import { EpochMillis, NonEmptyString } from "../models/Primitives.ts"
import { TestCaseDefinition, WebSocketUrl } from "./TestCaseDefinition.ts"

/** The most definitions one batch test runs (decision 0702). */
export const maxDefinitionsPerBatch = 1000

/**
 * A run's status.
 *
 * @category models
 */
export const TestRunStatus = Schema.Literals(["pending", "in_progress", "pass", "fail", "error"])
/** @category models */
export type TestRunStatus = typeof TestRunStatus.Type

/**
 * `POST /create-batch-test`: the vendor's shape; the engine may be a custom LLM (svc runs those) or the vendor's
 * two, which this deployment does not run (the handler answers 400 naming what it runs).
 *
 * @category models
 */
export const CreateBatchTestRequest = Schema.Struct({
  response_engine: Schema.Union([
    Schema.Struct({ type: Schema.Literal("custom-llm"), llm_websocket_url: WebSocketUrl }),
    Schema.Struct({
      type: Schema.Literal("svc-llm"),
      llm_id: IdText,
      version: Schema.optionalKey(Schema.NullOr(Schema.Int))
    }),
    Schema.Struct({
      type: Schema.Literal("conversation-flow"),
      conversation_flow_id: IdText,
      version: Schema.optionalKey(Schema.NullOr(Schema.Int))
    })
  ]),
  test_case_definition_ids: Schema.Array(IdText).check(
    Schema.isMinLength(1, { expected: "at least one test_case_definition_id" }),
    Schema.isMaxLength(maxDefinitionsPerBatch, { expected: `at most ${maxDefinitionsPerBatch} ids` }),
    Schema.makeFilter((ids: ReadonlyArray<string>) => {
      const seen = new Set<string>()
      for (const [index, id] of ids.entries()) {
        if (seen.has(id)) {
          return { path: [index], issue: `must not repeat ${JSON.stringify(id)} (each definition runs once)` }
        }
        seen.add(id)
      }
      return undefined
    })
  )
}).annotate({ identifier: "CreateBatchTestRequest" })
/** @category models */
export type CreateBatchTestRequest = typeof CreateBatchTestRequest.Type

/**
 * A test run (`TestCaseJob`) as `get-test-run` and `list-test-runs` return it.
 *
 * @category models
 */
export const TestCaseJob = Schema.Struct({
  test_case_job_id: IdText,
  test_case_batch_job_id: IdText,
  test_case_definition_id: IdText,
  test_case_definition_snapshot: TestCaseDefinition,
  status: TestRunStatus,
  result_explanation: Schema.NullOr(Schema.String),
  transcript_snapshot: Schema.NullOr(Schema.Unknown),
  creation_timestamp: EpochMillis,
  user_modified_timestamp: EpochMillis
}).annotate({ identifier: "TestCaseJob" })
/** @category models */
export type TestCaseJob = typeof TestCaseJob.Type

/**
 * `GET /v2/list-test-runs/{id}` query: `limit` (1..1000, default 50) and `pagination_key`.
 *
 * @category models
 */
export const ListTestRunsQuery = Schema.Struct({
  limit: Schema.optionalKey(
    Schema.String.check(Schema.isPattern(/^(?:[1-9]\d{0,2}|1000)$/u, { expected: "an integer from 1 to 1000" }))
  ),
  pagination_key: Schema.optionalKey(
    NonEmptyString.check(Schema.isMaxLength(1024, { expected: "a pagination_key from a previous response" }))
  )
}).annotate({ identifier: "ListTestRunsQuery" })
/** @category models */
export type ListTestRunsQuery = typeof ListTestRunsQuery.Type

/**
 * The list-test-runs response.
 *
 * @category models
 */
export const ListTestRunsResponse = Schema.Struct({
  has_more: Schema.Boolean,
  items: Schema.Array(TestCaseJob),
  pagination_key: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "ListTestRunsResponse" })
/** @category models */
export type ListTestRunsResponse = typeof ListTestRunsResponse.Type
