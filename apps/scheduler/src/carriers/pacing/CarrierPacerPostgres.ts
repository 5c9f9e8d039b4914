/**
 * Carrier pacing shared through PostgreSQL (decision 0610): the default, since every worker already shares the
 * database. One row per account (migration 0021); each slot is one `INSERT ... ON CONFLICT DO UPDATE ... RETURNING`
 * statement, serialised across workers by the row lock, with the worker's `Clock` time passed in (the database's
 * `now()` is never read, so tests pin time and every store keeps the same schedule).
 */
import { Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { CarrierPacer } from "./CarrierPacer.ts"
import type * as CarrierPacingConfig from "./CarrierPacingConfig.ts"
import * as SlotPacer from "./SlotPacer.ts"

// A statement that has not answered by then fails the acquire (DialerUnavailable: no call is created) rather than
// holding the dial indefinitely; a slot it may still take is a gap in the schedule, never an extra call.
const TIMEOUT = Duration.seconds(5)

/**
 * The schedule's store in PostgreSQL.
 *
 * @category constructors
 */
export const store: Effect.Effect<SlotPacer.SlotStore, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const guard = (account: string) => <A, E>(self: Effect.Effect<A, E>) =>
    self.pipe(
      Effect.timeout(TIMEOUT),
      Effect.mapError(SlotPacer.unavailable("PostgreSQL", account))
    )
  return {
    take: (account, nowUs, intervalUs) =>
      sql<{ readonly slot: number }>`
        INSERT INTO carrier_pacing AS p (account, next_at) VALUES (${account}, ${nowUs}::bigint + ${intervalUs}::bigint)
        ON CONFLICT (account) DO UPDATE
          SET next_at = GREATEST(p.next_at, ${nowUs}::bigint, p.paused_until) + ${intervalUs}::bigint
        RETURNING (next_at - ${intervalUs}::bigint)::float8 AS slot`.pipe(
        Effect.map((rows) => rows[0]!.slot),
        guard(account)
      ),
    pause: (account, _nowUs, untilUs) =>
      sql`
        INSERT INTO carrier_pacing AS p (account, next_at, paused_until) VALUES (${account}, 0, ${untilUs}::bigint)
        ON CONFLICT (account) DO UPDATE SET paused_until = GREATEST(p.paused_until, EXCLUDED.paused_until)`.pipe(
        Effect.asVoid,
        guard(account)
      ),
    pausedUntil: (account) =>
      sql<{ readonly paused_until: number }>`
        SELECT paused_until::float8 AS paused_until FROM carrier_pacing WHERE account = ${account}`.pipe(
        Effect.map((rows) => rows[0]?.paused_until ?? 0),
        guard(account)
      )
  }
})

/**
 * The pacer with its slot starts visible (tests, benchmark).
 *
 * @category constructors
 */
export const make = (settings: CarrierPacingConfig.CarrierPacingSettings) =>
  Effect.map(store, (s) => SlotPacer.make(s, settings))

/**
 * The port over PostgreSQL.
 *
 * @category layers
 */
export const layer = (
  settings: CarrierPacingConfig.CarrierPacingSettings
): Layer.Layer<CarrierPacer, never, SqlClient.SqlClient> =>
  Layer.effect(CarrierPacer, Effect.map(make(settings), SlotPacer.toPort))
