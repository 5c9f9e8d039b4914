/**
 * The bulk loader of `admin import --kind calls` (decision 0535): finished
 * calls in chunks, one statement per chunk, all chunks in one transaction (all or nothing).
 *
 * Each chunk's statement inserts the calls and, in the same statement, updates the contacts they belong to exactly
 * as CallsRepo's contact feed does for calls svc places: matched by `to_number`, `conversation_count` raised by the
 * number of calls placed, `last_conversation_timestamp` raised to the latest `start_timestamp`, and a contact
 * created for a number the org has none for. A call counts when it was placed (an outcome: answered, busy, no
 * answer, failed); a dial the carrier refused (`not_connected` for another reason) does not, as in the feed.
 * Contacts are locked in (org, number) order, the feed's order, so an import and a feeder never deadlock.
 *
 * A `call_id` the org already has is an error naming its line (re-importing a file is refused, not merged: merging
 * would count its calls on the contacts twice); the chunk inserts only the calls whose id the org has no call with
 * yet (once per id), and one that inserted fewer calls than it has rolls the import back, after which its ids are
 * looked up to name the lines.
 *
 * `calls` is partitioned by `recorded_timestamp` (decision 0442), and a partitioned table's unique index must hold
 * its partition key, so no index says "this id is new in the org" across partitions (the `ON CONFLICT (org_id,
 * call_id)` this statement used to lean on). The check is a probe per id instead, and imports of one org take turns
 * (`pg_advisory_xact_lock(CALL_IMPORT_LOCK, hashtext(org))`), so two imports never both find an id new. svc's own
 * writers never give a call an id an import could: the claim's ids are `call_` and an MD5 of the task (decision 0442).
 */
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { searchTextExpression } from "../contacts/index.ts"

/**
 * A call as the calls table keeps it (migrations 0007, 0012).
 *
 * @category models
 */
export interface ImportedCall {
  readonly call_id: string
  readonly batch_call_id: string | null
  readonly from_number: string
  readonly to_number: string
  readonly agent_id: string | null
  readonly agent_version: number | null
  readonly call_status: "ended" | "not_connected" | "error"
  readonly outcome: "answered" | "busy" | "no_answer" | "failed" | null
  readonly disconnection_reason: string | null
  readonly start_timestamp: number | null
  readonly end_timestamp: number | null
  readonly duration_ms: number | null
  readonly analysis: Record<string, unknown>
  /** The metadata as JSON text; null when the call has none (a JSON `null` is the text "null"). */
  readonly metadata_json: string | null
  readonly dynamic_variables: Record<string, string> | null
  readonly custom_sip_headers: Record<string, string> | null
}

/**
 * Validated calls of consecutive lines.
 *
 * @category models
 */
export interface CallChunk {
  readonly calls: ReadonlyArray<ImportedCall>
  /** The file line (from 1) of each call. */
  readonly lines: ReadonlyArray<number>
}

/**
 * A line whose call_id the org already has: nothing was imported.
 *
 * @category errors
 */
export class CallImportConflict extends Schema.TaggedError<CallImportConflict>()("CallImportConflict", {
  message: Schema.String
}) {}

/**
 * What a calls import did.
 *
 * @category models
 */
export interface CallImportResult {
  readonly imported: number
  /** Calls that counted on a contact (placed, to an E.164 number). */
  readonly counted: number
}

class ChunkCollided extends Schema.TaggedError<ChunkCollided>()("ChunkCollided", {}) {}

const MAX_LISTED = 20

/**
 * `pg_advisory_xact_lock` class key of calls imports ("svc:cimp"), fixed forever: one import per org at a time.
 *
 * @category models
 */
export const CALL_IMPORT_LOCK = 0x5356_4349

/**
 * The vendor's status and reason as the calls table's `outcome` (decision 0510, read backwards): `ended` was
 * answered, `error` failed, `not_connected` busy or unanswered by its reason, else a dial the carrier refused.
 *
 * @category constructors
 */
export const outcomeOf = (
  status: ImportedCall["call_status"],
  reason: string | undefined
): ImportedCall["outcome"] =>
  status === "ended"
    ? "answered"
    : status === "error"
    ? "failed"
    : reason === "dial_busy"
    ? "busy"
    : reason === "dial_no_answer"
    ? "no_answer"
    : null

/**
 * Imports the chunks `next` hands over into `orgId` in one transaction; `now` is the calls' recorded time and a
 * new contact's creation time.
 *
 * @category constructors
 */
export const load = Effect.fnUntraced(function*<E>(
  orgId: OrgId,
  next: Effect.Effect<CallChunk | undefined, E>,
  options: { readonly now: number; readonly onProgress?: (done: number) => void }
): Effect.fn.Return<CallImportResult, E | CallImportConflict | SqlError, SqlClient.SqlClient> {
  const sql = yield* SqlClient.SqlClient
  const progress = options.onProgress ?? (() => {})
  const now = options.now
  let collided: CallChunk | undefined
  const search = searchTextExpression({
    phoneNumber: "p.to_number",
    firstName: "NULL",
    lastName: "NULL",
    externalId: "NULL",
    customFields: "'{}'::jsonb"
  })

  const result = yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(${CALL_IMPORT_LOCK}, hashtext(${orgId}))`
    let imported = 0
    let counted = 0
    let chunk = yield* next
    while (chunk !== undefined) {
      const [row] = yield* sql<{ inserted: number; counted: number }>`
        WITH r AS (
          SELECT * FROM ROWS FROM (jsonb_to_recordset(${JSON.stringify(chunk.calls)}::jsonb) AS (
            call_id text, batch_call_id text, from_number text, to_number text, agent_id text, agent_version int8,
            call_status text, outcome text, disconnection_reason text, start_timestamp int8, end_timestamp int8,
            duration_ms int8, analysis jsonb, metadata_json text, dynamic_variables jsonb, custom_sip_headers jsonb))
            WITH ORDINALITY AS r(call_id, batch_call_id, from_number, to_number, agent_id, agent_version, call_status,
              outcome, disconnection_reason, start_timestamp, end_timestamp, duration_ms, analysis, metadata_json,
              dynamic_variables, custom_sip_headers, line)
        ), firsts AS (
          -- an id twice in the chunk is inserted once (and the chunk then counts as collided, as before)
          SELECT * FROM (SELECT r.*, row_number() OVER (PARTITION BY r.call_id ORDER BY r.line) AS nth FROM r) f
          WHERE f.nth = 1
        ), ins AS (
          INSERT INTO calls (org_id, call_id, batch_call_id, from_number, to_number, agent_id, agent_version,
            call_status, outcome, disconnection_reason, start_timestamp, end_timestamp, duration_ms, analysis,
            metadata, dynamic_variables, custom_sip_headers, recorded_timestamp)
          SELECT ${orgId}, r.call_id, r.batch_call_id, r.from_number, r.to_number, r.agent_id, r.agent_version,
            r.call_status, r.outcome, r.disconnection_reason, r.start_timestamp, r.end_timestamp, r.duration_ms,
            r.analysis, r.metadata_json::jsonb, r.dynamic_variables, r.custom_sip_headers, ${now}::int8
          FROM firsts r
          WHERE NOT EXISTS (SELECT 1 FROM calls c WHERE c.org_id = ${orgId} AND c.call_id = r.call_id)
          -- in the file's order, so call_seq (the order svc recorded them) follows the lines, as before
          ORDER BY r.line
          RETURNING to_number, start_timestamp, outcome
        ), per_contact AS (
          SELECT to_number, count(*)::int4 AS calls, max(start_timestamp) AS last_start,
            gen_random_uuid()::text AS random_id
          FROM ins
          WHERE outcome IS NOT NULL
          GROUP BY to_number
        ), fed AS (
          -- CallsRepo.feed's statement: a new contact gets an id in the UUID v7 layout and its search_text here
          INSERT INTO contacts AS k (org_id, contact_id, phone_number, conversation_count,
            last_conversation_timestamp, created_timestamp, user_modified_timestamp, search_text)
          SELECT ${orgId},
            substr(lpad(to_hex(${now}::int8), 12, '0'), 1, 8) || '-' || substr(lpad(to_hex(${now}::int8), 12, '0'), 9, 4)
              || '-7' || substr(p.random_id, 16, 3) || substr(p.random_id, 19),
            p.to_number, p.calls, p.last_start, ${now}::int8, ${now}::int8, ${sql.literal(search)}
          FROM per_contact p
          ORDER BY p.to_number
          ON CONFLICT (org_id, phone_number) DO UPDATE SET
            conversation_count = k.conversation_count + EXCLUDED.conversation_count,
            last_conversation_timestamp = GREATEST(k.last_conversation_timestamp, EXCLUDED.last_conversation_timestamp)
          RETURNING 1
        )
        SELECT (SELECT count(*)::int4 FROM ins) AS inserted,
          (SELECT coalesce(sum(calls), 0)::int4 FROM per_contact) AS counted,
          (SELECT count(*)::int4 FROM fed) AS contacts`
      if ((row?.inserted ?? 0) < chunk.calls.length) {
        collided = chunk
        return yield* new ChunkCollided()
      }
      imported += chunk.calls.length
      counted += row?.counted ?? 0
      progress(imported)
      chunk = yield* next
    }
    return { imported, counted }
  })).pipe(
    Effect.catchTag("ChunkCollided", () => Effect.flatMap(explain(orgId, collided!), Effect.fail))
  )
  return result
})

/** Which lines of a chunk name a call id the org already had (read after the rollback). */
const explain = (orgId: OrgId, chunk: CallChunk) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ids = chunk.calls.map((c) => c.call_id)
    const rows = yield* sql<{ call_id: string }>`
      SELECT call_id FROM calls WHERE org_id = ${orgId} AND call_id = ANY(${ids}::text[])`
    const existing = new Set(rows.map((r) => r.call_id))
    const problems: Array<string> = []
    chunk.calls.forEach((call, i) => {
      if (existing.has(call.call_id)) {
        problems.push(`line ${chunk.lines[i]}: call_id ${call.call_id} already exists in the org`)
      }
    })
    const listed = problems.length === 0
      ? ["a call of this file was recorded in the org while the import ran; try again"]
      : problems.slice(0, MAX_LISTED)
    const more = problems.length > MAX_LISTED ? `; and ${problems.length - MAX_LISTED} more in the same chunk` : ""
    return new CallImportConflict({
      message: `nothing imported: ${listed.join("; ")}${more} (a call is imported once: remove the lines already ` +
        "imported)"
    })
  })
