/**
 * The attempt records the attempt caps count (`number_attempts`, decision 0624): the claim writes them (migration
 * 0023); this sweeps those no cap can count any more.
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"

/**
 * How long an attempt record is kept: the caps count a number's claims over a rolling 24 h (the claim's window,
 * migration 0023), plus an hour for workers whose clocks disagree. The claim drops a number's own older records as
 * it dials the number again; the sweep drops those of numbers never dialled again.
 */
export const ATTEMPTS_KEPT_MS = 25 * 3_600_000

/** The statements over attempt records, on `sql`. */
export const make = (sql: SqlClient.SqlClient) => {
  const sweepAttempts = (now: number) =>
    sql<{ n: number }>`
      WITH swept AS (
        DELETE FROM number_attempts WHERE attempted_at < ${now - ATTEMPTS_KEPT_MS} RETURNING 1
      )
      SELECT count(*)::int4 AS n FROM swept`.pipe(
      Effect.map((rows) => rows[0]?.n ?? 0),
      Effect.orDie,
      Effect.withSpan("DispatchRepo.sweepAttempts")
    )

  return { sweepAttempts }
}
