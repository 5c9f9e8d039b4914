/**
 * The id flags the admin commands share. A command's arguments are where an id enters the admin
 * tool, so the brand is applied here, once, and every repository call after it is typed by it.
 */
import type { BatchCallId, CallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Flag } from "effect/cli"

/**
 * `--org`: a type-level brand only, no check, so an unknown or empty id still reaches the store and
 * fails there as it always has (OrgNotFound), not here.
 */
export const org = Flag.String("org").pipe(
  Flag.withDescription("Organisation id (org_…)"),
  Flag.map((id) => id as OrgId)
)

/** `--batch`: a type-level brand only, as `--org`; an unknown id fails in the store (BatchNotFound). */
export const batch = Flag.String("batch").pipe(
  Flag.withDescription("Batch call id (batch_call_…)"),
  Flag.map((id) => id as BatchCallId)
)

/** `--call` (webhook-deliveries: only this call's events): a type-level brand only, as `--org`. */
export const call = Flag.String("call").pipe(
  Flag.withDescription("Only this call's events"),
  Flag.map((id) => id as CallId)
)
