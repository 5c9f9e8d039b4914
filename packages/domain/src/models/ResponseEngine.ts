/**
 * The response engine of an agent or batch test job: exactly one of three variants, discriminated by `type`
 * (spec, ResponseEngine). `version` is nullable and optional on the two versioned variants; absent or `null`
 * means the latest version.
 */
import { Schema } from "effect"
import { ConversationFlowId, LlmId } from "./Ids.ts"
import { NonEmptyString, NonNegativeInt } from "./Primitives.ts"

const EngineVersion = Schema.NullOr(NonNegativeInt).annotate({
  description: "Version of the response engine; omitted or null means the latest version."
})

/**
 * An svc LLM response engine.
 *
 * @category models
 */
export const SvcLlmResponseEngine = Schema.Struct({
  type: Schema.Literal("svc-llm"),
  llm_id: LlmId,
  version: Schema.optionalKey(EngineVersion)
}).annotate({ identifier: "SvcLlmResponseEngine", description: "An svc LLM response engine." })
/** @category models */
export type SvcLlmResponseEngine = typeof SvcLlmResponseEngine.Type

/**
 * A custom LLM reached over a websocket.
 *
 * @category models
 */
export const CustomLlmResponseEngine = Schema.Struct({
  type: Schema.Literal("custom-llm"),
  llm_websocket_url: NonEmptyString
}).annotate({ identifier: "CustomLlmResponseEngine", description: "A custom LLM reached over a websocket." })
/** @category models */
export type CustomLlmResponseEngine = typeof CustomLlmResponseEngine.Type

/**
 * A conversation flow response engine.
 *
 * @category models
 */
export const ConversationFlowResponseEngine = Schema.Struct({
  type: Schema.Literal("conversation-flow"),
  conversation_flow_id: ConversationFlowId,
  version: Schema.optionalKey(EngineVersion)
}).annotate({ identifier: "ConversationFlowResponseEngine", description: "A conversation flow response engine." })
/** @category models */
export type ConversationFlowResponseEngine = typeof ConversationFlowResponseEngine.Type

/**
 * One of the three response engines, discriminated by `type`.
 *
 * @category models
 */
export const ResponseEngine = Schema.Union([
  SvcLlmResponseEngine,
  CustomLlmResponseEngine,
  ConversationFlowResponseEngine
]).annotate({
  identifier: "ResponseEngine",
  description: "The engine that generates the agent's responses, discriminated by `type`."
})
/** @category models */
export type ResponseEngine = typeof ResponseEngine.Type

/**
 * The `type` of a response engine.
 *
 * @category models
 */
export const ResponseEngineType = Schema.Literals(["svc-llm", "custom-llm", "conversation-flow"])
/** @category models */
export type ResponseEngineType = typeof ResponseEngineType.Type
