/**
 * Batch test jobs as the spec reads them: one by id, or a page of one response engine's jobs
 * (svc-llm by llm_id, conversation-flow by conversation_flow_id), newest first, with keyset keys.
 * `version` defaults to the latest version that has jobs for that engine (the spec: "defaults to the latest").
 */
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { type ListBatchTestsQuery, ListBatchTestsResponse } from "@svc/domain/models/ListBatchTests.ts"
import { TestCaseBatchJob } from "@svc/domain/models/TestCaseBatchJob.ts"
import * as Pagination from "@svc/domain/Pagination.ts"
import { Context, Effect, Layer, Schema } from "effect"
import { listing, type PagedList, resumeAfter } from "./Pages.ts"

export { InvalidPaginationKey } from "./Pages.ts"

/** @category errors */
export class BatchTestNotFound extends Schema.TaggedError<BatchTestNotFound>()("BatchTestNotFound", {
  id: Schema.String,
  message: Schema.String
}) {}

interface Row {
  readonly test_case_batch_job_id: string
  readonly status: "in_progress" | "complete"
  readonly engine_type: "svc-llm" | "custom-llm" | "conversation-flow"
  readonly engine_id: string
  readonly engine_version: number | null
  readonly pass_count: number
  readonly fail_count: number
  readonly error_count: number
  readonly total_count: number
  readonly creation_timestamp: string | number | bigint
  readonly user_modified_timestamp: string | number | bigint
}

const decodeJob = Schema.decodeUnknownSync(TestCaseBatchJob)

/** A stored row in the spec's shape. @category encoding */
export const toJob = (row: Row): TestCaseBatchJob =>
  decodeJob({
    test_case_batch_job_id: row.test_case_batch_job_id,
    status: row.status,
    response_engine: row.engine_type === "svc-llm"
      ? { type: "svc-llm", llm_id: row.engine_id, version: row.engine_version }
      : row.engine_type === "conversation-flow"
      ? { type: "conversation-flow", conversation_flow_id: row.engine_id, version: row.engine_version }
      : { type: "custom-llm", llm_websocket_url: row.engine_id },
    pass_count: Number(row.pass_count),
    fail_count: Number(row.fail_count),
    error_count: Number(row.error_count),
    total_count: Number(row.total_count),
    creation_timestamp: Number(row.creation_timestamp),
    user_modified_timestamp: Number(row.user_modified_timestamp)
  })

export class BatchTestsRepo extends Context.Service<BatchTestsRepo, {
  readonly get: (orgId: OrgId, id: string) => Effect.Effect<TestCaseBatchJob, BatchTestNotFound>
  readonly list: PagedList<ListBatchTestsQuery, ListBatchTestsResponse>
}>()("@svc/store/BatchTestsRepo") {
  static readonly layer = Layer.effect(
    BatchTestsRepo,
    Effect.gen(function*() {
      const { cursors, sql } = yield* listing
      return BatchTestsRepo.of({
        get: (orgId, id) =>
          sql<Row>`SELECT * FROM test_case_batch_jobs WHERE org_id = ${orgId} AND test_case_batch_job_id = ${id}`.pipe(
            Effect.orDie,
            Effect.flatMap((rows) =>
              rows[0] === undefined
                ? Effect.fail(new BatchTestNotFound({ id, message: `batch test ${id} not found` }))
                : Effect.succeed(toJob(rows[0]))
            ),
            Effect.withSpan("BatchTestsRepo.get")
          ),
        list: Effect.fn("BatchTestsRepo.list")(function*(orgId, query) {
          const engineId = query.type === "svc-llm" ? query.llm_id : query.conversation_flow_id
          const version = query.version ?? (yield* sql<{ v: number | null }>`
            SELECT max(engine_version) AS v FROM test_case_batch_jobs
            WHERE org_id = ${orgId} AND engine_type = ${query.type} AND engine_id = ${engineId}`.pipe(
            Effect.orDie,
            Effect.map((rows) => rows[0]?.v ?? null)
          ))
          const context = {
            orgId,
            queryFingerprint: Pagination.queryFingerprint({
              resource: "batch-tests",
              type: query.type,
              engineId,
              version
            })
          }
          const after = yield* resumeAfter(cursors, query.pagination_key, context)
          const seek = after === undefined
            ? sql`TRUE`
            : sql`(creation_timestamp, test_case_batch_job_id) < (${after.sortValue}, ${after.id})`
          const versionMatch = version === null ? sql`engine_version IS NULL` : sql`engine_version = ${version}`
          const rows = yield* sql<Row>`
            SELECT * FROM test_case_batch_jobs
            WHERE org_id = ${orgId} AND engine_type = ${query.type} AND engine_id = ${engineId}
              AND ${versionMatch} AND ${seek}
            ORDER BY creation_timestamp DESC, test_case_batch_job_id DESC
            LIMIT ${query.limit + 1}`.pipe(Effect.orDie)
          const items = rows.slice(0, query.limit).map(toJob)
          const last = items[items.length - 1]
          const has_more = rows.length > query.limit
          return new ListBatchTestsResponse(
            has_more && last !== undefined
              ? {
                has_more,
                items,
                pagination_key: cursors.encode(
                  { sortValue: last.creation_timestamp, id: last.test_case_batch_job_id },
                  context
                )
              }
              : { has_more, items }
          )
        })
      })
    })
  )
}
