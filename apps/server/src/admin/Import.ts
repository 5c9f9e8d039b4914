/**
 * `admin import --kind K --file F.jsonl`: one record per line in the API's own shape, validated
 * line by line (errors name the line and the field), then stored in one transaction: a file with
 * any bad line imports nothing.
 *
 * Contacts keep everything a line gives, history and ids included, or the line is an
 * error (`ContactImportLine`, decision 0530); they stream through `ContactImportFile` into the bulk loader
 * `ContactImport.load`, with progress on stderr (`Progress.reporter`, decision 0531).
 *
 * Calls (`--kind calls`) are finished calls in the get-call shape (`CallImportLine`, decision 0535); they stream
 * through `CallImportFile` into `CallImport.load`, which updates the contacts they belong to in the same
 * transaction.
 */
import { formatDecodeError } from "@svc/domain/models/DecodeMessage.ts"
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { TestCaseBatchJob } from "@svc/domain/models/TestCaseBatchJob.ts"
import * as CallImport from "@svc/store/calls/CallImport.ts"
import * as ContactImport from "@svc/store/contacts/ContactImport.ts"
import * as SuppressionImport from "@svc/store/suppressions/SuppressionImport.ts"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as CallImportFile from "./CallImportFile.ts"
import * as ContactImportFile from "./ContactImportFile.ts"
import { ImportFailed } from "./ImportFailed.ts"
import type { Progress } from "./Progress.ts"
import * as SuppressionImportFile from "./SuppressionImportFile.ts"

export { ImportFailed } from "./ImportFailed.ts"

export const kinds = ["batch-tests", "calls", "contacts", "suppressions"] as const
export type Kind = (typeof kinds)[number]

const MAX_LISTED = 20

/** Decodes every non-blank line, or fails listing the bad ones. */
export const parseLines = <A>(
  text: string,
  schema: Schema.Codec<A, unknown>
): Effect.Effect<Array<A>, ImportFailed> => {
  // a field the schema does not list is an error naming it, never dropped (decision 0530)
  const decode = Schema.decodeUnknownExit(schema, { onExcessProperty: "error" })
  const records: Array<A> = []
  const problems: Array<string> = []
  text.split("\n").forEach((line, index) => {
    if (line.trim() === "") return
    let json: unknown
    try {
      json = JSON.parse(line)
    } catch {
      problems.push(`line ${index + 1}: not valid JSON`)
      return
    }
    const exit = decode(json)
    if (exit._tag === "Success") records.push(exit.value)
    else {
      const error = exit.cause.reasons.find((r) => r._tag === "Fail")
      problems.push(
        `line ${index + 1}: ${
          error && Schema.isSchemaError(error.error)
            ? formatDecodeError(error.error, { input: json, root: "record" })
            : "invalid record"
        }`
      )
    }
  })
  if (problems.length > 0) {
    const more = problems.length > MAX_LISTED ? `; and ${problems.length - MAX_LISTED} more` : ""
    return Effect.fail(
      new ImportFailed({ message: `nothing imported: ${problems.slice(0, MAX_LISTED).join("; ")}${more}` })
    )
  }
  return Effect.succeed(records)
}

const batchTestRow = (job: TestCaseBatchJob) => {
  const engine = job.response_engine
  return {
    test_case_batch_job_id: job.test_case_batch_job_id,
    status: job.status,
    engine_type: engine.type,
    engine_id: engine.type === "svc-llm"
      ? engine.llm_id
      : engine.type === "conversation-flow"
      ? engine.conversation_flow_id
      : engine.llm_websocket_url,
    engine_version: "version" in engine ? engine.version ?? null : null,
    pass_count: job.pass_count,
    fail_count: job.fail_count,
    error_count: job.error_count,
    total_count: job.total_count,
    creation_timestamp: job.creation_timestamp,
    user_modified_timestamp: job.user_modified_timestamp
  }
}

/** Options of `Importer.importFile`. */
export interface ImportOptions {
  readonly onProgress?: (progress: Progress) => void
  /** Records per bulk statement (contacts); default 20,000. */
  readonly chunkSize?: number
  /** Least contacts for which the indexes are dropped and rebuilt; default 100,000. */
  readonly rebuildAtLeast?: number
  /** Suppressions: the `source` of lines that give none (default by format: SuppressionImportFile.defaultSource). */
  readonly source?: string
}

export class Importer extends Context.Service<Importer, {
  readonly importFile: (
    orgId: OrgId,
    kind: Kind,
    file: string,
    options?: ImportOptions
  ) => Effect.Effect<number, ImportFailed>
}>()("@svc/server/admin/Importer") {
  static readonly layer = Layer.effect(
    Importer,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return Importer.of({
        importFile: Effect.fn("Importer.importFile")(function*(orgId, kind, file, options?: ImportOptions) {
          const found = yield* sql`SELECT 1 FROM orgs WHERE org_id = ${orgId}`.pipe(Effect.orDie)
          if (found.length === 0) return yield* new ImportFailed({ message: `no org ${orgId}` })
          if (kind === "contacts") {
            const now = yield* Clock.currentTimeMillis
            return yield* Effect.scoped(Effect.gen(function*() {
              const source = yield* ContactImportFile.open(file, {
                orgId,
                now,
                ...(options?.chunkSize === undefined ? {} : { chunkSize: options.chunkSize })
              })
              const result = yield* ContactImport.load(orgId, source, {
                ...(options?.onProgress === undefined ? {} : { onProgress: options.onProgress }),
                ...(options?.rebuildAtLeast === undefined ? {} : { rebuildAtLeast: options.rebuildAtLeast })
              })
              return result.imported
            })).pipe(
              Effect.catchTags({
                ContactImportConflict: (error) => Effect.fail(new ImportFailed({ message: error.message })),
                SqlError: (error) => Effect.fail(new ImportFailed({ message: `nothing imported: ${error.message}` }))
              }),
              Effect.provideService(SqlClient.SqlClient, sql)
            )
          }
          if (kind === "suppressions") {
            // decision 0550: a registry's plain text, CSV or JSON Lines, all or nothing
            const now = yield* Clock.currentTimeMillis
            const format = SuppressionImportFile.formatOf(file)
            const defaultSource = yield* SuppressionImportFile.checkSource(
              options?.source ?? SuppressionImportFile.defaultSource(format)
            )
            return yield* Effect.scoped(Effect.gen(function*() {
              const source = yield* SuppressionImportFile.open(file, {
                format,
                ...(options?.chunkSize === undefined ? {} : { chunkSize: options.chunkSize })
              })
              const result = yield* SuppressionImport.load(orgId, source, {
                defaultSource,
                now,
                ...(options?.onProgress === undefined ? {} : { onProgress: options.onProgress })
              })
              return result.imported
            })).pipe(
              Effect.catchTag(
                "SqlError",
                (error) => Effect.fail(new ImportFailed({ message: `nothing imported: ${error.message}` }))
              ),
              Effect.provideService(SqlClient.SqlClient, sql)
            )
          }
          if (kind === "calls") {
            const now = yield* Clock.currentTimeMillis
            const size = yield* Effect.try({
              try: () => fs.statSync(file).size,
              catch: (error) => new ImportFailed({ message: `cannot read ${file}: ${(error as Error).message}` })
            })
            return yield* Effect.scoped(Effect.gen(function*() {
              const next = yield* CallImportFile.open(file, {
                ...(options?.chunkSize === undefined ? {} : { chunkSize: options.chunkSize })
              })
              // the number of calls is known only at the end: the total is the estimate of one call per 600 bytes
              // until the count passes it
              const report = options?.onProgress
              const result = yield* CallImport.load(orgId, next, {
                now,
                ...(report === undefined ? {} : {
                  onProgress: (done: number) =>
                    report({ phase: "load", done, total: Math.max(done + 1, Math.round(size / 600)) })
                })
              })
              report?.({ phase: "load", done: result.imported, total: result.imported })
              return result.imported
            })).pipe(
              Effect.catchTags({
                CallImportConflict: (error) => Effect.fail(new ImportFailed({ message: error.message })),
                SqlError: (error) => Effect.fail(new ImportFailed({ message: `nothing imported: ${error.message}` }))
              }),
              Effect.provideService(SqlClient.SqlClient, sql)
            )
          }
          const text = yield* Effect.try({
            try: () => fs.readFileSync(file, "utf8"),
            catch: (error) => new ImportFailed({ message: `cannot read ${file}: ${(error as Error).message}` })
          })
          switch (kind) {
            case "batch-tests": {
              const jobs = yield* parseLines(text, TestCaseBatchJob)
              // One statement over a JSON array: bulk, and atomic with the rest of the file.
              yield* sql`
                INSERT INTO test_case_batch_jobs (org_id, test_case_batch_job_id, status, engine_type, engine_id,
                  engine_version, pass_count, fail_count, error_count, total_count, creation_timestamp, user_modified_timestamp)
                SELECT ${orgId}, r.test_case_batch_job_id, r.status, r.engine_type, r.engine_id, r.engine_version,
                  r.pass_count, r.fail_count, r.error_count, r.total_count, r.creation_timestamp, r.user_modified_timestamp
                FROM jsonb_to_recordset(${JSON.stringify(jobs.map(batchTestRow))}::jsonb) AS r(
                  test_case_batch_job_id text, status text, engine_type text, engine_id text, engine_version integer,
                  pass_count integer, fail_count integer, error_count integer, total_count integer,
                  creation_timestamp bigint, user_modified_timestamp bigint)
                ON CONFLICT (org_id, test_case_batch_job_id) DO UPDATE SET
                  status = EXCLUDED.status, pass_count = EXCLUDED.pass_count, fail_count = EXCLUDED.fail_count,
                  error_count = EXCLUDED.error_count, total_count = EXCLUDED.total_count,
                  user_modified_timestamp = EXCLUDED.user_modified_timestamp`.pipe(
                Effect.mapError((error) => new ImportFailed({ message: `nothing imported: ${error.message}` }))
              )
              return jobs.length
            }
          }
        })
      })
    })
  )
}
