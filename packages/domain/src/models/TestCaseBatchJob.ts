/**
 * A batch test job: a group of test cases run against one response engine, with pass, fail and error
 * counts (spec, TestCaseBatchJob; every field is required). The counts are integers `>= 0` and, since
 * `total_count` is the number of test cases in the batch, never add up to more than it.
 */
import { Schema, SchemaIssue } from "effect"
import { TestCaseBatchJobId } from "./Ids.ts"
import { EpochMillis, NonNegativeInt } from "./Primitives.ts"
import { ResponseEngine } from "./ResponseEngine.ts"

/**
 * The state of a batch test job: `in_progress` until every test case has a result, then `complete`.
 *
 * @category models
 */
export const TestCaseBatchJobStatus = Schema.Literals(["in_progress", "complete"])
/** @category models */
export type TestCaseBatchJobStatus = typeof TestCaseBatchJobStatus.Type

const TestCaseBatchJobFields = Schema.Struct({
  test_case_batch_job_id: TestCaseBatchJobId,
  status: TestCaseBatchJobStatus,
  response_engine: ResponseEngine,
  pass_count: NonNegativeInt.annotate({ description: "Test cases that passed." }),
  fail_count: NonNegativeInt.annotate({ description: "Test cases that failed." }),
  error_count: NonNegativeInt.annotate({ description: "Test cases that ended in an error." }),
  total_count: NonNegativeInt.annotate({ description: "Number of test cases in the batch." }),
  creation_timestamp: EpochMillis,
  user_modified_timestamp: EpochMillis.annotate({ description: "Last modification, ms since the Unix epoch." })
}).check(
  Schema.makeFilter((job, _ast, options) =>
    // spec: total_count is "the number of test cases in the batch", so the results cannot exceed it
    job.pass_count + job.fail_count + job.error_count <= job.total_count
      ? undefined
      : new SchemaIssue.Pointer(
        ["total_count"],
        new SchemaIssue.InvalidValue(
          { expected: "at least pass_count + fail_count + error_count" },
          job.total_count,
          options
        )
      )
  )
)

/**
 * A batch test job as `GET /get-batch-test/{id}` and `GET /v2/list-batch-tests` return it.
 *
 * @category models
 */
export class TestCaseBatchJob extends Schema.Class<TestCaseBatchJob>("TestCaseBatchJob")(TestCaseBatchJobFields, {
  description: "A batch test job: test cases run against one response engine, with their result counts."
}) {}
