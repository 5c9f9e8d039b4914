/**
 * Test-case definitions, create-batch-test and test runs (decision 0700; the vendor's paths and shapes, reference:
 * vendor-calls-facts.md §4), with svc's scripted definitions and custom-LLM batch tests.
 */
import {
  CreateTestCaseDefinitionRequest,
  ListTestCaseDefinitionsQuery,
  ListTestCaseDefinitionsResponse,
  TestCaseDefinition,
  UpdateTestCaseDefinitionRequest
} from "@svc/domain/batchTests/TestCaseDefinition.ts"
import {
  CreateBatchTestRequest,
  ListTestRunsQuery,
  ListTestRunsResponse,
  TestCaseJob
} from "@svc/domain/batchTests/TestRun.ts"
import { IdText } from "@svc/domain/models/Ids.ts"
import { TestCaseBatchJob } from "@svc/domain/models/TestCaseBatchJob.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BadRequest, InternalServerError, NotFound, TooManyRequests, Unauthorized } from "../Errors.ts"

const errors = [BadRequest, Unauthorized, NotFound, TooManyRequests, InternalServerError]
const definitionId = { test_case_definition_id: IdText }

export class TestCasesGroup extends HttpApiGroup.make("testCases")
  .add(
    HttpApiEndpoint.post("createTestCaseDefinition", "/create-test-case-definition", {
      payload: CreateTestCaseDefinitionRequest,
      success: TestCaseDefinition,
      error: [BadRequest, Unauthorized, TooManyRequests, InternalServerError]
    }).annotate(
      OpenApi.Description,
      "Create a test case definition: the vendor's simulation kind (user_prompt, metrics) or svc's scripted kind " +
        "(type: scripted, user_turns, assertions), judged without any model"
    ),
    HttpApiEndpoint.get("getTestCaseDefinition", "/get-test-case-definition/:test_case_definition_id", {
      params: definitionId,
      success: TestCaseDefinition,
      error: errors
    }),
    HttpApiEndpoint.put("updateTestCaseDefinition", "/update-test-case-definition/:test_case_definition_id", {
      params: definitionId,
      payload: UpdateTestCaseDefinitionRequest,
      success: TestCaseDefinition,
      error: errors
    }).annotate(OpenApi.Description, "Partial update: the fields sent replace the stored ones"),
    HttpApiEndpoint.delete("deleteTestCaseDefinition", "/delete-test-case-definition/:test_case_definition_id", {
      params: definitionId,
      success: HttpApiSchema.NoContent,
      error: errors
    }),
    HttpApiEndpoint.get("listTestCaseDefinitions", "/v2/list-test-case-definitions", {
      query: ListTestCaseDefinitionsQuery,
      success: ListTestCaseDefinitionsResponse,
      error: [BadRequest, Unauthorized, TooManyRequests, InternalServerError]
    }),
    HttpApiEndpoint.post("createBatchTest", "/create-batch-test", {
      payload: CreateBatchTestRequest,
      success: TestCaseBatchJob,
      error: errors
    }).annotate(
      OpenApi.Description,
      "Run test case definitions against a custom LLM's WebSocket server; answers the job in_progress"
    ),
    HttpApiEndpoint.get("listTestRuns", "/v2/list-test-runs/:test_case_batch_job_id", {
      params: { test_case_batch_job_id: IdText },
      query: ListTestRunsQuery,
      success: ListTestRunsResponse,
      error: errors
    }),
    HttpApiEndpoint.get("getTestRun", "/get-test-run/:test_case_job_id", {
      params: { test_case_job_id: IdText },
      success: TestCaseJob,
      error: errors
    })
  )
{}
