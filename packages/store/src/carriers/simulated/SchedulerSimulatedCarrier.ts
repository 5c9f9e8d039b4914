/**
 * The records of the simulated carrier behind the default `Dialer` adapter (apps/scheduler `SimulatedDialer`): the
 * calls it placed, one per idempotency key, and every dial request it received. They play the carrier's side of
 * the port, so they are shared by every worker and survive a worker's crash, as a real carrier's records would;
 * that is what lets the crash test count dials per key across processes (decision 0401, "Exactly once"; dial
 * records counted by idempotency key).
 *
 * `layerMemory` keeps the same records in the process, for unit tests and benchmarks of the dispatcher alone.
 */
import { CallEnded, type DialRequest } from "@svc/domain/ports/Dialer.ts"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A call of the simulated carrier: what it reports once the call is over, and when its line is free again.
 *
 * @category models
 */
export interface CarrierCall {
  readonly call: CallEnded
  readonly placedAt: number
  readonly endsAt: number
}

/**
 * One dial request as the carrier received it.
 *
 * @category models
 */
export interface CarrierAttempt {
  readonly idempotencyKey: string
  readonly attemptedAt: number
  readonly request: DialRequest
}

/**
 * The carrier's records. `place` logs the attempt and places the call unless one exists for the key; either way it
 * returns the key's call. Storage failures surface as `unknown` so the adapter can report `DialerUnavailable`.
 *
 * @category services
 */
export class SchedulerSimulatedCarrier extends Context.Service<SchedulerSimulatedCarrier, {
  readonly place: (request: DialRequest, call: CarrierCall, now: number) => Effect.Effect<CarrierCall, unknown>
  readonly find: (idempotencyKey: string) => Effect.Effect<Option.Option<CarrierCall>, unknown>
  /** Every dial request received, in order (tests and operators). */
  readonly attempts: Effect.Effect<ReadonlyArray<CarrierAttempt>, unknown>
}>()("@svc/store/SchedulerSimulatedCarrier") {
  /**
   * Records in PostgreSQL (`simulated_dialer_calls`, `simulated_dialer_attempts`, migration 0007).
   *
   * @category layers
   */
  static readonly layer: Layer.Layer<SchedulerSimulatedCarrier, never, SqlClient.SqlClient> = Layer.effect(
    SchedulerSimulatedCarrier,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const decodeCall = Schema.decodeUnknownSync(CallEnded)
      const toCall = (row: { result: unknown; placed: number; ends: number }): CarrierCall => ({
        call: decodeCall(row.result),
        placedAt: row.placed,
        endsAt: row.ends
      })
      return SchedulerSimulatedCarrier.of({
        // One statement: the attempt is logged and the call placed (or found) atomically, so a crash cannot leave a
        // call without its attempt or the other way round.
        place: (request, call, now) =>
          sql<{ result: unknown; placed: number; ends: number }>`
            WITH attempt AS (
              INSERT INTO simulated_dialer_attempts (idempotency_key, attempted_timestamp, request)
              VALUES (${request.idempotency_key}, ${now}, ${JSON.stringify(request)}::jsonb)
            ), placed AS (
              INSERT INTO simulated_dialer_calls (idempotency_key, call_id, placed_timestamp, ends_timestamp, result)
              VALUES (${request.idempotency_key}, ${call.call.call_id}, ${call.placedAt}, ${call.endsAt},
                ${JSON.stringify(call.call)}::jsonb)
              ON CONFLICT (idempotency_key) DO NOTHING
              RETURNING result, placed_timestamp::float8 AS placed, ends_timestamp::float8 AS ends
            )
            SELECT result, placed, ends FROM placed
            UNION ALL
            SELECT result, placed_timestamp::float8, ends_timestamp::float8 FROM simulated_dialer_calls
            WHERE idempotency_key = ${request.idempotency_key} AND NOT EXISTS (SELECT 1 FROM placed)`.pipe(
            Effect.flatMap((rows) =>
              rows[0] === undefined
                // the existing row was inserted by a transaction that committed after this statement's snapshot
                ? sql<{ result: unknown; placed: number; ends: number }>`
                    SELECT result, placed_timestamp::float8 AS placed, ends_timestamp::float8 AS ends
                    FROM simulated_dialer_calls WHERE idempotency_key = ${request.idempotency_key}`
                : Effect.succeed(rows)
            ),
            Effect.flatMap((rows) =>
              rows[0] === undefined
                ? Effect.fail(new Error("simulated call vanished"))
                : Effect.succeed(toCall(rows[0]))
            )
          ),
        find: (key) =>
          sql<{ result: unknown; placed: number; ends: number }>`
            SELECT result, placed_timestamp::float8 AS placed, ends_timestamp::float8 AS ends
            FROM simulated_dialer_calls WHERE idempotency_key = ${key}`.pipe(
            Effect.map((rows) => rows[0] === undefined ? Option.none() : Option.some(toCall(rows[0])))
          ),
        attempts: sql<{ key: string; at: number; request: DialRequest }>`
          SELECT idempotency_key AS key, attempted_timestamp::float8 AS at, request
          FROM simulated_dialer_attempts ORDER BY attempt_id`.pipe(
          Effect.map((rows) =>
            rows.map((row): CarrierAttempt => ({ idempotencyKey: row.key, attemptedAt: row.at, request: row.request }))
          )
        )
      })
    })
  )

  /**
   * Records in this process's memory.
   *
   * @category layers
   */
  static readonly layerMemory: Layer.Layer<SchedulerSimulatedCarrier> = Layer.sync(SchedulerSimulatedCarrier, () => {
    const calls = new Map<string, CarrierCall>()
    const attempts: Array<CarrierAttempt> = []
    return SchedulerSimulatedCarrier.of({
      place: (request, call, now) =>
        Effect.sync(() => {
          attempts.push({ idempotencyKey: request.idempotency_key, attemptedAt: now, request })
          const existing = calls.get(request.idempotency_key)
          if (existing !== undefined) return existing
          calls.set(request.idempotency_key, call)
          return call
        }),
      find: (key) => Effect.sync(() => Option.fromUndefinedOr(calls.get(key))),
      attempts: Effect.sync(() => [...attempts])
    })
  })
}
