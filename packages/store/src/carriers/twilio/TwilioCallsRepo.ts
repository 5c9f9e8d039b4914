/**
 * The Twilio adapter's record of its calls, one row per idempotency key (migration 0020; decision 0602, "Exactly once
 * without carrier idempotency"). The adapter (apps/scheduler `twilio/TwilioDialer`) reserves the
 * key before it asks Twilio for a call and attaches the call SID after; the status-callback endpoint (apps/server
 * `POST /carrier/twilio/status`) applies each callback; `dial` waits for the row to reach an end, woken by
 * `NOTIFY twilio_calls`. Every write is one statement, so two workers or a crash between two writes cannot leave a
 * key with two calls or a record that moved backwards.
 */
import {
  rank,
  TERMINAL_RANK,
  type TwilioCallStatus,
  type TwilioRecordStatus
} from "@svc/domain/carrier/TwilioCallStatus.ts"
import type { BatchCallId, CallId } from "@svc/domain/models/Ids.ts"
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient, type SqlError } from "effect/sql"

/**
 * A key's record as stored.
 *
 * @category models
 */
export interface TwilioCallRecord {
  readonly idempotencyKey: string
  /** The dial request's call id; branded as the row is read. */
  readonly callId: CallId
  readonly accountSid: string
  readonly fromNumber: string
  readonly toNumber: string
  readonly requestedAt: number
  readonly callSid: string | null
  readonly status: TwilioRecordStatus
  readonly answeredBy: string | null
  readonly sipResponseCode: number | null
  readonly errorCode: number | null
  readonly rejection: string | null
  readonly startTimestamp: number | null
  readonly endTimestamp: number | null
  readonly durationS: number | null
  readonly updatedAt: number
}

/**
 * What a status callback (or a fetch of the call resource) says about a call.
 *
 * @category models
 */
export interface TwilioStatusUpdate {
  readonly callSid: string
  readonly status: TwilioCallStatus
  readonly answeredBy?: string | undefined
  readonly sipResponseCode?: number | undefined
  readonly errorCode?: number | undefined
  readonly startTimestamp?: number | undefined
  readonly endTimestamp?: number | undefined
  readonly durationS?: number | undefined
}

/**
 * What applying an update did: `applied` moved the record forward; `stale` found it at that status or past it (a
 * late or replayed callback: nothing changed); `unknown` found no record for the key, or one whose SID differs.
 *
 * @category models
 */
export type ApplyResult = "applied" | "stale" | "unknown"

/** The channel `applyStatus` notifies with the key as payload. */
export const CHANNEL = "twilio_calls"

const COLUMNS = `idempotency_key, call_id, account_sid, from_number, to_number, requested_at::float8 AS requested_at,
  call_sid, status, answered_by, sip_response_code, error_code, rejection, start_timestamp::float8 AS start_timestamp,
  end_timestamp::float8 AS end_timestamp, duration_s, updated_at::float8 AS updated_at`

interface Row {
  readonly idempotency_key: string
  readonly call_id: CallId
  readonly account_sid: string
  readonly from_number: string
  readonly to_number: string
  readonly requested_at: number
  readonly call_sid: string | null
  readonly status: TwilioRecordStatus
  readonly answered_by: string | null
  readonly sip_response_code: number | null
  readonly error_code: number | null
  readonly rejection: string | null
  readonly start_timestamp: number | null
  readonly end_timestamp: number | null
  readonly duration_s: number | null
  readonly updated_at: number
}

const toRecord = (row: Row): TwilioCallRecord => ({
  idempotencyKey: row.idempotency_key,
  callId: row.call_id,
  accountSid: row.account_sid,
  fromNumber: row.from_number,
  toNumber: row.to_number,
  requestedAt: row.requested_at,
  callSid: row.call_sid,
  status: row.status,
  answeredBy: row.answered_by,
  sipResponseCode: row.sip_response_code,
  errorCode: row.error_code,
  rejection: row.rejection,
  startTimestamp: row.start_timestamp,
  endTimestamp: row.end_timestamp,
  durationS: row.duration_s,
  updatedAt: row.updated_at
})

/**
 * @category services
 */
export class TwilioCallsRepo extends Context.Service<TwilioCallsRepo, {
  /**
   * Writes the key's record in `requesting` unless one exists. `inserted: true` means this caller owns the create
   * request; otherwise `record` is the existing one (another dial of the same key, or an earlier try of it), and
   * the caller must not send a request.
   */
  readonly reserve: (
    record: Pick<TwilioCallRecord, "idempotencyKey" | "callId" | "accountSid" | "fromNumber" | "toNumber">,
    now: number
  ) => Effect.Effect<{ readonly inserted: boolean; readonly record: TwilioCallRecord }, SqlError.SqlError>
  /**
   * Twilio created the call: the record gets its SID (and moves to `status` unless a callback already moved it
   * further). Also used by crash recovery, when the call was found through the Calls list.
   */
  readonly attachSid: (
    key: string,
    callSid: string,
    status: TwilioCallStatus,
    now: number
  ) => Effect.Effect<ApplyResult, SqlError.SqlError>
  /** Twilio refused the request before a call existed (DialRejected): the record ends `rejected` with `reason`. */
  readonly markRejected: (key: string, reason: string, now: number) => Effect.Effect<void, SqlError.SqlError>
  /**
   * Crash recovery found no call for a record left in `requesting`: the record is deleted, so the key may be
   * dialled again (`lookup` answers `None` only after this succeeded). Only a record still in `requesting` is
   * deleted; returns whether it was.
   */
  readonly release: (key: string) => Effect.Effect<boolean, SqlError.SqlError>
  /**
   * A status callback or a fetched call resource for `key`: moves the record forward (never back; a terminal
   * record never changes), attaching the SID if the callback arrived before the create response, and notifies
   * the channel when it changed something.
   */
  readonly applyStatus: (key: string, update: TwilioStatusUpdate, now: number) => Effect.Effect<
    ApplyResult,
    SqlError.SqlError
  >
  readonly find: (key: string) => Effect.Effect<Option.Option<TwilioCallRecord>, SqlError.SqlError>
  /**
   * Whether the batch was cancelled (`POST /cancel-batch-call`): the adapter then ends its calls that are still
   * ringing (decision 0605).
   */
  readonly batchCancelled: (batchCallId: BatchCallId) => Effect.Effect<boolean, SqlError.SqlError>
  /**
   * Which of `sids` are attached to a record other than `key`'s: crash recovery must not take another key's call
   * for this one (decision 0602: minus SIDs attached to other keys).
   */
  readonly attachedElsewhere: (key: string, sids: ReadonlyArray<string>) => Effect.Effect<
    ReadonlySet<string>,
    SqlError.SqlError
  >
  /** Records still in `requesting` since before `before` (crash leftovers), oldest first. */
  readonly unresolved: (before: number, limit: number) => Effect.Effect<
    ReadonlyArray<TwilioCallRecord>,
    SqlError.SqlError
  >
}>()("@svc/store/TwilioCallsRepo") {
  /** @category layers */
  static readonly layer: Layer.Layer<TwilioCallsRepo, never, SqlClient.SqlClient> = Layer.effect(
    TwilioCallsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const columns = sql.literal(COLUMNS)
      const selectKey = (key: string) => sql<Row>`SELECT ${columns} FROM twilio_calls WHERE idempotency_key = ${key}`

      const applyStatus = (key: string, u: TwilioStatusUpdate, now: number) =>
        sql<{ changed: boolean; known: boolean }>`
          WITH updated AS (
            UPDATE twilio_calls SET
              call_sid = ${u.callSid},
              status = ${u.status},
              status_rank = ${rank(u.status)},
              answered_by = COALESCE(${u.answeredBy ?? null}, answered_by),
              sip_response_code = COALESCE(${u.sipResponseCode ?? null}::integer, sip_response_code),
              error_code = COALESCE(${u.errorCode ?? null}::integer, error_code),
              start_timestamp = COALESCE(${u.startTimestamp ?? null}::bigint, start_timestamp),
              end_timestamp = COALESCE(${u.endTimestamp ?? null}::bigint, end_timestamp),
              duration_s = COALESCE(${u.durationS ?? null}::integer, duration_s),
              updated_at = ${now}
            WHERE idempotency_key = ${key} AND (call_sid IS NULL OR call_sid = ${u.callSid})
              AND status_rank < ${rank(u.status)} AND status_rank < ${TERMINAL_RANK}
            RETURNING idempotency_key
          )
          SELECT (SELECT count(pg_notify(${CHANNEL}, idempotency_key)) FROM updated) > 0 AS changed,
            EXISTS (SELECT 1 FROM twilio_calls WHERE idempotency_key = ${key}
              AND (call_sid IS NULL OR call_sid = ${u.callSid})) AS known`.pipe(
          Effect.map(([row]): ApplyResult => row?.changed ? "applied" : row?.known ? "stale" : "unknown")
        )

      return TwilioCallsRepo.of({
        reserve: (r, now) =>
          sql<Row>`
            INSERT INTO twilio_calls (idempotency_key, call_id, account_sid, from_number, to_number, requested_at,
              updated_at)
            VALUES (${r.idempotencyKey}, ${r.callId}, ${r.accountSid}, ${r.fromNumber}, ${r.toNumber}, ${now}, ${now})
            ON CONFLICT (idempotency_key) DO NOTHING
            RETURNING ${columns}`.pipe(
            Effect.flatMap((rows): Effect.Effect<
              { readonly inserted: boolean; readonly record: TwilioCallRecord },
              SqlError.SqlError
            > =>
              rows[0] !== undefined
                ? Effect.succeed({ inserted: true, record: toRecord(rows[0]) })
                // the row exists (committed before this statement, or by a transaction that conflicted with it)
                : Effect.map(selectKey(r.idempotencyKey), ([row]) => {
                  if (row === undefined) throw new Error(`twilio_calls row of ${r.idempotencyKey} vanished`)
                  return { inserted: false, record: toRecord(row) }
                })
            )
          ),
        attachSid: (key, callSid, status, now) => applyStatus(key, { callSid, status }, now),
        markRejected: (key, reason, now) =>
          sql`
            UPDATE twilio_calls SET status = 'rejected', status_rank = ${TERMINAL_RANK}, rejection = ${reason},
              updated_at = ${now}
            WHERE idempotency_key = ${key} AND status = 'requesting'`.pipe(Effect.asVoid),
        release: (key) =>
          sql<{ idempotency_key: string }>`
            DELETE FROM twilio_calls WHERE idempotency_key = ${key} AND status = 'requesting'
            RETURNING idempotency_key`.pipe(Effect.map((rows) => rows.length > 0)),
        applyStatus,
        batchCancelled: (batchCallId) =>
          sql<{ cancelled: boolean }>`
            SELECT EXISTS (SELECT 1 FROM batch_calls WHERE batch_call_id = ${batchCallId} AND status = 'cancelled')
              AS cancelled`.pipe(Effect.map(([row]) => row?.cancelled === true)),
        find: (key) =>
          Effect.map(selectKey(key), ([row]) => row === undefined ? Option.none() : Option.some(toRecord(row))),
        attachedElsewhere: (key, sids) =>
          sids.length === 0
            ? Effect.succeed(new Set<string>())
            : sql<{ call_sid: string }>`
              SELECT call_sid FROM twilio_calls
              WHERE call_sid = ANY(${sids}::text[]) AND idempotency_key <> ${key}`.pipe(
              Effect.map((rows) => new Set(rows.map((row) => row.call_sid)))
            ),
        unresolved: (before, limit) =>
          sql<Row>`
            SELECT ${columns} FROM twilio_calls WHERE status = 'requesting' AND requested_at < ${before}
            ORDER BY requested_at LIMIT ${limit}`.pipe(Effect.map((rows) => rows.map(toRecord)))
      })
    })
  )
}
