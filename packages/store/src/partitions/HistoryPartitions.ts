/**
 * Time partitions of the history tables and their retention (decision 0442). `calls` is partitioned
 * by `recorded_timestamp` (migration 0035): its DEFAULT partition, `calls_legacy`, is the table as it was before the
 * upgrade, and one partition per calendar month (UTC) holds the calls recorded in it, once a retention is set.
 *
 * What `maintain` keeps, each step in its own short transaction under `pg_try_advisory_xact_lock(PARTITIONS_LOCK,
 * hashtext(table))` (so workers running it at once take turns; one that finds the lock held skips the round) and a
 * `lock_timeout` (a step that would wait longer for its table gives up and the next round tries again, instead of
 * queueing every reader of `calls` behind it):
 *
 * 1. The boundary: the default partition gets `CHECK (recorded_timestamp < B)`, B the first month start at least a
 *    day away, added NOT VALID (catalog only) and then validated, which reads the default partition under SHARE
 *    UPDATE EXCLUSIVE (reads and writes go on). A validated constraint is what lets PostgreSQL attach a partition
 *    without reading the default partition under an ACCESS EXCLUSIVE lock. Rows recorded before B (all of the
 *    pre-upgrade history) stay in the default partition.
 * 2. Partitions ahead: every month from B to `aheadMonths` past the current one exists, made as a plain table with
 *    its indexes (named `<partition>_<index>`) and then attached, so the attach builds nothing and holds the parent
 *    only in SHARE UPDATE EXCLUSIVE mode (the default partition, which it proves empty of the range by the
 *    constraint, briefly in ACCESS EXCLUSIVE).
 * 3. Retention: a month partition whose end is at least the retention before `now` is dropped whole (every row in it
 *    was recorded before `now - retention`, so nothing newer is touched); the default partition, all of whose rows
 *    are older than B, is truncated once B is that old. A month goes in two steps: it is detached and renamed
 *    `<partition>_expired` (catalog only, under the parent's ACCESS EXCLUSIVE lock), then dropped on its own. The
 *    drop removes the month's files (12 GiB for 10M calls) at its commit, and PostgreSQL does that before it
 *    releases its locks: in one step, every reader of `calls` would wait for the disk (measured, docs/benchmarks.md
 *    "Partitioned history"). An `_expired` table left by a round that stopped between the steps is dropped by the
 *    next round; a month an operator detached by hand keeps its name and is never touched.
 *
 * Without a retention nothing is partitioned by time (measured: every partition a statement cannot prune costs it
 * planning time, decision 0442), unless a boundary was set before: then months ahead are still created, since rows
 * past B have nowhere else to go.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A table partitioned by an epoch-milliseconds column.
 *
 * @category models
 */
export interface HistoryTable {
  /** The partitioned table. */
  readonly table: string
  /** Its DEFAULT partition. */
  readonly defaultPartition: string
  /** The partition key: a `bigint` of epoch milliseconds. */
  readonly key: string
  /** Storage parameters of each new partition (partitioned tables take none themselves). */
  readonly storage: string
  /** The indexes each partition gets before it is attached: one per index of the parent, same definition. */
  readonly indexes: ReadonlyArray<{ readonly suffix: string; readonly unique: boolean; readonly definition: string }>
}

/**
 * `calls` (migration 0035): fillfactor 40 keeps the finish a HOT update (decision 0540), and the indexes match the
 * parent's six.
 *
 * @category models
 */
export const CALLS: HistoryTable = {
  table: "calls",
  defaultPartition: "calls_legacy",
  key: "recorded_timestamp",
  storage: "fillfactor = 40",
  indexes: [
    { suffix: "list", unique: false, definition: "(org_id, sort_timestamp, call_id)" },
    {
      suffix: "batch",
      unique: false,
      definition: "(batch_call_id, sort_timestamp, call_id) INCLUDE (org_id) WHERE batch_call_id IS NOT NULL"
    },
    { suffix: "to_number", unique: false, definition: "(org_id, to_number, sort_timestamp, call_id)" },
    {
      suffix: "agent",
      unique: false,
      definition: "(org_id, agent_id, sort_timestamp, call_id) WHERE agent_id IS NOT NULL"
    },
    { suffix: "call_id", unique: true, definition: "(org_id, call_id, recorded_timestamp)" },
    { suffix: "seq", unique: true, definition: "(org_id, call_seq, recorded_timestamp)" }
  ]
}

/**
 * `pg_advisory_xact_lock` class key of partition maintenance ("svc:part"), fixed forever.
 *
 * @category models
 */
export const PARTITIONS_LOCK = 0x5356_5041

/**
 * One month partition: rows with `from <= key < to`.
 *
 * @category models
 */
export interface MonthPartition {
  readonly name: string
  readonly from: number
  readonly to: number
}

/**
 * The state of a table's partitions.
 *
 * @category models
 */
export interface PartitionState {
  /** B of the default partition's `CHECK (key < B)`, when it has one; `validated` once PostgreSQL proved it. */
  readonly boundary: { readonly at: number; readonly validated: boolean } | undefined
  /** The month partitions, oldest first. */
  readonly months: ReadonlyArray<MonthPartition>
  /** Whether the default partition holds any row. */
  readonly defaultHasRows: boolean
  /** Months detached by retention whose drop has not run yet (`<partition>_expired`). */
  readonly expired: ReadonlyArray<string>
}

/**
 * What one `maintain` did.
 *
 * @category models
 */
export interface MaintenanceResult {
  readonly boundary: number | undefined
  readonly created: ReadonlyArray<string>
  readonly dropped: ReadonlyArray<string>
  /** Whether the default partition (the history older than the boundary) was emptied. */
  readonly truncatedDefault: boolean
  /** Steps left for the next round: another worker held the table's maintenance lock, or a table lock timed out. */
  readonly deferred: ReadonlyArray<string>
}

/** @category models */
export interface MaintainOptions {
  /** Rows recorded more than this long before `now` may go; undefined = keep everything. */
  readonly retentionMs: number | undefined
  /** Months after the current one that must have their partition. */
  readonly aheadMonths: number
  /** How long a step waits for a table lock before it gives up for this round. */
  readonly lockTimeoutMs: number
}

/**
 * The start (epoch ms, UTC) of the month holding `at`, moved by `months`.
 *
 * @category constructors
 */
export const monthStart = (at: number, months = 0): number => {
  const d = new Date(at)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1)
}

/**
 * The name of `table`'s partition of the month starting at `from`: `calls_p2026_01`.
 *
 * @category constructors
 */
export const monthName = (table: HistoryTable, from: number): string => {
  const d = new Date(from)
  return `${table.table}_p${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, "0")}`
}

/** The name a month partition takes once retention has detached it, until its drop. */
const expiredName = (partition: string): string => `${partition}_expired`

/** The boundary for a table that has none yet: the first month start at least a day after `now`. */
export const firstBoundary = (now: number): number => {
  const next = monthStart(now, 1)
  return next - now >= 86_400_000 ? next : monthStart(now, 2)
}

const RANGE_BOUND = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/
const CHECK_BOUND = /<\s*'?(-?\d+)'?/

const int8 = (n: number): string => {
  if (!Number.isSafeInteger(n)) throw new Error(`not an integer bound: ${n}`)
  return String(n)
}

/** The SQLSTATE somewhere in a failure's cause chain. */
const sqlState = (error: unknown): string | undefined => {
  let current: unknown = error
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    const record = current as Record<string, unknown>
    if (typeof record["code"] === "string" && /^[0-9A-Z]{5}$/.test(record["code"])) return record["code"]
    const reason = record["reason"] as Record<string, unknown> | undefined
    current = reason?.["cause"] ?? record["cause"]
  }
  return undefined
}

/** lock_not_available (a lock_timeout): the step is left for the next round. */
const LOCK_NOT_AVAILABLE = "55P03"

/**
 * Partition maintenance of the history tables.
 *
 * @category services
 */
export class HistoryPartitions extends Context.Service<HistoryPartitions, {
  readonly state: (table: HistoryTable) => Effect.Effect<PartitionState>
  /** Boundary, partitions ahead, retention (see the module's header), as of `now`. */
  readonly maintain: (table: HistoryTable, now: number, options: MaintainOptions) => Effect.Effect<MaintenanceResult>
}>()("@svc/store/HistoryPartitions") {
  /** @category layers */
  static readonly layer: Layer.Layer<HistoryPartitions, never, SqlClient.SqlClient> = Layer.effect(
    HistoryPartitions,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const state = (table: HistoryTable) =>
        Effect.gen(function*() {
          const parts = yield* sql<{ name: string; bound: string }>`
            SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
            FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = ${table.table}::regclass`
          const months: Array<MonthPartition> = []
          for (const part of parts) {
            const m = RANGE_BOUND.exec(part.bound)
            if (m !== null) months.push({ name: part.name, from: Number(m[1]), to: Number(m[2]) })
          }
          months.sort((a, b) => a.from - b.from)
          const [check] = yield* sql<{ def: string; validated: boolean }>`
            SELECT pg_get_constraintdef(oid) AS def, convalidated AS validated FROM pg_constraint
            WHERE conrelid = ${table.defaultPartition}::regclass AND conname = ${boundaryName(table)}`
          const at = check === undefined ? undefined : CHECK_BOUND.exec(check.def)
          const [rows] = yield* sql<{ any: boolean }>`
            SELECT EXISTS (SELECT 1 FROM ${sql.literal(table.defaultPartition)}) AS any`
          const expired = yield* sql<{ name: string }>`
            SELECT relname AS name FROM pg_class
            WHERE relkind = 'r' AND NOT relispartition AND relnamespace = current_schema()::regnamespace
              AND relname ~ ${`^${table.table}_p[0-9]{4}_[0-9]{2}_expired$`}
            ORDER BY relname`
          return {
            boundary: at === undefined || at === null ? undefined : { at: Number(at[1]), validated: check!.validated },
            months,
            defaultHasRows: rows?.any ?? false,
            expired: expired.map((row) => row.name)
          }
        }).pipe(Effect.orDie)

      /**
       * Runs `ddl` in a transaction holding the table's maintenance lock and the lock timeout: "done", "busy" (another
       * worker maintains the table) or "timeout" (a table lock was not granted in time).
       */
      const step = (table: HistoryTable, options: MaintainOptions, ddl: Effect.Effect<unknown, unknown>) =>
        sql.withTransaction(Effect.gen(function*() {
          const [lock] = yield* sql<{ held: boolean }>`
            SELECT pg_try_advisory_xact_lock(${PARTITIONS_LOCK}, hashtext(${table.table})) AS held`
          if (lock?.held !== true) return "busy" as const
          yield* sql`SELECT set_config('lock_timeout', ${`${Math.max(1, Math.round(options.lockTimeoutMs))}ms`}, true)`
          yield* ddl
          return "done" as const
        })).pipe(
          Effect.catch((error) =>
            sqlState(error) === LOCK_NOT_AVAILABLE ? Effect.succeed("timeout" as const) : Effect.die(error)
          )
        )

      const createMonth = (table: HistoryTable, from: number, to: number) =>
        Effect.gen(function*() {
          const name = monthName(table, from)
          yield* sql.unsafe(
            `CREATE TABLE ${name} (LIKE ${table.table} INCLUDING DEFAULTS INCLUDING GENERATED INCLUDING CONSTRAINTS)` +
              ` WITH (${table.storage})`
          )
          for (const index of table.indexes) {
            yield* sql.unsafe(
              `CREATE ${index.unique ? "UNIQUE " : ""}INDEX ${name}_${index.suffix} ON ${name} ${index.definition}`
            )
          }
          yield* sql.unsafe(
            `ALTER TABLE ${table.table} ATTACH PARTITION ${name} FOR VALUES FROM (${int8(from)}) TO (${int8(to)})`
          )
        })

      const maintain = (table: HistoryTable, now: number, options: MaintainOptions) =>
        Effect.gen(function*() {
          const created: Array<string> = []
          const dropped: Array<string> = []
          const deferred: Array<string> = []
          let truncatedDefault = false
          let current = yield* state(table)
          const expiredTables: Array<string> = [...current.expired]
          if (options.retentionMs === undefined && current.boundary === undefined) {
            return { boundary: undefined, created, dropped, truncatedDefault, deferred }
          }

          // 1. the boundary, added NOT VALID (catalog only), then validated (reads the default partition, online)
          if (current.boundary === undefined) {
            const at = firstBoundary(now)
            const added = yield* step(
              table,
              options,
              sql.unsafe(
                `ALTER TABLE ${table.defaultPartition} ADD CONSTRAINT ${boundaryName(table)}` +
                  ` CHECK (${table.key} < ${int8(at)}) NOT VALID`
              )
            )
            if (added !== "done") deferred.push(`boundary (${added})`)
            current = yield* state(table)
          }
          if (current.boundary !== undefined && !current.boundary.validated) {
            const validated = yield* step(
              table,
              options,
              sql.unsafe(`ALTER TABLE ${table.defaultPartition} VALIDATE CONSTRAINT ${boundaryName(table)}`)
            )
            if (validated !== "done") deferred.push(`validation (${validated})`)
            current = yield* state(table)
          }
          const boundary = current.boundary
          if (boundary === undefined || !boundary.validated) {
            return { boundary: boundary?.at, created, dropped, truncatedDefault, deferred }
          }

          // 2. months ahead: from the boundary (or the last month's end) to aheadMonths past the current month
          const until = monthStart(now, options.aheadMonths + 1)
          let from = current.months.length === 0 ? boundary.at : current.months[current.months.length - 1]!.to
          while (from < until) {
            const to = monthStart(from, 1)
            const made = yield* step(table, options, createMonth(table, from, to))
            if (made !== "done") {
              deferred.push(`${monthName(table, from)} (${made})`)
              break
            }
            created.push(monthName(table, from))
            from = to
          }

          // 3. retention: whole months that ended at least the retention ago, then the history before the boundary
          if (options.retentionMs !== undefined) {
            const cutoff = now - options.retentionMs
            for (const month of current.months) {
              if (month.to > cutoff) break
              const expired = expiredName(month.name)
              const detached = yield* step(
                table,
                options,
                Effect.andThen(
                  sql.unsafe(`ALTER TABLE ${table.table} DETACH PARTITION ${month.name}`),
                  sql.unsafe(`ALTER TABLE ${month.name} RENAME TO ${expired}`)
                )
              )
              if (detached !== "done") {
                deferred.push(`drop ${month.name} (${detached})`)
                break
              }
              expiredTables.push(expired)
              dropped.push(month.name)
            }
            if (boundary.at <= cutoff && current.defaultHasRows) {
              const emptied = yield* step(table, options, sql.unsafe(`TRUNCATE ${table.defaultPartition}`))
              if (emptied === "done") truncatedDefault = true
              else deferred.push(`truncate ${table.defaultPartition} (${emptied})`)
            }
          }
          // 4. the files of the months detached above (or by an earlier round that stopped before their drop): no
          // statement on the parent reads a detached table, so these drops wait for no one and hold no one up
          for (const expired of expiredTables) {
            const gone = yield* step(table, options, sql.unsafe(`DROP TABLE ${expired}`))
            if (gone !== "done") deferred.push(`drop ${expired} (${gone})`)
          }
          return { boundary: boundary.at, created, dropped, truncatedDefault, deferred }
        }).pipe(Effect.withSpan("HistoryPartitions.maintain"))

      return HistoryPartitions.of({ state, maintain })
    })
  )
}

/** The name of the default partition's boundary constraint. */
const boundaryName = (table: HistoryTable) => `${table.defaultPartition}_before_months`
