/**
 * A batch's progress with its legal hours explained (decisions 0532, 0623, 0628): what `get-batch-call`,
 * `cancel-batch-call`, `pause-`/`resume-batch-call`, `retry-batch-call` and each item of `list-batch-calls` answer.
 *
 * The store reads a batch's progress and the rows its legal hours are explained from (`StoredProgress`); the
 * explanation is a compliance decision (`LegalHoursReport.legalHoursOf`), so the store's callers run it here, not
 * the repository (dependency rule 3, docs/architecture.md).
 */
import { BatchCallProgress, type BatchLegalHours } from "../models/BatchCallProgress.ts"
import { legalHoursOf, type LegalHoursRows, type LegalHoursSummary } from "./LegalHoursReport.ts"

/**
 * A batch's progress as stored: every field of `BatchCallProgress` but its legal hours, and the rows they are
 * explained from.
 *
 * @category models
 */
export type StoredProgress = Omit<BatchCallProgress, "legal_hours"> & {
  readonly legal_hours_rows: LegalHoursRows
}

/**
 * A legal-hours summary in the progress's shape (snake_case, epoch milliseconds).
 *
 * @category encoding
 */
export const batchLegalHours = (summary: LegalHoursSummary): typeof BatchLegalHours.Type => ({
  policy_version: summary.policyVersion,
  unconstrained_tasks: summary.unconstrained,
  dialable_now_tasks: summary.dialableNow,
  held_back: summary.heldBack,
  never_within_horizon_tasks: summary.neverWithinHorizon,
  zone_sets: summary.zoneSets.map((z) => ({
    zones: z.zones,
    rules: z.rules,
    pending_tasks: z.tasks,
    blocked_by: z.blockedBy,
    state_reason: z.stateReason,
    next_opening_timestamp: z.nextOpening
  }))
})

/**
 * The batch's progress, its legal hours explained at the instant its rows were read for.
 *
 * @category constructors
 */
export const progressOf = (stored: StoredProgress): BatchCallProgress => {
  const { legal_hours_rows, ...progress } = stored
  return new BatchCallProgress({ ...progress, legal_hours: batchLegalHours(legalHoursOf(legal_hours_rows)) })
}
