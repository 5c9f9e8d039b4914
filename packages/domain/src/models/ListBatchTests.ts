/**
 * The `GET /v2/list-batch-tests` query and response (spec, "GET /v2/list-batch-tests").
 *
 * Query values arrive as strings (the vendor's client stringifies numbers and sends `null` as `key=`), so an
 * empty value counts as absent and numbers are parsed from decimal digits. `type` is required and is
 * `svc-llm` or `conversation-flow` (a custom LLM has no batch tests to list); `llm_id` is required when
 * `type` is `svc-llm`, `conversation_flow_id` when it is `conversation-flow`, and the id of the other kind is
 * ignored. `version` defaults to the latest; `limit` is 1..1000, default 50 (design, "default `limit`").
 */
import { Option, Schema, SchemaIssue, SchemaTransformation } from "effect"
import { ConversationFlowId, LlmId } from "./Ids.ts"
import { PaginationKeyText } from "./Primitives.ts"
import { TestCaseBatchJob } from "./TestCaseBatchJob.ts"

const presentUnlessEmpty = (value: Option.Option<string>): Option.Option<string> =>
  Option.filter(value, (text) => text !== "")

const IntFromString = Schema.String.check(
  Schema.isPattern(/^\d+$/u, { expected: "a whole number written in digits" })
).pipe(Schema.decodeTo(Schema.Int, SchemaTransformation.numberFromString))

/**
 * An optional query parameter whose empty value means absent, decoded with `schema` (encoded as a string).
 */
const optionalParam = <S extends Schema.Codec<unknown, string>>(schema: S, description: string) =>
  Schema.optionalKey(Schema.String.annotate({ description })).pipe(
    Schema.decodeTo(
      Schema.optionalKey(schema),
      SchemaTransformation.transformOptional({ decode: presentUnlessEmpty, encode: (value) => value })
    )
  )

/**
 * The default page size of `list-batch-tests` (design, "default `limit`").
 *
 * @category models
 */
export const defaultListBatchTestsLimit = 50

const Limit = IntFromString.check(
  Schema.isBetween({ minimum: 1, maximum: 1000 }, { expected: "an integer from 1 to 1000" })
)

/**
 * The response engine kinds whose batch tests can be listed.
 *
 * @category models
 */
export const ListableEngineType = Schema.Literals(["svc-llm", "conversation-flow"])
/** @category models */
export type ListableEngineType = typeof ListableEngineType.Type

const requiredFor = (type: ListableEngineType, key: "llm_id" | "conversation_flow_id") =>
  new SchemaIssue.Pointer([key], new SchemaIssue.MissingKey({ messageMissingKey: `is required when type is ${type}` }))

const ListBatchTestsFields = Schema.Struct({
  type: ListableEngineType.annotate({ description: "Response engine type: svc-llm or conversation-flow." }),
  llm_id: optionalParam(LlmId, "Id of the svc LLM; required when type is svc-llm."),
  conversation_flow_id: optionalParam(
    ConversationFlowId,
    "Id of the conversation flow; required when type is conversation-flow."
  ),
  version: optionalParam(
    IntFromString.check(Schema.isGreaterThanOrEqualTo(0, { expected: "an integer >= 0" })),
    "Version of the response engine (an integer); defaults to the latest."
  ),
  limit: Schema.optionalKey(
    Schema.String.annotate({ description: "Maximum items to return, 1 to 1000; default 50." })
  ).pipe(
    Schema.decodeTo(
      Limit,
      SchemaTransformation.transformOptional({
        decode: (value) => Option.orElseSome(presentUnlessEmpty(value), () => String(defaultListBatchTestsLimit)),
        encode: (value) => value
      })
    )
  ),
  pagination_key: optionalParam(PaginationKeyText, "Key for fetching the next page.")
}).check(
  Schema.makeFilter((query) =>
    // spec: llm_id is "required when type is svc-llm", conversation_flow_id "when type is conversation-flow"
    query.type === "svc-llm" && query.llm_id === undefined
      ? requiredFor("svc-llm", "llm_id")
      : query.type === "conversation-flow" && query.conversation_flow_id === undefined
      ? requiredFor("conversation-flow", "conversation_flow_id")
      : undefined
  )
)

/**
 * A decoded `list-batch-tests` query, `limit` defaulted.
 *
 * @category models
 */
export class ListBatchTestsQuery extends Schema.Class<ListBatchTestsQuery>("ListBatchTestsQuery")(
  ListBatchTestsFields,
  { description: "Lists the batch test jobs of one response engine." }
) {}

/**
 * The `list-batch-tests` response.
 *
 * @category models
 */
export class ListBatchTestsResponse extends Schema.Class<ListBatchTestsResponse>("ListBatchTestsResponse")({
  has_more: Schema.Boolean,
  items: Schema.Array(TestCaseBatchJob),
  pagination_key: Schema.optionalKey(Schema.String.annotate({ description: "Key for fetching the next page." }))
}) {}
