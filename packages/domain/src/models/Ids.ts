/**
 * Branded identifiers of the spec's resources. On the wire every id is a non-empty string; in code the brand
 * keeps a contact id from being passed where a batch call id is expected. Decoding brands a string, and
 * `<Id>.make("...")` brands a trusted one.
 */
import { Schema } from "effect"
import { NonEmptyString } from "./Primitives.ts"

/**
 * Id of a batch test job (`test_case_batch_job_id`).
 *
 * @category models
 */
export const TestCaseBatchJobId = NonEmptyString.pipe(Schema.brand("TestCaseBatchJobId")).annotate({
  description: "Unique id of a batch test job."
})
/** @category models */
export type TestCaseBatchJobId = typeof TestCaseBatchJobId.Type

/**
 * Id of a contact (`contact_id`).
 *
 * @category models
 */
export const ContactId = NonEmptyString.pipe(Schema.brand("ContactId")).annotate({
  description: "Unique id of a contact."
})
/** @category models */
export type ContactId = typeof ContactId.Type

/**
 * Id of the organisation that owns a row (`org_id`); the API key determines it.
 *
 * @category models
 */
export const OrgId = NonEmptyString.pipe(Schema.brand("OrgId")).annotate({
  description: "Id of the organisation that owns the resource."
})
/** @category models */
export type OrgId = typeof OrgId.Type

/**
 * Id of a batch call (`batch_call_id`).
 *
 * @category models
 */
export const BatchCallId = NonEmptyString.pipe(Schema.brand("BatchCallId")).annotate({
  description: "Unique id of a batch call."
})
/** @category models */
export type BatchCallId = typeof BatchCallId.Type

/**
 * Id of an svc LLM response engine (`llm_id`).
 *
 * @category models
 */
export const LlmId = NonEmptyString.pipe(Schema.brand("LlmId")).annotate({
  description: "Id of an svc LLM response engine."
})
/** @category models */
export type LlmId = typeof LlmId.Type

/**
 * Id of a conversation flow response engine (`conversation_flow_id`).
 *
 * @category models
 */
export const ConversationFlowId = NonEmptyString.pipe(Schema.brand("ConversationFlowId")).annotate({
  description: "Id of a conversation flow response engine."
})
/** @category models */
export type ConversationFlowId = typeof ConversationFlowId.Type

/**
 * Id of an agent (`agent_id`, `override_agent_id`).
 *
 * @category models
 */
export const AgentId = NonEmptyString.pipe(Schema.brand("AgentId")).annotate({
  description: "Id of an agent."
})
/** @category models */
export type AgentId = typeof AgentId.Type
