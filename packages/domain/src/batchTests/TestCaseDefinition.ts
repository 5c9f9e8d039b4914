/**
 * Test-case definitions (decision 0700): the vendor's `simulation` kind (`user_prompt`, `metrics`, stored and run
 * by a chat-completions model when one is configured) and svc's deterministic `scripted` kind (`user_turns` said in
 * order, `assertions` judged without any model). Shapes follow the vendor's `create-test-case-definition`
 * (reference: vendor-calls-facts.md §4); `type` absent means `simulation`, as the vendor's SDK sends no `type`.
 *
 * Invariants a decoded definition keeps: at least one user turn (a script with no caller tests nothing), every
 * `regex` compiles (JavaScript syntax, `u` flag), an assertion's `turn` points into the script (0 = the begin
 * message, n = the reply to `user_turns[n-1]`; decision 0701).
 */
import { Schema, SchemaIssue } from "effect"
import { currentLlmModels } from "../Deprecation/Catalogue.ts"
import { ConversationFlowId, IdText, LlmId } from "../models/Ids.ts"
import { EpochMillis, NonEmptyString, NonNegativeInt } from "../models/Primitives.ts"

/** Bounds that keep one definition small enough to snapshot into every run (decision 0700). */
export const limits = { userTurns: 100, assertions: 100, text: 10_000, metrics: 50 } as const

const Text = Schema.String.check(
  Schema.isMaxLength(limits.text, { expected: `a string of at most ${limits.text} characters` })
)
const NonEmptyText = NonEmptyString.check(
  Schema.isMaxLength(limits.text, { expected: `a non-empty string of at most ${limits.text} characters` })
)

/**
 * A custom LLM's WebSocket URL: `ws:` or `wss:`, no credentials (the platform adds `/{call_id}`).
 *
 * @category schemas
 */
export const WebSocketUrl = NonEmptyString.check(
  Schema.makeFilter((text: string) => {
    let url: URL
    try {
      url = new URL(text)
    } catch {
      return "must be a ws:// or wss:// URL"
    }
    if (url.protocol !== "ws:" && url.protocol !== "wss:") return "must be a ws:// or wss:// URL"
    if (url.username !== "" || url.password !== "") return "must not carry credentials"
    if (url.search !== "" || url.hash !== "") return "must have no query or fragment (the call id is appended)"
    return undefined
  }, { expected: "a ws:// or wss:// URL" }),
  Schema.isMaxLength(2048, { expected: "a URL of at most 2048 characters" })
)

const EngineVersion = Schema.optionalKey(Schema.NullOr(NonNegativeInt))

/**
 * The engine a definition is written for: the vendor's two, plus a custom LLM (svc extension).
 *
 * @category models
 */
export const DefinitionEngine = Schema.Union([
  Schema.Struct({ type: Schema.Literal("svc-llm"), llm_id: LlmId, version: EngineVersion }),
  Schema.Struct({
    type: Schema.Literal("conversation-flow"),
    conversation_flow_id: ConversationFlowId,
    version: EngineVersion
  }),
  Schema.Struct({ type: Schema.Literal("custom-llm"), llm_websocket_url: WebSocketUrl })
]).annotate({ identifier: "TestCaseResponseEngine" })
/** @category models */
export type DefinitionEngine = typeof DefinitionEngine.Type

const Turn = NonNegativeInt.annotate({
  description: "0 = the begin message, n = the agent's reply to user_turns[n-1]; omitted = any reply."
})

const compiles = Schema.makeFilter((text: string) => {
  try {
    new RegExp(text, "u")
    return undefined
  } catch (error) {
    return `must be a valid JavaScript regular expression (${(error as Error).message})`
  }
}, { expected: "a valid JavaScript regular expression" })

/**
 * One deterministic check of a scripted run (decision 0701).
 *
 * @category models
 */
export const Assertion = Schema.Union([
  Schema.Struct({ type: Schema.Literal("contains"), value: NonEmptyText, turn: Schema.optionalKey(Turn) }),
  Schema.Struct({ type: Schema.Literal("not_contains"), value: NonEmptyText, turn: Schema.optionalKey(Turn) }),
  Schema.Struct({ type: Schema.Literal("regex"), value: NonEmptyText.check(compiles), turn: Schema.optionalKey(Turn) }),
  Schema.Struct({
    type: Schema.Literal("tool_called"),
    name: NonEmptyText,
    arguments: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
  }),
  Schema.Struct({ type: Schema.Literal("ends_call") }),
  Schema.Struct({
    type: Schema.Literal("max_latency_ms"),
    value: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1, { expected: "an integer >= 1 (milliseconds)" }))
  })
]).annotate({ identifier: "TestCaseAssertion" })
/** @category models */
export type Assertion = typeof Assertion.Type

const ToolMock = Schema.Struct({
  tool_name: NonEmptyText,
  input_match_rule: Schema.Union([
    Schema.Struct({ type: Schema.Literal("any") }),
    Schema.Struct({ type: Schema.Literal("partial_match"), args: Schema.Record(Schema.String, Schema.Unknown) })
  ]),
  output: Text,
  result: Schema.optionalKey(Schema.NullOr(Schema.Boolean))
}).annotate({ identifier: "ToolMock" })

/**
 * The vendor's `llm_model` values (reference: vendor-calls-facts.md §4): the same enum as the LLM `model` of the
 * vendor's SDK, so the one list the deprecation rules keep (models accepted after the retirements) is the source,
 * in its order.
 *
 * @category models
 */
export const LlmModel = Schema.Literals(Array.from(currentLlmModels))

/** The model a definition gets when it names none (decision 0700). */
export const defaultLlmModel = "gpt-4.1" as const

const common = {
  name: NonEmptyText,
  response_engine: DefinitionEngine,
  dynamic_variables: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  tool_mocks: Schema.optionalKey(Schema.Array(ToolMock)),
  llm_model: Schema.optionalKey(LlmModel)
}

const UserTurns = Schema.Array(NonEmptyText).check(
  Schema.isMinLength(1, { expected: "at least one user turn" }),
  Schema.isMaxLength(limits.userTurns, { expected: `at most ${limits.userTurns} user turns` })
)
const Assertions = Schema.Array(Assertion).check(
  Schema.isMaxLength(limits.assertions, { expected: `at most ${limits.assertions} assertions` })
)
const Metrics = Schema.Array(NonEmptyText).check(
  Schema.isMaxLength(limits.metrics, { expected: `at most ${limits.metrics} metrics` })
)

/** decision 0701: an assertion's `turn` names a turn of the script: 0..user_turns.length. */
const turnsInScript = Schema.makeFilter(
  (definition: { readonly user_turns: ReadonlyArray<string>; readonly assertions: ReadonlyArray<Assertion> }) => {
    for (const [index, assertion] of definition.assertions.entries()) {
      if ("turn" in assertion && assertion.turn !== undefined && assertion.turn > definition.user_turns.length) {
        return {
          path: ["assertions", index, "turn"],
          issue: `must be at most ${definition.user_turns.length} (the number of user_turns; 0 is the begin message)`
        }
      }
    }
    return undefined
  }
)

/**
 * `POST /create-test-case-definition`, scripted kind (svc extension).
 *
 * @category models
 */
export const CreateScriptedDefinition = Schema.Struct({
  type: Schema.Literal("scripted"),
  ...common,
  user_turns: UserTurns,
  assertions: Assertions
}).check(turnsInScript).annotate({ identifier: "CreateScriptedTestCaseDefinition" })

/**
 * `POST /create-test-case-definition`, the vendor's simulation kind.
 *
 * @category models
 */
export const CreateSimulationDefinition = Schema.Struct({
  type: Schema.optionalKey(Schema.Literal("simulation")),
  ...common,
  user_prompt: NonEmptyText,
  metrics: Metrics
}).annotate({ identifier: "CreateSimulationTestCaseDefinition" })

/**
 * The create request: scripted when `type` is `scripted`, simulation otherwise.
 *
 * @category models
 */
export const CreateTestCaseDefinitionRequest = Schema.Union([CreateScriptedDefinition, CreateSimulationDefinition])
  .annotate({ identifier: "CreateTestCaseDefinitionRequest" })
/** @category models */
export type CreateTestCaseDefinitionRequest = typeof CreateTestCaseDefinitionRequest.Type

/**
 * `PUT /update-test-case-definition/{id}`: the create fields, all optional (the vendor's partial update); the
 * merged definition is decoded again as a create, so the result keeps every invariant.
 *
 * @category models
 */
export const UpdateTestCaseDefinitionRequest = Schema.Struct({
  type: Schema.optionalKey(Schema.Literals(["simulation", "scripted"])),
  name: Schema.optionalKey(NonEmptyText),
  response_engine: Schema.optionalKey(DefinitionEngine),
  dynamic_variables: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  tool_mocks: Schema.optionalKey(Schema.Array(ToolMock)),
  llm_model: Schema.optionalKey(LlmModel),
  user_prompt: Schema.optionalKey(NonEmptyText),
  metrics: Schema.optionalKey(Metrics),
  user_turns: Schema.optionalKey(UserTurns),
  assertions: Schema.optionalKey(Assertions)
}).annotate({ identifier: "UpdateTestCaseDefinitionRequest" })
/** @category models */
export type UpdateTestCaseDefinitionRequest = typeof UpdateTestCaseDefinitionRequest.Type

const stored = {
  test_case_definition_id: IdText,
  name: NonEmptyString,
  response_engine: DefinitionEngine,
  dynamic_variables: Schema.Record(Schema.String, Schema.String),
  llm_model: LlmModel,
  tool_mocks: Schema.Array(ToolMock),
  creation_timestamp: EpochMillis,
  user_modified_timestamp: EpochMillis
}

/**
 * A definition as the API returns it: every vendor field present (the vendor marks them all required), the
 * scripted kind adds `user_turns` and `assertions` and has an empty `user_prompt` and `metrics`.
 *
 * @category models
 */
export const TestCaseDefinition = Schema.Union([
  Schema.Struct({
    ...stored,
    type: Schema.Literal("scripted"),
    user_prompt: Schema.String,
    metrics: Schema.Array(Schema.String),
    user_turns: Schema.Array(Schema.String),
    assertions: Schema.Array(Assertion)
  }),
  Schema.Struct({
    ...stored,
    type: Schema.Literal("simulation"),
    user_prompt: Schema.String,
    metrics: Schema.Array(Schema.String)
  })
]).annotate({ identifier: "TestCaseDefinition" })
/** @category models */
export type TestCaseDefinition = typeof TestCaseDefinition.Type
/** @category models */
export type ScriptedDefinition = Extract<TestCaseDefinition, { readonly type: "scripted" }>

/** A definition without its id and timestamps. @category models */
export type StoredDefinition = TestCaseDefinition extends infer D
  ? D extends TestCaseDefinition ? Omit<D, "test_case_definition_id" | "creation_timestamp" | "user_modified_timestamp">
  : never
  : never

/**
 * The stored definition for a decoded create request (the response without id and timestamps).
 *
 * @category constructors
 */
export const normalize = (request: CreateTestCaseDefinitionRequest): StoredDefinition => {
  const base = {
    name: request.name,
    response_engine: request.response_engine,
    dynamic_variables: request.dynamic_variables ?? {},
    llm_model: request.llm_model ?? defaultLlmModel,
    tool_mocks: request.tool_mocks ?? []
  }
  return request.type === "scripted"
    ? {
      ...base,
      type: "scripted",
      user_prompt: "",
      metrics: [],
      user_turns: request.user_turns,
      assertions: request.assertions
    }
    : { ...base, type: "simulation", user_prompt: request.user_prompt, metrics: request.metrics }
}

/**
 * The create request an update yields: the stored definition's fields overlaid by the update's. Switching kind
 * drops the other kind's fields, so the merged request is decoded against the new kind alone.
 *
 * @category constructors
 */
export const mergeUpdate = (current: TestCaseDefinition, update: UpdateTestCaseDefinitionRequest): unknown => {
  const type = update.type ?? current.type
  const base = {
    name: update.name ?? current.name,
    response_engine: update.response_engine ?? current.response_engine,
    dynamic_variables: update.dynamic_variables ?? current.dynamic_variables,
    tool_mocks: update.tool_mocks ?? current.tool_mocks,
    llm_model: update.llm_model ?? current.llm_model
  }
  return type === "scripted"
    ? {
      type,
      ...base,
      user_turns: update.user_turns ?? (current.type === "scripted" ? current.user_turns : undefined),
      assertions: update.assertions ?? (current.type === "scripted" ? current.assertions : [])
    }
    : {
      type,
      ...base,
      user_prompt: update.user_prompt ?? (current.type === "simulation" ? current.user_prompt : undefined),
      metrics: update.metrics ?? current.metrics
    }
}

/**
 * `GET /v2/list-test-case-definitions` query: `type` required, with the engine's id (`llm_id`,
 * `conversation_flow_id`; a custom LLM's `llm_websocket_url` is optional: all custom-LLM definitions without it).
 *
 * @category models
 */
export const ListTestCaseDefinitionsQuery = Schema.Struct({
  type: Schema.Literals(["svc-llm", "conversation-flow", "custom-llm"]),
  llm_id: Schema.optionalKey(LlmId),
  conversation_flow_id: Schema.optionalKey(ConversationFlowId),
  llm_websocket_url: Schema.optionalKey(WebSocketUrl),
  limit: Schema.optionalKey(
    Schema.String.check(Schema.isPattern(/^(?:[1-9]\d{0,2}|1000)$/u, { expected: "an integer from 1 to 1000" }))
  ),
  pagination_key: Schema.optionalKey(
    NonEmptyString.check(Schema.isMaxLength(1024, { expected: "a pagination_key from a previous response" }))
  )
}).check(
  Schema.makeFilter((query) =>
    query.type === "svc-llm" && query.llm_id === undefined
      ? new SchemaIssue.Pointer(
        ["llm_id"],
        new SchemaIssue.MissingKey({ messageMissingKey: "is required when type is svc-llm" })
      )
      : query.type === "conversation-flow" && query.conversation_flow_id === undefined
      ? new SchemaIssue.Pointer(
        ["conversation_flow_id"],
        new SchemaIssue.MissingKey({ messageMissingKey: "is required when type is conversation-flow" })
      )
      : undefined
  )
).annotate({ identifier: "ListTestCaseDefinitionsQuery" })
/** @category models */
export type ListTestCaseDefinitionsQuery = typeof ListTestCaseDefinitionsQuery.Type

/**
 * The list response.
 *
 * @category models
 */
export const ListTestCaseDefinitionsResponse = Schema.Struct({
  has_more: Schema.Boolean,
  items: Schema.Array(TestCaseDefinition),
  pagination_key: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "ListTestCaseDefinitionsResponse" })
/** @category models */
export type ListTestCaseDefinitionsResponse = typeof ListTestCaseDefinitionsResponse.Type

/**
 * The engine key a definition is listed under: (type, id or URL).
 *
 * @category encoding
 */
export const engineKey = (engine: DefinitionEngine): { readonly type: DefinitionEngine["type"]; readonly id: string } =>
  engine.type === "svc-llm"
    ? { type: engine.type, id: engine.llm_id }
    : engine.type === "conversation-flow"
    ? { type: engine.type, id: engine.conversation_flow_id }
    : { type: engine.type, id: engine.llm_websocket_url }
