/**
 * Test-case definitions, create-batch-test and test runs (decisions 0700-0702). A definition's update is merged
 * with the stored definition and decoded again as a create, so an update cannot leave a definition that a create
 * would refuse.
 */
import { Api } from "@svc/api/Api.ts"
import { CurrentOrg } from "@svc/api/Authorization.ts"
import { badRequest, notFound } from "@svc/api/Errors.ts"
import { CreateTestCaseDefinitionRequest, mergeUpdate, normalize } from "@svc/domain/batchTests/TestCaseDefinition.ts"
import { formatDecodeError } from "@svc/domain/models/DecodeMessage.ts"
import { requestParseOptions } from "@svc/domain/models/RequestDecoding.ts"
import { TestCaseDefinitionsRepo, TestRunsRepo } from "@svc/store/batchTests/index.ts"
import { Effect, Result, Schema } from "effect"
import { HttpApiBuilder } from "effect/http-api"

const decodeCreate = Schema.decodeUnknownResult(CreateTestCaseDefinitionRequest)

/** The engines this deployment runs batch tests against (decision 0702). */
export const runnableEngines = ["custom-llm"] as const

/** @category layers */
export const layer = HttpApiBuilder.group(
  Api,
  "testCases",
  Effect.fn(function*(handlers) {
    const definitions = yield* TestCaseDefinitionsRepo
    const runs = yield* TestRunsRepo
    const definitionMissing = (id: string) => Effect.fail(notFound(`test_case_definition_id ${id} not found`))
    return handlers
      .handle(
        "createTestCaseDefinition",
        ({ payload }) => Effect.flatMap(CurrentOrg, ({ orgId }) => definitions.create(orgId, normalize(payload)))
      )
      .handle(
        "getTestCaseDefinition",
        ({ params }) =>
          Effect.flatMap(CurrentOrg, ({ orgId }) =>
            definitions.get(orgId, params.test_case_definition_id).pipe(
              Effect.catchTag("TestCaseDefinitionNotFound", () => definitionMissing(params.test_case_definition_id))
            ))
      )
      .handle("updateTestCaseDefinition", ({ params, payload }) =>
        Effect.gen(function*() {
          const { orgId } = yield* CurrentOrg
          const id = params.test_case_definition_id
          const current = yield* definitions.get(orgId, id).pipe(
            Effect.catchTag("TestCaseDefinitionNotFound", () => definitionMissing(id))
          )
          const merged = mergeUpdate(current, payload)
          const decoded = decodeCreate(merged, { ...requestParseOptions, reportInput: true })
          if (Result.isFailure(decoded)) {
            return yield* badRequest(formatDecodeError(decoded.failure, { input: merged }))
          }
          return yield* definitions.update(orgId, id, normalize(decoded.success)).pipe(
            Effect.catchTag("TestCaseDefinitionNotFound", () => definitionMissing(id))
          )
        }))
      .handle(
        "deleteTestCaseDefinition",
        ({ params }) =>
          Effect.flatMap(CurrentOrg, ({ orgId }) =>
            definitions.remove(orgId, params.test_case_definition_id).pipe(
              Effect.catchTag("TestCaseDefinitionNotFound", () => definitionMissing(params.test_case_definition_id))
            ))
      )
      .handle(
        "listTestCaseDefinitions",
        ({ query }) =>
          Effect.flatMap(CurrentOrg, ({ orgId }) =>
            definitions.list(orgId, query).pipe(
              Effect.catchTag("InvalidPaginationKey", (error) => Effect.fail(badRequest(error.message)))
            ))
      )
      .handle("createBatchTest", ({ payload }) =>
        Effect.gen(function*() {
          const { orgId } = yield* CurrentOrg
          const engine = payload.response_engine
          if (engine.type !== "custom-llm") {
            // svc has no conversation runtime of its own (decision 0702): only a customer's server is executable
            return yield* badRequest(
              `response_engine.type ${engine.type} is not run by this deployment: batch tests run against ` +
                `${
                  runnableEngines.join(", ")
                } engines (response_engine: {"type":"custom-llm","llm_websocket_url":"wss://..."})`
            )
          }
          return yield* runs.createBatch(orgId, engine.llm_websocket_url, payload.test_case_definition_ids).pipe(
            Effect.catchTag("TestCaseDefinitionNotFound", (error) => Effect.fail(notFound(error.message)))
          )
        }))
      .handle(
        "listTestRuns",
        ({ params, query }) =>
          Effect.flatMap(CurrentOrg, ({ orgId }) =>
            runs.list(orgId, params.test_case_batch_job_id, query).pipe(
              Effect.catchTag("InvalidPaginationKey", (error) => Effect.fail(badRequest(error.message))),
              Effect.catchTag("BatchTestNotFound", (error) => Effect.fail(notFound(error.message)))
            ))
      )
      .handle(
        "getTestRun",
        ({ params }) =>
          Effect.flatMap(CurrentOrg, ({ orgId }) =>
            runs.get(orgId, params.test_case_job_id).pipe(
              Effect.catchTag("TestRunNotFound", (error) => Effect.fail(notFound(error.message)))
            ))
      )
  })
)
