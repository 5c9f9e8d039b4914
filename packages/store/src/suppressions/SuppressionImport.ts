/**
 * The bulk loader of `admin import --kind suppressions` (decision 0550): numbers arrive in chunks of columns, already
 * validated and in E.164 form (the caller reads the file); all of them are read and sorted first, then put on the
 * list in chunks of consecutive numbers in one transaction: a file imports completely or not at all.
 *
 * - A number the org already has keeps its stored row (first reason and source win, as create-suppression), and a
 *   number repeated in the file goes in once (its first line's reason and source): a registry's monthly file can be
 *   imported again as it comes.
 * - Sorted, because inserting in key order walks the primary key's leaf pages once instead of touching one at random
 *   per number. The sort is of the numbers as doubles (an E.164 number has at most 15 digits, below 2^53, and no
 *   leading zero, so `"+" + key` gives it back exactly): a typed-array sort of 10M numbers takes about a second, where
 *   staging them in a table and sorting there cost a pass over 10M rows more (measured: docs/benchmarks.md).
 * - `INSERT ... WHERE NOT EXISTS` rather than `ON CONFLICT DO NOTHING`: the file's repeats are gone after the sort,
 *   and a speculative insertion per row cost a third more. A create of the same number committed by another
 *   transaction meanwhile makes a chunk's insert fail with a unique violation: the chunk runs in a savepoint and is
 *   run again, and the second run's snapshot sees the number.
 * - The foreign key's per-row check (it locks the org's row once per inserted row: half of the insert's cost) is
 *   replaced by one lock of the org's row (`FOR KEY SHARE`, the check's own lock: the org cannot be deleted before
 *   this commits, so no row is orphaned) and `session_replication_role = replica` for the transaction, where the
 *   role may set it (the embedded server's owner may; a `DATABASE_URL` role without the privilege keeps the checks).
 *   Replica skips the table's ordinary triggers: sound only while the foreign key's are its only ones (tested).
 * - No index is dropped: every claim probes the key, and claims keep running during an import. No advisory lock is
 *   taken: the rows bind the claims that begin after the commit (the claim reads the list under the org's lock), and
 *   holding the org's lock for a minute would stop its dialling.
 * - The file is read before the transaction opens: a bad file takes no snapshot and no lock.
 */
import { PgTypes } from "@effect/sql-pg"
import type { OrgId } from "@svc/domain/models/Ids.ts"
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

/**
 * Where an import is: `read` lines of the file (numbers so far), then `list` (distinct numbers written).
 *
 * @category models
 */
export interface SuppressionImportProgress {
  readonly phase: "read" | "list"
  readonly done: number
  readonly total: number
}

/** Numbers written per statement. */
const CHUNK_DEFAULT = 200_000

const textArray = (values: ReadonlyArray<string | null>): PgTypes.Parameter => {
  const result = PgTypes.array(values, PgTypes.OID.text)
  if (result._tag === "Failure") throw result.failure
  return result.success
}

/**
 * The statement of one chunk of sorted, distinct numbers: `$1` org, `$2` default source, `$3` time, `$4..$6` the
 * columns (`$5`, `$6` NULL when no line of the file gave a reason or a source).
 *
 * @category encoding
 */
export const insertStatement = `
  INSERT INTO suppressions (org_id, phone_number, reason, source, created_timestamp)
  SELECT $1::text, r.phone_number, r.reason, coalesce(r.source, $2::text), $3::int8
  FROM unnest($4::text[], coalesce($5::text[], '{}'), coalesce($6::text[], '{}')) AS r(phone_number, reason, source)
  WHERE r.phone_number IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM suppressions s WHERE s.org_id = $1::text AND s.phone_number = r.phone_number)`

/**
 * Whether this session may skip the per-row foreign-key check (`session_replication_role` is the superuser's: the
 * embedded server's user has it; a `DATABASE_URL` role may not).
 *
 * @category constructors
 */
export const canSkipRowChecks = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ allowed: boolean }>`
    SELECT has_parameter_privilege('session_replication_role', 'SET') AS allowed`
  return row?.allowed === true
})

/** The file's numbers as sort keys (`+` dropped), with the lines' reasons and sources when any line gave one. */
class Collected {
  keys = new Float64Array(1 << 16)
  size = 0
  reasons: Array<string | null> | undefined
  sources: Array<string | null> | undefined

  add(chunk: SuppressionChunk) {
    const n = chunk.numbers.length
    if (this.size + n > this.keys.length) {
      const grown = new Float64Array(Math.max(this.keys.length * 2, this.size + n))
      grown.set(this.keys.subarray(0, this.size))
      this.keys = grown
    }
    for (let i = 0; i < n; i++) {
      const reason = chunk.reasons[i] ?? null
      const source = chunk.sources[i] ?? null
      if (reason !== null && this.reasons === undefined) this.reasons = new Array(this.size).fill(null)
      if (source !== null && this.sources === undefined) this.sources = new Array(this.size).fill(null)
      this.reasons?.push(reason)
      this.sources?.push(source)
      this.keys[this.size++] = Number(chunk.numbers[i]!.slice(1))
    }
  }

  /**
   * The distinct numbers in key order, each with its first line's reason and source. Without reasons and sources
   * the keys are sorted as they are; with them, the lines' positions are sorted by key (ties in file order).
   */
  sorted(): {
    readonly numbers: Array<string>
    readonly reasons: Array<string | null> | undefined
    readonly sources: Array<string | null> | undefined
  } {
    const keys = this.keys.subarray(0, this.size)
    const numbers: Array<string> = []
    if (this.reasons === undefined && this.sources === undefined) {
      keys.sort()
      for (let i = 0; i < keys.length; i++) {
        if (i === 0 || keys[i] !== keys[i - 1]) numbers.push(`+${keys[i]}`)
      }
      return { numbers, reasons: undefined, sources: undefined }
    }
    const order = new Uint32Array(this.size)
    for (let i = 0; i < order.length; i++) order[i] = i
    order.sort((a, b) => keys[a]! - keys[b]! || a - b)
    const reasons: Array<string | null> | undefined = this.reasons === undefined ? undefined : []
    const sources: Array<string | null> | undefined = this.sources === undefined ? undefined : []
    let last = Number.NaN
    for (const i of order) {
      if (keys[i] === last) continue
      last = keys[i]!
      numbers.push(`+${last}`)
      reasons?.push(this.reasons![i]!)
      sources?.push(this.sources![i]!)
    }
    return { numbers, reasons, sources }
  }
}

/**
 * Imports the numbers of `source` into `orgId`'s list in one transaction (see the module comment);
 * `defaultSource` is the `source` of lines that give none.
 *
 * @category constructors
 */
export const load = Effect.fnUntraced(function*<E>(
  orgId: OrgId,
  source: SuppressionChunkSource<E>,
  options: {
    readonly defaultSource: string
    readonly now: number
    readonly onProgress?: (progress: SuppressionImportProgress) => void
    /** Numbers per statement; default 200,000. */
    readonly listChunk?: number
  }
): Effect.fn.Return<SuppressionImportResult, E | SqlError, SqlClient.SqlClient> {
  const sql = yield* SqlClient.SqlClient
  const started = yield* Clock.currentTimeMillis
  const progress = options.onProgress ?? (() => {})
  const collected = new Collected()
  let chunk = yield* source.next
  const estimate = source.estimatedRows()
  progress({ phase: "read", done: 0, total: estimate })
  while (chunk !== undefined) {
    collected.add(chunk)
    chunk = yield* source.next
    if (chunk !== undefined) {
      progress({ phase: "read", done: collected.size, total: Math.max(estimate, collected.size + 1) })
    }
  }
  const read = collected.size
  progress({ phase: "read", done: read, total: read })
  if (read === 0) return { read: 0, imported: 0, millis: 0 }
  const { numbers, reasons, sources } = collected.sorted()
  const CHUNK = Math.max(1, options.listChunk ?? CHUNK_DEFAULT)

  const parameters = (from: number) =>
    [
      orgId,
      options.defaultSource,
      options.now,
      textArray(numbers.slice(from, from + CHUNK)),
      reasons === undefined ? null : textArray(reasons.slice(from, from + CHUNK)),
      sources === undefined ? null : textArray(sources.slice(from, from + CHUNK))
    ] as Array<never>
  const insertChunk = (params: Array<never>) =>
    sql.unsafe(insertStatement, params).raw.pipe(
      // a savepoint: a number created by another transaction meanwhile fails this chunk alone, which runs again and
      // then sees it (READ COMMITTED: a new statement, a new snapshot)
      sql.withTransaction,
      Effect.map((result) => (result as { readonly rowCount?: number | null }).rowCount ?? 0),
      Effect.retry({ while: (error) => error.reason._tag === "UniqueViolation", times: 5 })
    )

  const imported = yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT 1 FROM orgs WHERE org_id = ${orgId} FOR KEY SHARE`
    if (yield* canSkipRowChecks) yield* sql`SET LOCAL session_replication_role = replica`
    let total = 0
    progress({ phase: "list", done: 0, total: numbers.length })
    let running = yield* Effect.forkChild(insertChunk(parameters(0)))
    for (let from = CHUNK;; from += CHUNK) {
      // the fork sends its statement; the next chunk's parameters are built while PostgreSQL writes it
      yield* Effect.yieldNow
      const next = from < numbers.length ? parameters(from) : undefined
      total += yield* Fiber.join(running)
      progress({ phase: "list", done: Math.min(from, numbers.length), total: numbers.length })
      if (next === undefined) return total
      running = yield* Effect.forkChild(insertChunk(next))
    }
  }))
  const finished = yield* Clock.currentTimeMillis
  return { read, imported, millis: finished - started }
})
