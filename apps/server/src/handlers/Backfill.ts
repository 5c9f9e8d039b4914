/** POST /backfill-contact-analysis-data and GET /get-backfill-contact-job-status. */
import { Api } from "@svc/api/Api.ts"
import { CurrentOrg } from "@svc/api/Authorization.ts"
import { BackfillRepo } from "@svc/store/backfill/BackfillRepo.ts"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"

/** @category layers */
export const layer = HttpApiBuilder.group(
  Api,
  "backfill",
  Effect.fn(function*(handlers) {
    const repo = yield* BackfillRepo
    return handlers
      .handle(
        "backfillContactAnalysisData",
        ({ payload }) => Effect.flatMap(CurrentOrg, ({ orgId }) => repo.start(orgId, payload, "manual"))
      )
      .handle("getBackfillContactJobStatus", () => Effect.flatMap(CurrentOrg, ({ orgId }) => repo.status(orgId)))
  })
)
