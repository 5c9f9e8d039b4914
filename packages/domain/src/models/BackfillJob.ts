/**
 * The contact-analysis backfill job: its status (spec, BackfillJobStatus) and the request that starts it
 * (spec, "POST /backfill-contact-analysis-data"). A job runs `queued` -> `running` -> `idle`; `triggered_by`
 * tells an explicit API call (`manual`) from a scheduled sync (`cron`).
 */
import { Schema } from "effect"
import { NumberFilter, RangeFilter } from "./FilterCondition.ts"
import { AgentId } from "./Ids.ts"
import { EpochMillis, NonEmptyString, NonNegativeInt } from "./Primitives.ts"

/**
 * The state of a backfill job.
 *
 * @category models
 */
export const BackfillJobState = Schema.Literals(["queued", "running", "idle"])
/** @category models */
export type BackfillJobState = typeof BackfillJobState.Type

/**
 * What started a backfill job.
 *
 * @category models
 */
export const BackfillTrigger = Schema.Literals(["manual", "cron"])
/** @category models */
export type BackfillTrigger = typeof BackfillTrigger.Type

/**
 * The status of an org's backfill job, as starting it and `GET /get-backfill-contact-job-status` return it.
 *
 * @category models
 */
export class BackfillJobStatus extends Schema.Class<BackfillJobStatus>("BackfillJobStatus")({
  status: BackfillJobState,
  start_timestamp: EpochMillis.annotate({ description: "When the job started (was queued), ms since the epoch." }),
  succeeded: NonNegativeInt.annotate({ description: "Items processed successfully so far." }),
  failed: NonNegativeInt.annotate({ description: "Items that errored so far." }),
  triggered_by: BackfillTrigger
}, { description: "Status of the org's contact-analysis backfill job." }) {}

/**
 * One agent whose calls a backfill reads; no `version` (or an empty list) means every version.
 *
 * @category models
 */
export const BackfillAgentFilter = Schema.Struct({
  agent_id: AgentId,
  version: Schema.optionalKey(
    Schema.Array(NonNegativeInt).annotate({
      description: "Agent versions to include; omitted or empty means all versions."
    })
  )
}).annotate({ identifier: "BackfillAgentFilter" })
/** @category models */
export type BackfillAgentFilter = typeof BackfillAgentFilter.Type

/**
 * Limits the calls a backfill reads, by agent (agents are OR-ed) and call start time.
 *
 * @category models
 */
export const BackfillCallFilter = Schema.Struct({
  agent: Schema.optionalKey(
    Schema.Array(BackfillAgentFilter).annotate({
      description: "Only calls handled by one of these agents (and versions)."
    })
  ),
  start_timestamp: Schema.optionalKey(
    Schema.Union([NumberFilter, RangeFilter]).annotate({
      description: "Only calls whose start time (epoch ms) matches this condition."
    })
  )
}).annotate({ identifier: "BackfillCallFilter" })
/** @category models */
export type BackfillCallFilter = typeof BackfillCallFilter.Type

/**
 * The body of `POST /backfill-contact-analysis-data`.
 *
 * @category models
 */
export class BackfillContactAnalysisDataRequest
  extends Schema.Class<BackfillContactAnalysisDataRequest>("BackfillContactAnalysisDataRequest")({
    backfill_attributes: Schema.Array(NonEmptyString).check(
      Schema.isMinLength(1, { expected: "a list of at least one attribute name" })
    ).annotate({ description: "Contact attributes to fill from existing calls." }),
    backfill_call_filter: Schema.optionalKey(BackfillCallFilter)
  }, { description: "Starts a job that fills contact analysis attributes from existing calls." })
{}
