/**
 * The connection budget (decision 0440, docs/operations.md "Running at scale"): what one process may open against
 * what PostgreSQL has left, checked once at start and said in one log line. A process cannot see the other replicas'
 * pools nor a pooler's own limits, so it checks what it can: PostgreSQL's `max_connections`, the slots reserved for
 * superusers and `pg_use_reserved_connections` (`superuser_reserved_connections`, `reserved_connections` since
 * PostgreSQL 16), the client connections open now, and its own maximum: its pool when it talks to PostgreSQL directly,
 * only its direct (LISTEN) connections behind a transaction pooler, whose pool goes to the pooler instead.
 *
 * PostgreSQL refuses a connection past `max_connections - reserved` with "sorry, too many clients already" (SQLSTATE
 * 53300); a pool that grows into that refusal fails queries under load, long after the process started fine. The
 * line says so at start, while it is only arithmetic.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * What this process may open, as its configuration says.
 *
 * @category models
 */
export interface Own {
  /** `SVC_DB_MAX_CONNECTIONS`: the pool on `DATABASE_URL`. */
  readonly poolSize: number
  /** Whether `DATABASE_URL` is a transaction pooler (then the pool counts against the pooler, not PostgreSQL). */
  readonly pooled: boolean
  /** Connections to PostgreSQL itself besides the pool: the LISTEN pool on `DATABASE_DIRECT_URL`. */
  readonly direct: number
}

/**
 * The check's inputs and verdict.
 *
 * @category models
 */
export interface Report {
  readonly maxConnections: number
  /** `superuser_reserved_connections` + `reserved_connections`: slots an ordinary role never gets. */
  readonly reserved: number
  /** Client backends open now, this check's own connection included. */
  readonly inUse: number
  /** What this process may open to PostgreSQL at most. */
  readonly need: number
  /** What PostgreSQL has left for it: `maxConnections - reserved - inUse` (plus the check's, when it is ours). */
  readonly free: number
  readonly exceeded: boolean
  readonly line: string
}

/**
 * The verdict from the numbers (pure: the test of the arithmetic needs no server).
 *
 * @category constructors
 */
export const judge = (
  own: Own,
  server: { readonly maxConnections: number; readonly reserved: number; readonly inUse: number }
): Report => {
  const need = (own.pooled ? 0 : own.poolSize) + own.direct
  // directly, the check runs on one of this process's own connections, already counted in `inUse`; through the
  // pooler it runs on one of the pooler's, which stays the pooler's
  const free = server.maxConnections - server.reserved - server.inUse + (own.pooled ? 0 : 1)
  const exceeded = need > free
  const mine = own.pooled
    ? `${need} direct (LISTEN) beside a pool of ${own.poolSize} on the transaction pooler, which counts against the ` +
      `pooler's max_client_conn`
    : own.direct > 0
    ? `${need} (pool ${own.poolSize} + ${own.direct} LISTEN)`
    : `${need} (SVC_DB_MAX_CONNECTIONS)`
  const theirs = `PostgreSQL has ${free} free (max_connections ${server.maxConnections}, ${server.reserved} ` +
    `reserved, ${server.inUse} in use)`
  const line = exceeded
    ? `connection budget exceeded: this process may open ${mine} but ${theirs}; past that, connections are refused ` +
      `("too many clients"): lower SVC_DB_MAX_CONNECTIONS, raise max_connections or connect through a pooler ` +
      `(docs/operations.md, Running at scale)`
    : `connection budget: this process may open ${mine}; ${theirs}`
  return { ...server, need, free, exceeded, line }
}

/**
 * Asks PostgreSQL for its limits and the connections in use (through a transaction pooler too: `current_setting`
 * and `pg_stat_activity` are the server's), and judges.
 *
 * @category constructors
 */
export const check = (own: Own) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ max_connections: number; reserved: number; in_use: number }>`
      SELECT current_setting('max_connections')::int4 AS max_connections,
        current_setting('superuser_reserved_connections')::int4
          + coalesce(current_setting('reserved_connections', true)::int4, 0) AS reserved,
        (SELECT count(*)::int4 FROM pg_stat_activity WHERE backend_type = 'client backend') AS in_use`
    return judge(own, { maxConnections: row!.max_connections, reserved: row!.reserved, inUse: row!.in_use })
  })

/**
 * Checks and logs the one line: a warning when this process alone could exceed what is left, information otherwise;
 * a check that cannot run is logged and changes nothing (the budget is advice, the database still works).
 *
 * @category constructors
 */
export const log = (own: Own) =>
  check(own).pipe(
    Effect.flatMap((report) =>
      (report.exceeded ? Effect.logWarning(report.line) : Effect.logInfo(report.line)).pipe(
        Effect.annotateLogs({
          maxConnections: report.maxConnections,
          reserved: report.reserved,
          inUse: report.inUse,
          need: report.need,
          free: report.free
        })
      )
    ),
    Effect.catchCause((cause) =>
      Effect.logWarning("connection budget not checked").pipe(Effect.annotateLogs({ cause: String(cause) }))
    )
  )
