/**
 * Batch test jobs that run (decision 0702): create-batch-test writes the job and one `pending` run per
 * definition (with the definition's snapshot) in one transaction; scheduler workers lease runs, run them and finish
 * them (decision 0702).
 *
 * Exactly-once counting: a run is finished only by the lease that is current (owner and attempt), so a worker that
 * lost its lease (killed, or paused past the lease) cannot finish it a second time; and the job's counts are
 * recounted from its runs, under the job row's lock, by the transaction that finishes a run, never incremented.
 * `pass_count + fail_count + error_count` is therefore the number of finished runs, and the job is `complete`
 * exactly when that equals `total_count`.
 */
import type { TestCaseDefinition } from "@svc/domain/batchTests/TestCaseDefinition.ts"
import {
  type ListTestRunsQuery,
  type ListTestRunsResponse,
  TestCaseJob,
  type TestRunStatus
} from "@svc/domain/batchTests/TestRun.ts"
import type { OrgId } from "@svc/domain/models/Ids.ts"
import type { TestCaseBatchJob } from "@svc/domain/models/TestCaseBatchJob.ts"
import * as Pagination from "@svc/domain/Pagination.ts"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import * as crypto from "node:crypto"
import { BatchTestNotFound, toJob } from "./BatchTestsRepo.ts"
import { type InvalidPaginationKey, listing, resumeAfter } from "./Pages.ts"
import { TestCaseDefinitionNotFound, toDefinition } from "./TestCaseDefinitionsRepo.ts"

/** @category errors */
export class TestRunNotFound extends Schema.TaggedError<TestRunNotFound>()("TestRunNotFound", {
  id: Schema.String,
  message: Schema.String
}) {}

/** A run a worker holds: what it must run and the lease that lets it finish the run. @category models */
export interface ClaimedRun {
  readonly orgId: OrgId
  readonly runId: string
  readonly batchId: string
  readonly attempt: number
  readonly url: string
  readonly definition: TestCaseDefinition
  /** the run's earlier leases all expired: it was taken `attempt - 1` times by workers that were lost */
  readonly lostBefore: boolean
}

/** A finished run's result. @category models */
export interface RunResult {
  readonly status: Extract<TestRunStatus, "pass" | "fail" | "error">
  readonly explanation: string
  readonly transcript: unknown
}

interface RunRow {
  /** Branded as it is read: a row is where the scheduler's org ids enter. */
  readonly org_id: OrgId
  readonly test_case_job_id: string
  readonly test_case_batch_job_id: string
  readonly test_case_definition_id: string
  readonly ordinal: number
  readonly definition_snapshot: unknown
  readonly llm_websocket_url: string
  readonly status: TestRunStatus
  readonly attempts: number
  readonly result_explanation: string | null
  readonly transcript_snapshot: unknown
  readonly creation_timestamp: string | number
  readonly user_modified_timestamp: string | number
}

const json = (value: unknown): unknown => typeof value === "string" ? JSON.parse(value) : value
const decodeRun = Schema.decodeUnknownSync(TestCaseJob)

/** A stored run in the API's shape. @category encoding */
export const toRun = (row: RunRow): TestCaseJob =>
  decodeRun({
    test_case_job_id: row.test_case_job_id,
    test_case_batch_job_id: row.test_case_batch_job_id,
    test_case_definition_id: row.test_case_definition_id,
    test_case_definition_snapshot: json(row.definition_snapshot),
    status: row.status,
    result_explanation: row.result_explanation,
    transcript_snapshot: row.transcript_snapshot === null ? null : json(row.transcript_snapshot),
    creation_timestamp: Number(row.creation_timestamp),
    user_modified_timestamp: Number(row.user_modified_timestamp)
  })

export class TestRunsRepo extends Context.Service<TestRunsRepo, {
  /** The job and its `pending` runs, against a custom LLM's URL; every id must name a definition of the org. */
  readonly createBatch: (
    orgId: OrgId,
    url: string,
    definitionIds: ReadonlyArray<string>
  ) => Effect.Effect<TestCaseBatchJob, TestCaseDefinitionNotFound>
  /** Leases the next due run (pending, or in progress under an expired lease) for `leaseMs`. */
  readonly claim: (workerId: string, leaseMs: number) => Effect.Effect<ClaimedRun | undefined>
  /** Extends a lease still held; false when it was lost. */
  readonly renew: (run: ClaimedRun, workerId: string, leaseMs: number) => Effect.Effect<boolean>
  /** Finishes a run under its current lease and recounts its job; false when the lease was lost (nothing written). */
  readonly finish: (run: ClaimedRun, workerId: string, result: RunResult) => Effect.Effect<boolean>
  readonly get: (orgId: OrgId, runId: string) => Effect.Effect<TestCaseJob, TestRunNotFound>
  readonly list: (
    orgId: OrgId,
    batchId: string,
    query: ListTestRunsQuery
  ) => Effect.Effect<ListTestRunsResponse, BatchTestNotFound | InvalidPaginationKey>
}>()("@svc/store/TestRunsRepo") {
  static readonly layer = Layer.effect(
    TestRunsRepo,
    Effect.gen(function*() {
      const { cursors, sql } = yield* listing
      return TestRunsRepo.of({
        createBatch: Effect.fn("TestRunsRepo.createBatch")(function*(orgId, url, definitionIds) {
          const now = yield* Clock.currentTimeMillis
          const batchId = `test_batch_${crypto.randomBytes(12).toString("hex")}`
          return yield* sql.withTransaction(Effect.gen(function*() {
            // FOR SHARE: a definition deleted while the batch is created is either in it or refused, never half
            const rows = yield* sql<
              {
                test_case_definition_id: string
                definition: unknown
                creation_timestamp: string
                user_modified_timestamp: string
              }
            >`
              SELECT * FROM test_case_definitions
              WHERE org_id = ${orgId} AND test_case_definition_id IN ${sql.in(definitionIds)}
              FOR SHARE`
            const byId = new Map(rows.map((row) => [row.test_case_definition_id, toDefinition(row)]))
            const missing = definitionIds.find((id) => !byId.has(id))
            if (missing !== undefined) {
              return yield* new TestCaseDefinitionNotFound({
                id: missing,
                message: `test_case_definition_ids[${
                  definitionIds.indexOf(missing)
                }]: test case definition ${missing} not found`
              })
            }
            const jobs = yield* sql<Parameters<typeof toJob>[0]>`
              INSERT INTO test_case_batch_jobs
                (org_id, test_case_batch_job_id, status, engine_type, engine_id, engine_version, total_count,
                 creation_timestamp, user_modified_timestamp)
              VALUES (${orgId}, ${batchId}, 'in_progress', 'custom-llm', ${url}, NULL, ${definitionIds.length},
                      ${now}, ${now})
              RETURNING *`
            yield* sql`
              INSERT INTO test_case_runs
                (org_id, test_case_job_id, test_case_batch_job_id, test_case_definition_id, ordinal,
                 definition_snapshot, llm_websocket_url, creation_timestamp, user_modified_timestamp)
              SELECT ${orgId}, 'test_run_' || replace(gen_random_uuid()::text, '-', ''), ${batchId}, d.id, d.ordinal - 1,
                     d.snapshot, ${url}, ${now}, ${now}
              FROM unnest(${definitionIds}::text[], ${
              definitionIds.map((id) => JSON.stringify(byId.get(id)))
            }::jsonb[]) WITH ORDINALITY AS d(id, snapshot, ordinal)`
            return toJob(jobs[0]!)
          })).pipe(Effect.catchTag("SqlError", Effect.die))
        }),
        claim: Effect.fn("TestRunsRepo.claim")(function*(workerId, leaseMs) {
          const now = yield* Clock.currentTimeMillis
          const rows = yield* sql<RunRow>`
            WITH next AS (
              SELECT org_id, test_case_job_id FROM test_case_runs
              WHERE status IN ('pending', 'in_progress') AND coalesce(lease_expires_at, 0) <= ${now}
              ORDER BY coalesce(lease_expires_at, 0), creation_timestamp
              LIMIT 1
              FOR UPDATE SKIP LOCKED
            )
            UPDATE test_case_runs r
            SET status = 'in_progress', lease_owner = ${workerId}, lease_expires_at = ${now + leaseMs},
                attempts = r.attempts + 1, user_modified_timestamp = greatest(r.user_modified_timestamp, ${now})
            FROM next
            WHERE r.org_id = next.org_id AND r.test_case_job_id = next.test_case_job_id
            RETURNING r.*`.pipe(Effect.orDie)
          const row = rows[0]
          if (row === undefined) return undefined
          const snapshot = json(row.definition_snapshot)
          return {
            orgId: row.org_id,
            runId: row.test_case_job_id,
            batchId: row.test_case_batch_job_id,
            attempt: row.attempts,
            url: row.llm_websocket_url,
            definition: toRun({ ...row, definition_snapshot: snapshot }).test_case_definition_snapshot,
            lostBefore: row.attempts > 1
          }
        }),
        renew: Effect.fn("TestRunsRepo.renew")(function*(run, workerId, leaseMs) {
          const now = yield* Clock.currentTimeMillis
          const rows = yield* sql`
            UPDATE test_case_runs SET lease_expires_at = ${now + leaseMs}
            WHERE org_id = ${run.orgId} AND test_case_job_id = ${run.runId} AND status = 'in_progress'
              AND lease_owner = ${workerId} AND attempts = ${run.attempt}
            RETURNING 1 AS one`.pipe(Effect.orDie)
          return rows.length === 1
        }),
        finish: Effect.fn("TestRunsRepo.finish")(function*(run, workerId, result) {
          const now = yield* Clock.currentTimeMillis
          return yield* sql.withTransaction(Effect.gen(function*() {
            // the job's row first: finishes of one job's runs recount one after another, each seeing the last
            yield* sql`
              SELECT 1 FROM test_case_batch_jobs
              WHERE org_id = ${run.orgId} AND test_case_batch_job_id = ${run.batchId} FOR UPDATE`
            const finished = yield* sql`
              UPDATE test_case_runs
              SET status = ${result.status}, result_explanation = ${result.explanation},
                  transcript_snapshot = ${JSON.stringify(result.transcript ?? null)}::jsonb,
                  lease_owner = NULL, lease_expires_at = NULL,
                  user_modified_timestamp = greatest(user_modified_timestamp, ${now})
              WHERE org_id = ${run.orgId} AND test_case_job_id = ${run.runId} AND status = 'in_progress'
                AND lease_owner = ${workerId} AND attempts = ${run.attempt}
              RETURNING 1 AS one`
            if (finished.length === 0) return false
            yield* sql`
              UPDATE test_case_batch_jobs j
              SET pass_count = c.pass, fail_count = c.fail, error_count = c.error,
                  status = CASE WHEN c.pass + c.fail + c.error = j.total_count THEN 'complete' ELSE 'in_progress' END,
                  user_modified_timestamp = greatest(j.user_modified_timestamp, ${now})
              FROM (
                SELECT count(*) FILTER (WHERE status = 'pass')::int AS pass,
                       count(*) FILTER (WHERE status = 'fail')::int AS fail,
                       count(*) FILTER (WHERE status = 'error')::int AS error
                FROM test_case_runs WHERE org_id = ${run.orgId} AND test_case_batch_job_id = ${run.batchId}
              ) c
              WHERE j.org_id = ${run.orgId} AND j.test_case_batch_job_id = ${run.batchId}`
            return true
          })).pipe(Effect.orDie)
        }),
        get: (orgId, runId) =>
          sql<RunRow>`SELECT * FROM test_case_runs WHERE org_id = ${orgId} AND test_case_job_id = ${runId}`.pipe(
            Effect.orDie,
            Effect.flatMap((rows) =>
              rows[0] === undefined
                ? Effect.fail(new TestRunNotFound({ id: runId, message: `test_case_job_id ${runId} not found` }))
                : Effect.succeed(toRun(rows[0]))
            ),
            Effect.withSpan("TestRunsRepo.get")
          ),
        list: Effect.fn("TestRunsRepo.list")(function*(orgId, batchId, query) {
          const jobs = yield* sql`
            SELECT 1 FROM test_case_batch_jobs WHERE org_id = ${orgId} AND test_case_batch_job_id = ${batchId}`.pipe(
            Effect.orDie
          )
          if (jobs.length === 0) {
            return yield* new BatchTestNotFound({ id: batchId, message: `test_case_batch_job_id ${batchId} not found` })
          }
          const limit = query.limit === undefined ? 50 : Number(query.limit)
          const context = {
            orgId,
            queryFingerprint: Pagination.queryFingerprint({ resource: "test-runs", batchId })
          }
          const resumed = yield* resumeAfter(cursors, query.pagination_key, context)
          const after = resumed === undefined ? -1 : Number(resumed.sortValue)
          // in create-batch-test's order: the runs of a job are its definitions, as listed
          const rows = yield* sql<RunRow>`
            SELECT * FROM test_case_runs
            WHERE org_id = ${orgId} AND test_case_batch_job_id = ${batchId} AND ordinal > ${after}
            ORDER BY ordinal LIMIT ${limit + 1}`.pipe(Effect.orDie)
          const page = rows.slice(0, limit)
          const last = page[page.length - 1]
          const items = page.map(toRun)
          return rows.length > limit && last !== undefined
            ? {
              has_more: true,
              items,
              pagination_key: cursors.encode({ sortValue: last.ordinal, id: last.test_case_job_id }, context)
            }
            : { has_more: false, items }
        })
      })
    })
  )
}
