/**
 * The telephony port: what the scheduler needs from a carrier to place one outbound call of a batch, and to
 * find out afterwards whether a call was placed. The scheduler depends only on this interface; the default
 * adapter simulates carriers (apps/scheduler `SimulatedDialer`), a real one plugs in behind the same service.
 * The contract every adapter must honour is written down in `docs/dialer.md`; in short:
 *
 * - **Idempotency by key.** Every request carries `idempotency_key` (the batch task's id). However often and
 *   from however many processes `dial` is called with one key, at most one call is ever placed for it; a
 *   repeated `dial` joins the call that exists and answers with its end.
 * - **`dial` completes when the call has ended**, with its outcome, timing and post-call analysis data. A call
 *   occupies one of the org's concurrency slots for as long as `dial` runs.
 * - **`lookup(key)`** answers whether a call with that key exists (ongoing or ended) or never happened. The
 *   scheduler asks it before it ever dials a task again whose first dial it lost track of (decision 0401,
 *   "Exactly once": reconciliation asks the dialer before any redial).
 * - Failures say whether a call may exist: {@link DialRejected} means none was placed (the task fails),
 *   {@link DialerUnavailable} means the adapter cannot tell (the task is reconciled through `lookup`).
 *
 * The models are plain structs rather than classes: thousands of requests a second are built on the dispatch
 * path, and their fields come from rows that were validated when the batch was created.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import { AgentVersionRef } from "../models/AgentOverride.ts"
import { BatchCallId, CallId, OrgId } from "../models/Ids.ts"

/**
 * How a placed call ended: the callee picked up (`answered`, a conversation took place), the line was busy,
 * nobody answered before the carrier gave up, or the call failed on the way (carrier or network error).
 *
 * @category models
 */
export const DialOutcome = Schema.Literals(["answered", "busy", "no_answer", "failed"])
/** @category models */
export type DialOutcome = typeof DialOutcome.Type

/**
 * A value of post-call analysis data: what the agent's `post_call_analysis_data` entries extract from the
 * conversation (string, enum, boolean and number entries; spec: agent `post_call_analysis_data`).
 *
 * @category models
 */
export const AnalysisValue = Schema.Union([Schema.String, Schema.Finite, Schema.Boolean])
/** @category models */
export type AnalysisValue = typeof AnalysisValue.Type

/**
 * One call to place. `idempotency_key` is the batch task's id; `call_id` is the id svc gave the call before
 * dialling (derived from the task, so a re-claim after a crash dials with the same id): the adapter uses it as the
 * carrier-side call reference (a SIP adapter connects the answered call to `sip:{call_id}@{sip_server}`) and
 * reports it back in `CallEnded`/`CallOngoing`. The per-task overrides of the batch
 * (spec, BatchCallTask) travel unchanged: `override_agent_id`, `override_agent_version` (a number or a name
 * such as `latest_published`), `agent_override`, `dynamic_variables` (the task's `svc_llm_dynamic_variables`),
 * `metadata` and `custom_sip_headers`. The ids are branded (`CallId`, `OrgId`, `BatchCallId`) as the claim reads them
 * from the task's row; nothing on the dispatch path decodes a request.
 *
 * @category models
 */
export const DialRequest = Schema.Struct({
  idempotency_key: Schema.String,
  call_id: CallId,
  org_id: OrgId,
  batch_call_id: BatchCallId,
  from_number: Schema.String,
  to_number: Schema.String,
  override_agent_id: Schema.optionalKey(Schema.String),
  override_agent_version: Schema.optionalKey(AgentVersionRef),
  agent_override: Schema.optionalKey(Schema.Record(Schema.String, Schema.Json)),
  dynamic_variables: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  metadata: Schema.optionalKey(Schema.Record(Schema.String, Schema.Json)),
  custom_sip_headers: Schema.optionalKey(Schema.Record(Schema.String, Schema.String))
}).annotate({ identifier: "DialRequest" })
/** @category models */
export type DialRequest = typeof DialRequest.Type

/**
 * A call that has ended. `start_timestamp` and `end_timestamp` are epoch ms as the carrier reports them;
 * `agent_id`/`agent_version` name the agent that handled the call when the carrier knows it; `analysis` holds
 * the post-call analysis data (empty when no conversation took place).
 *
 * @category models
 */
export const CallEnded = Schema.TaggedStruct("CallEnded", {
  idempotency_key: Schema.String,
  call_id: Schema.String,
  outcome: DialOutcome,
  start_timestamp: Schema.Finite,
  end_timestamp: Schema.Finite,
  duration_ms: Schema.Finite,
  disconnection_reason: Schema.String,
  agent_id: Schema.optionalKey(Schema.String),
  agent_version: Schema.optionalKey(Schema.Finite),
  analysis: Schema.Record(Schema.String, AnalysisValue)
}).annotate({ identifier: "CallEnded" })
/** @category models */
export type CallEnded = typeof CallEnded.Type

/**
 * A call that was placed and has not ended yet.
 *
 * @category models
 */
export const CallOngoing = Schema.TaggedStruct("CallOngoing", {
  idempotency_key: Schema.String,
  call_id: Schema.String,
  start_timestamp: Schema.Finite
}).annotate({ identifier: "CallOngoing" })
/** @category models */
export type CallOngoing = typeof CallOngoing.Type

/**
 * What `lookup` knows about a key: the call, ongoing or ended.
 *
 * @category models
 */
export const CallLookup = Schema.Union([CallEnded, CallOngoing])
/** @category models */
export type CallLookup = typeof CallLookup.Type

/**
 * The carrier refused the request before any call existed (an invalid or blocked destination, a request it
 * cannot carry). Nothing was placed, and dialling again would be refused again: the task fails with `reason`.
 *
 * @category errors
 */
export class DialRejected extends Schema.TaggedError<DialRejected>()("DialRejected", {
  idempotency_key: Schema.String,
  reason: Schema.String,
  message: Schema.String
}) {}

/**
 * The adapter cannot say what happened (the carrier did not answer, the connection broke mid-request). A call
 * may or may not exist: the caller must not dial again before `lookup` says no call was placed.
 *
 * @category errors
 */
export class DialerUnavailable extends Schema.TaggedError<DialerUnavailable>()("DialerUnavailable", {
  message: Schema.String
}) {}

/** @category errors */
export type DialerError = DialRejected | DialerUnavailable

/**
 * The telephony port (see the module notes and `docs/dialer.md` for the contract).
 *
 * @category services
 */
export class Dialer extends Context.Service<Dialer, {
  /** Places the call for `request.idempotency_key` (or joins the one that exists) and waits for its end. */
  readonly dial: (request: DialRequest) => Effect.Effect<CallEnded, DialerError>
  /** The call placed with this key, ongoing or ended; `None` when no call was ever placed with it. */
  readonly lookup: (idempotencyKey: string) => Effect.Effect<Option.Option<CallLookup>, DialerUnavailable>
}>()("@svc/domain/ports/Dialer") {}
