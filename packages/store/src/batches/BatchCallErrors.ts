/**
 * Every way a create-batch-call request can be refused, and the batch that is not there (decision 0302).
 */
import { Schema } from "effect"

/**
 * More tasks than the configured maximum per batch (design: "empty `tasks`": 400; default maximum 100,000).
 *
 * @category errors
 */
export class TooManyTasks extends Schema.TaggedError<TooManyTasks>()("TooManyTasks", {
  count: Schema.Int,
  max: Schema.Int,
  message: Schema.String
}) {}

/**
 * A batch without tasks (design: "empty `tasks`": 400). The request schema already rejects it; the repository
 * does not rely on that.
 *
 * @category errors
 */
export class NoTasks extends Schema.TaggedError<NoTasks>()("NoTasks", {
  message: Schema.String
}) {}

/**
 * The `from_number` is not a number of the org (spec: "a number ... that the account owns"; 404 "not found under
 * the given key").
 *
 * @category errors
 */
export class FromNumberNotOwned extends Schema.TaggedError<FromNumberNotOwned>()("FromNumberNotOwned", {
  fromNumber: Schema.String,
  message: Schema.String
}) {}

/**
 * A task's `override_agent_id` (with its numeric `override_agent_version`, when one is given) is not an agent of
 * the org (spec: 404 "the asset cannot be found under the given key"). Names the first such agent in task order.
 *
 * @category errors
 */
export class AgentNotFound extends Schema.TaggedError<AgentNotFound>()("AgentNotFound", {
  agentId: Schema.String,
  version: Schema.optionalKey(Schema.Int),
  taskIndex: Schema.Int,
  message: Schema.String
}) {}

/**
 * The `Idempotency-Key` already created a batch for the org, from a different body (400: the vendor's client
 * retries 409, so a conflict is never 409; design: "never 408/409").
 *
 * @category errors
 */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {
  idempotencyKey: Schema.String,
  message: Schema.String
}) {}

/**
 * A string PostgreSQL cannot store: it contains a NUL character (U+0000) or an unpaired UTF-16 surrogate, which
 * neither `text` nor `jsonb` accepts. Names the field (400).
 *
 * @category errors
 */
export class UnstorableText extends Schema.TaggedError<UnstorableText>()("UnstorableText", {
  field: Schema.String,
  message: Schema.String
}) {}

/**
 * No batch call with this id in the org.
 *
 * @category errors
 */
export class BatchCallNotFound extends Schema.TaggedError<BatchCallNotFound>()("BatchCallNotFound", {
  batchCallId: Schema.String,
  message: Schema.String
}) {}

/**
 * Every way `create` can refuse a request.
 *
 * @category errors
 */
export type CreateBatchCallError =
  | TooManyTasks
  | NoTasks
  | FromNumberNotOwned
  | AgentNotFound
  | IdempotencyKeyReused
  | UnstorableText
