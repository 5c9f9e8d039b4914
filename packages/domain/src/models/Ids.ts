/**
 * Branded identifiers of the spec's resources. On the wire every id is a non-empty string of at most 255 characters; in code the brand
 * keeps a contact id from being passed where a batch call id is expected. Decoding brands a string, and
 * `<Id>.make("...")` brands a trusted one.
 */
import { Schema } from "effect"
import { NonEmptyString } from "./Primitives.ts"

/**
 * The longest id accepted anywhere (path, query, body): ids svc makes are at most 43 characters, the vendor's
 * about 32. A bound keeps a path or query value from being arbitrarily large (decision 0105).
 *
 * @category models
 */
export const maxIdLength = 255

/**
 * Any id on the wire, unbranded: 1 to 255 characters. The branded ids below build on it; path parameters use
 * it as is, so that typed clients pass plain strings.
 *
 * @category schemas
 */
export const IdText = NonEmptyString.check(
  Schema.isMaxLength(maxIdLength, { expected: `at most ${maxIdLength} characters long` })
)

/**
 * Id of a batch test job (`test_case_batch_job_id`).
 *
 * @category models
 */
export const TestCaseBatchJobId = IdText.pipe(Schema.brand("TestCaseBatchJobId")).annotate({
  description: "Unique id of a batch test job."
})
/** @category models */
export type TestCaseBatchJobId = typeof TestCaseBatchJobId.Type

/**
 * Id of a contact (`contact_id`).
 *
 * @category models
 */
export const ContactId = IdText.pipe(Schema.brand("ContactId")).annotate({
  description: "Unique id of a contact."
})
/** @category models */
export type ContactId = typeof ContactId.Type

/**
 * Id of the organisation that owns a row (`org_id`); the API key determines it.
 *
 * @category models
 */
export const OrgId = IdText.pipe(Schema.brand("OrgId")).annotate({
  description: "Id of the organisation that owns the resource."
})
/** @category models */
export type OrgId = typeof OrgId.Type

/**
 * Id of a batch call (`batch_call_id`).
 *
 * @category models
 */
export const BatchCallId = IdText.pipe(Schema.brand("BatchCallId")).annotate({
  description: "Unique id of a batch call."
})
/** @category models */
export type BatchCallId = typeof BatchCallId.Type

/**
 * Id of a call (`call_id`).
 *
 * @category models
 */
export const CallId = IdText.pipe(Schema.brand("CallId")).annotate({
  description: "Unique id of a call."
})
/** @category models */
export type CallId = typeof CallId.Type

/**
 * Id of an svc LLM response engine (`llm_id`).
 *
 * @category models
 */
export const LlmId = IdText.pipe(Schema.brand("LlmId")).annotate({
  description: "Id of an svc LLM response engine."
})
/** @category models */
export type LlmId = typeof LlmId.Type

/**
 * Id of a conversation flow response engine (`conversation_flow_id`).
 *
 * @category models
 */
export const ConversationFlowId = IdText.pipe(Schema.brand("ConversationFlowId")).annotate({
  description: "Id of a conversation flow response engine."
})
/** @category models */
export type ConversationFlowId = typeof ConversationFlowId.Type

/**
 * Id of an agent (`agent_id`, `override_agent_id`).
 *
 * @category models
 */
export const AgentId = IdText.pipe(Schema.brand("AgentId")).annotate({
  description: "Id of an agent."
})
/** @category models */
export type AgentId = typeof AgentId.Type
