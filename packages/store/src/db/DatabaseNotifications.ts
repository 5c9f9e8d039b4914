/**
 * Where this process may LISTEN (decision 0440). A session connection to PostgreSQL can LISTEN; a transaction-mode
 * pooler (PgBouncer `pool_mode = transaction`) hands each transaction to any server connection, so a LISTEN through it
 * registers on a server connection the process does not keep, and its notifications go nowhere (PgBouncer's docs,
 * "SQL feature map for pooling modes": LISTEN is not supported in transaction mode).
 *
 * So the database layer says, once, how notifications reach this process: through its own pool (a direct session
 * connection, as before), through `DATABASE_DIRECT_URL` beside a pooled `DATABASE_URL`, or not at all. Every LISTEN
 * site asks `listener`; when it answers `None`, the site polls, and no wait that a notification would have ended
 * lasts longer than `POLL_FALLBACK_MS`.
 */
import { PgClient, type PgConnection } from "@effect/sql-pg"
import { Context, Effect, Option, type Queue, type Scope } from "effect"
import type { SqlError } from "effect/sql/SqlError"

/**
 * Opens a LISTEN on `channel` for the scope's lifetime (PgClient.listen's contract).
 *
 * @category models
 */
export type Listen = (
  channel: string
) => Effect.Effect<Queue.Dequeue<PgConnection.Notification, SqlError>, SqlError, Scope.Scope>

/**
 * How this process receives notifications: `listen` is `None` behind a transaction pooler without a direct URL.
 *
 * @category services
 */
export class DatabaseNotifications extends Context.Service<DatabaseNotifications, {
  readonly listen: Option.Option<Listen>
}>()("@svc/store/DatabaseNotifications") {}

/**
 * The longest a wake-up that a notification would have brought waits without one (decision 0440: window opening or
 * new batch to first dial within 1 s in poll mode).
 *
 * @category models
 */
export const POLL_FALLBACK_MS = 1_000

/**
 * The LISTEN this process may use: `DatabaseNotifications`' when the database layer provided it; otherwise the
 * PostgreSQL client's own (a layer built on a direct URL, as tests do); `None` on another `SqlClient` or when the
 * layer said notifications cannot reach this process.
 *
 * @category constructors
 */
export const listener: Effect.Effect<Option.Option<Listen>> = Effect.gen(function*() {
  const notifications = yield* Effect.serviceOption(DatabaseNotifications)
  if (Option.isSome(notifications)) return notifications.value.listen
  const client = yield* Effect.serviceOption(PgClient.PgClient)
  return Option.map(client, (pg): Listen => (channel) => pg.listen(channel))
})
