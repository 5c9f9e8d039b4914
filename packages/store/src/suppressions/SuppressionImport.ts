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
  readonly phase: "load"
  readonly done: number
  readonly total: number
}

const textArray = (values: ReadonlyArray<string | null>): PgTypes.Parameter => {
  const result = PgTypes.array(values, PgTypes.OID.text)
  if (result._tag === "Failure") throw result.failure
  return result.success
}

/**
 * The statement of one chunk: `$1` org, `$2` default source, `$3` time, `$4..$6` the columns.
 *
 * @category encoding
 */
export const insertStatement = `
  INSERT INTO suppressions (org_id, phone_number, reason, source, created_timestamp)
  SELECT $1::text, r.phone_number, r.reason, coalesce(r.source, $2::text), $3::int8
  FROM unnest($4::text[], $5::text[], $6::text[]) AS r(phone_number, reason, source)
  ORDER BY r.phone_number
  ON CONFLICT (org_id, phone_number) DO NOTHING`

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
    let read = 0
    let imported = 0
    let chunk: SuppressionChunk | undefined = first
    progress({ phase: "load", done: 0, total: estimate })
    while (chunk !== undefined) {
      const current: SuppressionChunk = chunk
      const running = yield* Effect.forkChild(
        sql.unsafe(insertStatement, [
          orgId,
          options.defaultSource,
          options.now,
          textArray(current.numbers),
          textArray(current.reasons),
          textArray(current.sources)
        ] as Array<never>).raw
      )
      yield* Effect.yieldNow
      // read the next chunk while PostgreSQL inserts this one; a bad line fails here, and the insert's fiber is
      // interrupted with the transaction
      chunk = yield* source.next
      const inserted = (yield* Fiber.join(running)) as { readonly rowCount?: number | null }
      read += current.numbers.length
      imported += inserted.rowCount ?? 0
      if (chunk !== undefined) progress({ phase: "load", done: read, total: Math.max(estimate, read + 1) })
    }
    progress({ phase: "load", done: read, total: read })
    return { read, imported }
  }))
  const finished = yield* Clock.currentTimeMillis
  return { ...result, millis: finished - started }
})
