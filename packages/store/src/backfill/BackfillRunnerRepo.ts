/**
 * Running the org's contact-analysis backfill job (spec: POST /backfill-contact-analysis-data; the server queues
 * it with BackfillRepo, the scheduler runs it): `queued` -> `running` -> `idle`.
 *
 * A run fills the named attributes (`backfill_attributes`) of contacts from the post-call analysis data of the
 * calls that match `backfill_call_filter` (agents OR-ed, each with its versions or all of them; the start-time
 * condition with its op). One item is one matching call: it succeeds when its number is a contact of the org (the
 * contact then gets, per attribute, the value of the most recently recorded matching call that has one) and fails
 * when no contact has that number (deleted since, or a number that cannot be a contact).
 *
 * Invariants:
 * - The calls a run covers are fixed when it starts: `call_seq` in (`calls_seq_low`, `calls_seq_high`]. A manual
 *   run covers every call so far (up to the first one not yet applied to its contact or still in flight); a cron
 *   sync only the calls since the previous run's end. `call_seq` is the order calls were registered (the claim) and
 *   never changes (migration 0015), so a range never reaches past a call in flight: every call in it is final.
 * - Calls are processed in `call_seq` order, in chunks; each chunk's contact updates, counters and resume point
 *   (`cursor_call_seq`) commit in one transaction that also checks the worker still holds the job. A worker that
 *   dies mid-run loses at most an uncommitted chunk; the next holder resumes after the last committed one, so no
 *   call is counted twice and the counters, visible to the status endpoint after every chunk, end equal to the
 *   number of matching calls.
 * - A running job is held by a lease; an expired lease lets any worker take the job over.
 */
import type { BackfillCallFilter } from "@svc/domain/models/BackfillJob.ts"
import { BackfillCallFilter as BackfillCallFilterSchema } from "@svc/domain/models/BackfillJob.ts"
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A job as one worker runs it.
 *
 * @category models
 */
export interface RunningBackfill {
  readonly orgId: OrgId
  readonly attributes: ReadonlyArray<string>
  readonly filter: BackfillCallFilter | undefined
  readonly triggeredBy: "manual" | "cron"
  readonly startTimestamp: number
}

/** @category models */
export interface ChunkResult {
  /** The worker no longer holds the job (its lease expired and another took it): stop. */
  readonly lost: boolean
  readonly succeeded: number
  readonly failed: number
  /** The run is over and the job `idle`. */
  readonly done: boolean
}

interface JobRow {
  /** Branded as it is read: a row is where the scheduler's org ids enter. */
  readonly org_id: OrgId
  readonly backfill_attributes: unknown
  readonly backfill_call_filter: unknown
  readonly triggered_by: "manual" | "cron"
  readonly start_timestamp: number
}

const decodeFilter = Schema.decodeUnknownSync(BackfillCallFilterSchema)
const decodeAttributes = Schema.decodeUnknownSync(Schema.Array(Schema.String))

/**
 * Backfill runs in PostgreSQL.
 *
 * @category services
 */
export class BackfillRunnerRepo extends Context.Service<BackfillRunnerRepo, {
  /** Takes a queued job (starting its run) or a running one whose lease expired (resuming it). */
  readonly claimNext: (owner: string, now: number, leaseMs: number) => Effect.Effect<Option.Option<RunningBackfill>>
  /** Processes the next chunk of the job's calls (see the module notes); one transaction. */
  readonly processChunk: (
    owner: string,
    job: RunningBackfill,
    options: { readonly now: number; readonly leaseMs: number; readonly chunk: number }
  ) => Effect.Effect<ChunkResult>
  /** Lets go of the job without finishing it (shutdown): its lease ends now, for another worker to resume. */
  readonly release: (owner: string, orgId: OrgId, now: number) => Effect.Effect<void>
}>()("@svc/store/BackfillRunnerRepo") {
  /** @category layers */
  static readonly layer: Layer.Layer<BackfillRunnerRepo, never, SqlClient.SqlClient> = Layer.effect(
    BackfillRunnerRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const claimNext = (owner: string, now: number, leaseMs: number) =>
        sql<JobRow>`
          UPDATE backfill_jobs j SET
            status = 'running', lease_owner = ${owner}, lease_expires_at = ${now + leaseMs},
            -- a new run fixes its range of calls; a resumed one keeps range and cursor. Right-hand sides read the
            -- row as it was, so a cron run starts after the previous run's end.
            calls_seq_low = CASE WHEN j.status = 'queued'
              THEN CASE WHEN j.triggered_by = 'cron' THEN coalesce(j.calls_seq_high, 0) ELSE 0 END
              ELSE j.calls_seq_low END,
            cursor_call_seq = CASE WHEN j.status = 'queued'
              THEN CASE WHEN j.triggered_by = 'cron' THEN coalesce(j.calls_seq_high, 0) ELSE 0 END
              ELSE j.cursor_call_seq END,
            -- ... and ends before the first call not yet applied to its contact (CallsRepo's feed), so each call's
            -- contact exists by the time the run reaches it, and before the first call still in flight after the
            -- run's start: a call keeps the call_seq of its registration when it finishes (migration 0015), so
            -- every call of a range must be final when the range is fixed, or no later run would count it. Later
            -- calls belong to the next run. The in-flight search walks the org's calls from the run's start in
            -- primary key order, as the run itself will, and stops at the first
            calls_seq_high = CASE WHEN j.status = 'queued'
              THEN LEAST(
                (SELECT coalesce(max(c.call_seq), 0) FROM calls c WHERE c.org_id = j.org_id),
                (SELECT min(f.call_seq) - 1 FROM contact_feed f WHERE f.org_id = j.org_id),
                (SELECT min(c.call_seq) - 1 FROM calls c
                  WHERE c.org_id = j.org_id
                    AND c.call_seq > CASE WHEN j.triggered_by = 'cron' THEN coalesce(j.calls_seq_high, 0) ELSE 0 END
                    AND c.call_status IN ('registered', 'ongoing')))
              ELSE j.calls_seq_high END
          WHERE j.org_id = (
            SELECT org_id FROM backfill_jobs
            WHERE status = 'queued' OR (status = 'running' AND (lease_expires_at IS NULL OR lease_expires_at < ${now}))
            ORDER BY user_modified_timestamp
            LIMIT 1
            FOR UPDATE SKIP LOCKED)
          RETURNING j.org_id, j.backfill_attributes, j.backfill_call_filter, j.triggered_by,
            j.start_timestamp::float8 AS start_timestamp`.pipe(
          Effect.map((rows) => {
            const row = rows[0]
            if (row === undefined) return Option.none<RunningBackfill>()
            return Option.some<RunningBackfill>({
              orgId: row.org_id,
              attributes: decodeAttributes(row.backfill_attributes),
              filter: row.backfill_call_filter === null ? undefined : decodeFilter(row.backfill_call_filter),
              triggeredBy: row.triggered_by,
              startTimestamp: row.start_timestamp
            })
          }),
          Effect.orDie,
          Effect.withSpan("BackfillRunnerRepo.claimNext")
        )

      /** The filter as a SQL condition on `calls c`. */
      const matches = (filter: BackfillCallFilter | undefined) => {
        const conditions = []
        const agents = filter?.agent ?? []
        if (agents.length > 0) {
          // vendor SDK: agents are OR-ed; a missing or empty version list means every version
          conditions.push(sql.or(agents.map((agent) =>
            agent.version === undefined || agent.version.length === 0
              ? sql`c.agent_id = ${agent.agent_id}`
              : sql`(c.agent_id = ${agent.agent_id} AND c.agent_version = ANY(${
                agent.version.map(String)
              }::text[]::int8[]))`
          )))
        }
        const start = filter?.start_timestamp
        if (start !== undefined) {
          if (start.type === "range") {
            // range `bt` is inclusive at both ends (decision 0104)
            conditions.push(sql`c.start_timestamp BETWEEN ${start.value[0]} AND ${start.value[1]}`)
          } else {
            const op = { eq: "=", ne: "<>", gt: ">", ge: ">=", lt: "<", le: "<=" }[start.op]
            conditions.push(sql`c.start_timestamp ${sql.literal(op)} ${start.value}`)
          }
        }
        return sql.and(conditions)
      }

      const processChunk = Effect.fn("BackfillRunnerRepo.processChunk")(
        function*(
          owner: string,
          job: RunningBackfill,
          options: { readonly now: number; readonly leaseMs: number; readonly chunk: number }
        ) {
          return yield* sql.withTransaction(Effect.gen(function*() {
            const held = yield* sql<{ cursor: number; high: number }>`
              SELECT cursor_call_seq::float8 AS cursor, coalesce(calls_seq_high, 0)::float8 AS high
              FROM backfill_jobs
              WHERE org_id = ${job.orgId} AND status = 'running' AND lease_owner = ${owner}
              FOR UPDATE`
            if (held[0] === undefined) return { lost: true, succeeded: 0, failed: 0, done: false }
            const { cursor, high } = held[0]
            const rows = yield* sql<{ n: number; ok: number; last: number | null }>`
              WITH chunk AS (
                SELECT c.call_seq, c.to_number, c.analysis FROM calls c
                WHERE c.org_id = ${job.orgId} AND c.call_seq > ${cursor} AND c.call_seq <= ${high}
                  -- the range ends before the first call in flight (claimNext), and an org's claims draw call_seq
                  -- under its lock, so they commit in call_seq order: no call registered later is in the range.
                  -- Kept as a guard: a call in flight has no analysis yet
                  AND c.call_status NOT IN ('registered', 'ongoing')
                  AND ${matches(job.filter)}
                ORDER BY c.call_seq
                LIMIT ${options.chunk}
              ), latest AS (
                -- per number and attribute, the most recently recorded call that has a value for it
                SELECT DISTINCT ON (c.to_number, a.name) c.to_number, a.name, c.analysis -> a.name AS value
                FROM chunk c CROSS JOIN unnest(${job.attributes}::text[]) AS a(name)
                WHERE jsonb_typeof(c.analysis -> a.name) IN ('string', 'number', 'boolean')
                ORDER BY c.to_number, a.name, c.call_seq DESC
              ), fields AS (
                SELECT to_number, jsonb_object_agg(name, value) AS fields FROM latest GROUP BY to_number
              ), filled AS (
                UPDATE contacts k SET custom_fields = k.custom_fields || f.fields
                FROM fields f
                WHERE k.org_id = ${job.orgId} AND k.phone_number = f.to_number
                RETURNING 1
              )
              SELECT count(*)::int4 AS n,
                (count(*) FILTER (WHERE EXISTS (
                  SELECT 1 FROM contacts k WHERE k.org_id = ${job.orgId} AND k.phone_number = c.to_number
                )))::int4 AS ok,
                max(c.call_seq)::float8 AS last
              FROM chunk c`
            const { last, n, ok } = rows[0] ?? { n: 0, ok: 0, last: null }
            const done = n < options.chunk
            yield* sql`
              UPDATE backfill_jobs SET
                succeeded = succeeded + ${ok}, failed = failed + ${n - ok},
                cursor_call_seq = ${last ?? cursor},
                status = ${done ? "idle" : "running"},
                lease_owner = ${done ? null : owner},
                lease_expires_at = ${done ? null : options.now + options.leaseMs}
              WHERE org_id = ${job.orgId}`
            return { lost: false, succeeded: ok, failed: n - ok, done }
          }))
        },
        Effect.orDie
      )

      const release = (owner: string, orgId: OrgId, now: number) =>
        sql`
          UPDATE backfill_jobs SET lease_expires_at = ${now}
          WHERE org_id = ${orgId} AND status = 'running' AND lease_owner = ${owner}`.pipe(
          Effect.asVoid,
          Effect.orDie,
          Effect.withSpan("BackfillRunnerRepo.release")
        )

      return BackfillRunnerRepo.of({ claimNext, processChunk, release })
    })
  )
}
