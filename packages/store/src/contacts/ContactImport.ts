/**
 * The bulk loader of `admin import --kind contacts` (decision 0530): contacts arrive in chunks of columns, already
 * validated (the caller decodes the file's lines and rejects duplicates within the file), and go in with the seed's
 * statement (`ContactSeed.insertStatement`: one `INSERT ... SELECT FROM unnest(...)` per chunk, binary array
 * parameters), in one transaction: a file imports completely or not at all.
 *
 * - The first chunk is read before the transaction opens, so a file that is bad from its first lines takes no lock.
 * - Imports and seeds of one org take turns (`pg_advisory_xact_lock(SEED_LOCK, hashtext(org))`), so an org found
 *   empty stays empty until this import commits.
 * - A large import against the table (at least 100,000 contacts, estimated from the first chunk, and at least as
 *   many as the table holds) drops the secondary indexes and rebuilds them after, as the seed does
 *   (decision 0301): several times faster than maintaining a trigram index row by row. Dropping an index locks
 *   the table, so other requests on contacts wait for the import (docs/operations.md says so). Into an org with no
 *   contacts the phone key is rebuilt too: the caller guarantees distinct numbers within the file.
 * - A number or contact id the org already has is refused, naming its line: the chunk is inserted with
 *   `ON CONFLICT DO NOTHING`, and a chunk that inserted fewer rows than it has rolls the import back; its lines are
 *   then matched against the org's contacts to say which collided.
 * - The database inserts one chunk while the caller decodes the next (two cores busy), as in the seed.
 */
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { Clock, Effect, Fiber, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import {
  type ContactColumns,
  insertParameters,
  insertStatement,
  rebuildIndexes,
  SECONDARY_INDEXES,
  SEED_LOCK
} from "./ContactSeed.ts"

/**
 * Validated contacts of consecutive lines.
 *
 * @category models
 */
export interface ImportChunk {
  readonly columns: ContactColumns
  /** The file line (from 1) of each row. */
  readonly lines: ReadonlyArray<number>
}

/**
 * Where the chunks come from: `next` answers `undefined` at the end, and fails (with the caller's error) when the
 * input is bad; `estimatedRows` is asked once, after the first chunk, to decide whether to rebuild the indexes.
 *
 * @category models
 */
export interface ChunkSource<E> {
  readonly next: Effect.Effect<ImportChunk | undefined, E>
  readonly estimatedRows: () => number
}

/**
 * Where a load is: `load` after each chunk inserted (rows so far), `index` per index rebuilt.
 *
 * @category models
 */
export interface ImportProgress {
  readonly phase: "load" | "index" | "analyze"
  readonly done: number
  readonly total: number
}

/**
 * A line whose phone number or contact id the org already has: nothing was imported.
 *
 * @category errors
 */
export class ContactImportConflict extends Schema.TaggedError<ContactImportConflict>()("ContactImportConflict", {
  message: Schema.String
}) {}

/**
 * What an import did.
 *
 * @category models
 */
export interface ContactImportResult {
  readonly imported: number
  readonly rebuiltIndexes: boolean
  readonly millis: number
}

/** A chunk inserted fewer rows than it had: found before the rollback, explained after it. */
class ChunkCollided extends Schema.TaggedError<ChunkCollided>()("ChunkCollided", { index: Schema.Number }) {}

const MAX_LISTED = 20

/**
 * Imports the chunks of `source` into `orgId` in one transaction (see the module comment).
 *
 * @category constructors
 */
export const load = Effect.fnUntraced(function*<E>(
  orgId: OrgId,
  source: ChunkSource<E>,
  options: {
    readonly onProgress?: (progress: ImportProgress) => void
    /** Least estimated rows for which the indexes are rebuilt; default 100,000 (the seed's). */
    readonly rebuildAtLeast?: number
  } = {}
): Effect.fn.Return<ContactImportResult, E | ContactImportConflict | SqlError, SqlClient.SqlClient> {
  const sql = yield* SqlClient.SqlClient
  const started = yield* Clock.currentTimeMillis
  const progress = options.onProgress ?? (() => {})
  const first = yield* source.next
  if (first === undefined) return { imported: 0, rebuiltIndexes: false, millis: 0 }
  const estimate = source.estimatedRows()
  // the chunks inserted so far, kept only to explain a collision after the rollback (a few MB per chunk, and only
  // the one that collided is read)
  let collided: ImportChunk | undefined

  const transaction = sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(${SEED_LOCK}, hashtext(${orgId}))`
    const [counts] = yield* sql<{ org: string | number; all: string | number }>`
      SELECT coalesce((SELECT contacts FROM contact_counts WHERE org_id = ${orgId}), 0) AS org,
        coalesce((SELECT sum(contacts) FROM contact_counts), 0) AS all`
    const orgRows = Number(counts?.org ?? 0)
    const tableRows = Number(counts?.all ?? 0)
    const rebuild = estimate >= (options.rebuildAtLeast ?? 100_000) && estimate >= tableRows
    const rebuildPhoneKey = rebuild && orgRows === 0
    yield* sql`SET LOCAL maintenance_work_mem = '1GB'`
    if (rebuild) {
      for (const [name] of SECONDARY_INDEXES) yield* sql.unsafe(`DROP INDEX IF EXISTS ${name}`)
    }
    if (rebuildPhoneKey) yield* sql`ALTER TABLE contacts DROP CONSTRAINT contacts_org_phone_key`
    // the primary key (org_id, contact_id) always stays, so `ON CONFLICT DO NOTHING` still catches a contact id the
    // org has; with the phone key dropped, the org has no numbers to collide with
    const insert = insertStatement(true)

    let done = 0
    let chunk: ImportChunk | undefined = first
    progress({ phase: "load", done, total: estimate })
    while (chunk !== undefined) {
      const current: ImportChunk = chunk
      const running = yield* Effect.forkChild(sql.unsafe(insert, insertParameters(current.columns)).raw)
      yield* Effect.yieldNow
      // decode the next chunk while PostgreSQL inserts this one; a bad line fails here, after which the insert's
      // fiber is interrupted with the transaction
      chunk = yield* source.next
      const result = (yield* Fiber.join(running)) as { readonly rowCount?: number | null }
      if ((result.rowCount ?? 0) < current.lines.length) {
        collided = current
        return yield* new ChunkCollided({ index: done })
      }
      done += current.lines.length
      if (chunk !== undefined) progress({ phase: "load", done, total: Math.max(estimate, done + 1) })
    }
    // the estimate was the first chunk's bytes per row: the last update says how many there were
    progress({ phase: "load", done, total: done })
    if (rebuild) {
      yield* rebuildIndexes(sql, rebuildPhoneKey, progress)
    }
    return { imported: done, rebuild }
  }))

  const result = yield* transaction.pipe(
    Effect.catchTag("ChunkCollided", () => Effect.flatMap(explain(orgId, collided!), (error) => Effect.fail(error)))
  )
  if (result.rebuild) {
    progress({ phase: "analyze", done: 0, total: 1 })
    // fresh statistics and a visibility map after a large load, as the seed does; VACUUM cannot run in a transaction
    yield* sql`VACUUM (ANALYZE) contacts, contact_search`
    progress({ phase: "analyze", done: 1, total: 1 })
  }
  const finished = yield* Clock.currentTimeMillis
  return { imported: result.imported, rebuiltIndexes: result.rebuild, millis: finished - started }
})

/** Which lines of a chunk name a number or contact id the org already had (read after the rollback). */
const explain = (orgId: OrgId, chunk: ImportChunk) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { contactId, phoneNumber } = chunk.columns
    const rows = yield* sql<{ phone_number: string; contact_id: string }>`
      SELECT phone_number, contact_id FROM contacts
      WHERE org_id = ${orgId} AND (phone_number = ANY(${phoneNumber}::text[]) OR contact_id = ANY(${contactId}::text[]))`
    const phones = new Map(rows.map((r) => [r.phone_number, r.contact_id]))
    const ids = new Map(rows.map((r) => [r.contact_id, r.phone_number]))
    const problems: Array<string> = []
    for (let i = 0; i < chunk.lines.length; i++) {
      const line = chunk.lines[i]!
      const phone = phoneNumber[i]!
      const id = contactId[i]!
      if (phones.has(phone)) {
        problems.push(`line ${line}: phone_number ${phone} already belongs to contact ${phones.get(phone)} of the org`)
      } else if (ids.has(id)) {
        problems.push(`line ${line}: contact_id ${id} already belongs to the org's contact with ${ids.get(id)}`)
      }
    }
    const listed = problems.length === 0
      // a contact created through the API while the import ran took a number or id of this chunk, then went away
      ? ["a contact of this file was created in the org while the import ran; try again"]
      : problems.slice(0, MAX_LISTED)
    const more = problems.length > MAX_LISTED ? `; and ${problems.length - MAX_LISTED} more in the same chunk` : ""
    return new ContactImportConflict({ message: `nothing imported: ${listed.join("; ")}${more}` })
  })
