/**
 * The org's contact-analysis backfill job (spec: POST /backfill-contact-analysis-data). One job per
 * org: starting while one is queued or running returns that job's status (design decision: 200,
 * never 409, which the vendor's client would retry). The scheduler runs queued jobs.
 */
import {
  type BackfillContactAnalysisDataRequest,
  BackfillJobStatus,
  type BackfillTrigger
} from "@svc/domain/models/BackfillJob.ts"
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

interface Row {
  readonly status: "queued" | "running" | "idle"
  readonly start_timestamp: string | number | bigint
  readonly succeeded: number
  readonly failed: number
  readonly triggered_by: "manual" | "cron"
}

const toStatus = (row: Row) =>
  new BackfillJobStatus({
    status: row.status,
    start_timestamp: Number(row.start_timestamp),
    succeeded: Number(row.succeeded),
    failed: Number(row.failed),
    triggered_by: row.triggered_by
  })

/**
 * What the status endpoint answers for an org that never ran a backfill: idle, nothing processed.
 * (The status endpoint takes no id, so "no job" is a status, not a 404.)
 */
export const neverRun = new BackfillJobStatus({
  status: "idle",
  start_timestamp: 0,
  succeeded: 0,
  failed: 0,
  triggered_by: "manual"
})

export class BackfillRepo extends Context.Service<BackfillRepo, {
  readonly start: (
    orgId: OrgId,
    request: BackfillContactAnalysisDataRequest,
    triggeredBy: BackfillTrigger
  ) => Effect.Effect<BackfillJobStatus>
  readonly status: (orgId: OrgId) => Effect.Effect<BackfillJobStatus>
}>()("@svc/store/BackfillRepo") {
  static readonly layer = Layer.effect(
    BackfillRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return BackfillRepo.of({
        start: Effect.fn("BackfillRepo.start")(function*(orgId, request, triggeredBy) {
          const now = yield* Clock.currentTimeMillis
          const attributes = JSON.stringify(request.backfill_attributes)
          const filter = request.backfill_call_filter === undefined
            ? null
            : JSON.stringify(request.backfill_call_filter)
          // One statement decides atomically: a new or idle job becomes queued; an active one is
          // left alone and returned (two concurrent starts cannot both queue).
          const rows = yield* sql<Row>`
            INSERT INTO backfill_jobs (org_id, status, triggered_by, start_timestamp, succeeded, failed,
                                       backfill_attributes, backfill_call_filter, user_modified_timestamp)
            VALUES (${orgId}, 'queued', ${triggeredBy}, ${now}, 0, 0, ${attributes}::jsonb, ${filter}::jsonb, ${now})
            ON CONFLICT (org_id) DO UPDATE SET
              status = 'queued', triggered_by = EXCLUDED.triggered_by, start_timestamp = EXCLUDED.start_timestamp,
              succeeded = 0, failed = 0, backfill_attributes = EXCLUDED.backfill_attributes,
              backfill_call_filter = EXCLUDED.backfill_call_filter,
              user_modified_timestamp = EXCLUDED.user_modified_timestamp
            WHERE backfill_jobs.status = 'idle'
            RETURNING status, start_timestamp, succeeded, failed, triggered_by`
          if (rows[0] !== undefined) return toStatus(rows[0])
          const active = yield* sql<Row>`
            SELECT status, start_timestamp, succeeded, failed, triggered_by FROM backfill_jobs WHERE org_id = ${orgId}`
          return active[0] === undefined ? neverRun : toStatus(active[0])
        }, Effect.orDie),
        status: (orgId) =>
          sql<Row>`SELECT status, start_timestamp, succeeded, failed, triggered_by FROM backfill_jobs
                   WHERE org_id = ${orgId}`.pipe(
            Effect.map((rows) => rows[0] === undefined ? neverRun : toStatus(rows[0])),
            Effect.orDie,
            Effect.withSpan("BackfillRepo.status")
          )
      })
    })
  )
}
