/**
 * The bulk loader of `admin import --kind suppressions` (decision 0550): numbers arrive in chunks of columns, already
 * validated and in E.164 form (the caller reads the file), and go in with one
 * `INSERT ... SELECT FROM unnest(...) ON CONFLICT DO NOTHING` per chunk (binary array parameters), in one
 * transaction: a file imports completely or not at all.
 *
 * - A number the org already has keeps its stored row (first reason and source win, as create-suppression), and a
 *   number repeated in the file goes in once: a registry's monthly file can be imported again as it comes.
 * - No index is dropped: the primary key is what every claim probes, and a claim must keep running during an
 *   import. Each chunk is sorted, so its inserts walk the key in order. Measured against a staging table
 *   (chunks into an unindexed table, then one sorted `INSERT ... SELECT`): 10,000,000 numbers went in 1.5x faster
 *   chunk by chunk (docs/benchmarks.md, "Suppression import").
 * - No advisory lock is taken: the rows bind the claims that begin after the commit (the claim reads the list
 *   under the org's lock, decision 0550), and holding the org's lock for a minute would stop its dialling.
 * - The first chunk is read before the transaction opens, so a file bad from its first lines takes no snapshot.
 * - The database inserts one chunk while the caller reads the next (two cores busy), as the contacts import does.
 */
import { PgTypes } from "@effect/sql-pg"
import { Clock, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"

/**
 * Validated numbers of consecutive lines: `reasons[i]` and `sources[i]` belong to `numbers[i]` (`null` source: the
 * import's default).
 *
 * @category models
 */
export interface SuppressionChunk {
  readonly numbers: ReadonlyArray<string>
  readonly reasons: ReadonlyArray<string | null>
  readonly sources: ReadonlyArray<string | null>
}

/**
 * Where the chunks come from: `next` answers `undefined` at the end and fails (with the caller's error) when the
 * input is bad; `estimatedRows` is asked after the first chunk, for progress.
 *
 * @category models
 */
export interface SuppressionChunkSource<E> {
  readonly next: Effect.Effect<SuppressionChunk | undefined, E>
  readonly estimatedRows: () => number
}

/**
 * What an import did: `read` numbers in the file, `imported` of them newly on the list (the rest were listed
 * already, or repeated in the file).
 *
 * @category models
 */
export interface SuppressionImportResult {
  readonly read: number
  readonly imported: number
  readonly millis: number
}

/** @category models */
export interface SuppressionImportProgress {
  readonly phase: "load" | "list"
  readonly done: number
  readonly total: number
}

const textArray = (values: ReadonlyArray<string | null>): PgTypes.Parameter => {
  const result = PgTypes.array(values, PgTypes.OID.text)
  if (result._tag === "Failure") throw result.failure
  return result.success
}

/** The import's staging table: the file's numbers as read, dropped with the transaction. */
const STAGE = "suppression_import"

/**
 * The statement that puts the staged numbers on the list, in key order: `$1` org, `$2` default source, `$3` time.
 *
 * @category encoding
 */
export const listStatement = `
  INSERT INTO suppressions (org_id, phone_number, reason, source, created_timestamp)
  SELECT $1::text, r.phone_number, r.reason, coalesce(r.source, $2::text), $3::int8
  FROM ${STAGE} r
  ORDER BY r.phone_number
  ON CONFLICT (org_id, phone_number) DO NOTHING`

/**
 * Whether this session may skip the per-row foreign-key check (`session_replication_role`, superuser's: the
 * embedded server's user is; a `DATABASE_URL` role may not be).
 *
 * @category constructors
 */
export const canSkipRowChecks = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ allowed: boolean }>`
    SELECT has_parameter_privilege('session_replication_role', 'SET') AS allowed`
  return row?.allowed === true
})

/**
 * Imports the chunks of `source` into `orgId`'s list in one transaction (see the module comment); `defaultSource`
 * is the `source` of lines that give none.
 *
 * @category constructors
 */
export const load = Effect.fnUntraced(function*<E>(
  orgId: string,
  source: SuppressionChunkSource<E>,
  options: {
    readonly defaultSource: string
    readonly now: number
    readonly onProgress?: (progress: SuppressionImportProgress) => void
  }
): Effect.fn.Return<SuppressionImportResult, E | SqlError, SqlClient.SqlClient> {
  const sql = yield* SqlClient.SqlClient
  const started = yield* Clock.currentTimeMillis
  const progress = options.onProgress ?? (() => {})
  const first = yield* source.next
  if (first === undefined) {
    progress({ phase: "load", done: 0, total: 0 })
    return { read: 0, imported: 0, millis: 0 }
  }
  const estimate = source.estimatedRows()

  const result = yield* sql.withTransaction(Effect.gen(function*() {
    // the org's row is locked as the foreign key's check locks it (FOR KEY SHARE): it cannot be deleted before this
    // commits, so the rows below are never orphans, whether or not the per-row check runs
    yield* sql`SELECT 1 FROM orgs WHERE org_id = ${orgId} FOR KEY SHARE`
    if (yield* canSkipRowChecks) {
      // replica: the table's ordinary triggers do not fire in this transaction. Its only ones are the foreign key's
      // (a test asserts it), whose per-row check is what the lock above did once for every row
      yield* sql`SET LOCAL session_replication_role = replica`
    }
    // the final sort of the staged numbers (10M: ~0.5 GB) in memory or in a few runs
    yield* sql`SET LOCAL work_mem = '256MB'`
    yield* sql.unsafe(`CREATE TEMP TABLE ${STAGE} (phone_number text, reason text, source text) ON COMMIT DROP`)
    let read = 0
    let chunk: SuppressionChunk | undefined = first
    progress({ phase: "load", done: 0, total: estimate })
    while (chunk !== undefined) {
      const current: SuppressionChunk = chunk
      const running = yield* Effect.forkChild(
        sql.unsafe(`INSERT INTO ${STAGE} SELECT * FROM unnest($1::text[], $2::text[], $3::text[])`, [
          textArray(current.numbers),
          textArray(current.reasons),
          textArray(current.sources)
        ] as Array<never>).raw
      )
      yield* Effect.yieldNow
      // read the next chunk while PostgreSQL stages this one; a bad line fails here, and the insert's fiber is
      // interrupted with the transaction
      chunk = yield* source.next
      yield* Fiber.join(running)
      read += current.numbers.length
      if (chunk !== undefined) progress({ phase: "load", done: read, total: Math.max(estimate, read + 1) })
    }
    progress({ phase: "load", done: read, total: read })
    progress({ phase: "list", done: 0, total: 1 })
    const inserted = (yield* sql.unsafe(listStatement, [orgId, options.defaultSource, options.now] as Array<never>)
      .raw) as { readonly rowCount?: number | null }
    progress({ phase: "list", done: 1, total: 1 })
    return { read, imported: inserted.rowCount ?? 0 }
  }))
  const finished = yield* Clock.currentTimeMillis
  return { ...result, millis: finished - started }
})
