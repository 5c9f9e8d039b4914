/**
 * The Twilio adapter behind the Dialer port, honouring docs/dialer.md's rules with its own record per
 * key (`TwilioCallsRepo`, migration 0020), since Twilio has no idempotency key (decision 0602):
 *
 * - `dial`: a pacing slot of the account (`CarrierPacer`), then the key is reserved (one statement: only one dial
 *   of a key ever sends a create request), the call is created with its TwiML (`TwiML.callTwiml`) and a status
 *   callback URL naming the key, and its SID attached. A second dial of the key joins the record: it waits for
 *   the call's end, or answers `DialRejected` for a refused request. Then `dial` waits until the record is
 *   terminal (rule 2): woken by `NOTIFY twilio_calls` (whichever server process received the callback), re-reading
 *   it every `pollMs`, and fetching the call from Twilio when no callback moved it for `fetchAfterMs` (callbacks
 *   can be lost). Interrupting `dial` never hangs up: the call goes on and `lookup` finds it.
 * - Create failures (`TwilioOutcome.createFailure`): a refusal ends the record `rejected` (`DialRejected`); a 429
 *   holds every worker off through the pacer and sends the request again (no call exists after a 429); any other
 *   4xx frees the key (no call exists, `DialerUnavailable`); a 5xx or no answer leaves the record `requesting`
 *   (`DialerUnavailable`): only `lookup` can tell whether the call exists.
 * - `lookup`: from the record; a record left `requesting` is resolved through the Calls list between the same
 *   numbers since the request (SIDs of other keys excluded): one candidate is this key's call, none (once no create
 *   can still be in flight) frees the key and answers `None`; several, or Twilio unreachable, `DialerUnavailable`.
 */
import { isTerminal, rank } from "@svc/domain/carrier/TwilioCallStatus.ts"
import { callEnd, createFailure, type TwilioEndStatus } from "@svc/domain/carrier/TwilioOutcome.ts"
import { statusCallbackUrl } from "@svc/domain/carrier/TwilioStatusCallbackUrl.ts"
import type { BatchCallId } from "@svc/domain/models/Ids.ts"
import {
  type CallEnded,
  type CallLookup,
  Dialer,
  DialerUnavailable,
  DialRejected,
  type DialRequest
} from "@svc/domain/ports/Dialer.ts"
import { CHANNEL, type TwilioCallRecord, TwilioCallsRepo } from "@svc/store/carriers/twilio/TwilioCallsRepo.ts"
import * as DatabaseNotifications from "@svc/store/db/DatabaseNotifications.ts"
import { Clock, Deferred, Effect, Layer, Option, Queue, Random } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import { CarrierPacer } from "../pacing/CarrierPacer.ts"
import { type TwilioCall, TwilioClient, type TwilioRequestError } from "./TwilioClient.ts"
import type { TwilioSettings } from "./TwilioConfig.ts"
import { callTwiml } from "./TwiML.ts"

/**
 * The adapter's timings (not environment settings: the defaults suit Twilio; tests shorten them).
 *
 * @category models
 */
export interface TwilioDialerOptions {
  /** How often a waiting `dial` re-reads its record when no notification woke it. */
  readonly pollMs: number
  /** A call no callback moved for this long is fetched from Twilio (callbacks may never come). */
  readonly fetchAfterMs: number
  /**
   * After this long, no create request sent for a record can still be in flight (the client's request timeout
   * plus margin): a `requesting` record whose call the Calls list does not show may be freed.
   */
  readonly createSettledMs: number
  /** How far before `requested_at` the Calls list is searched (Twilio's dates have 1 s precision; clocks differ). */
  readonly listSlackMs: number
  /**
   * The base of the hold after a 429 (doubled per 429 of one request, plus up to as much again of jitter), and its
   * cap before jitter: `SVC_CARRIER_BACKOFF_MS` / `SVC_CARRIER_BACKOFF_MAX_MS` (decision 0610).
   */
  readonly backoffMs: number
  readonly backoffMaxMs: number
  /** 429s of one request before it gives up (`DialerUnavailable`, the key freed: no call exists). */
  readonly maxRateLimited: number
}

/** @category constructors */
export const defaultOptions: TwilioDialerOptions = {
  pollMs: 5_000,
  fetchAfterMs: 60_000,
  createSettledMs: 75_000,
  listSlackMs: 60_000,
  backoffMs: 1_000,
  backoffMaxMs: 30_000,
  maxRateLimited: 8
}

/** Calls read from Twilio's list (newest first) when resolving a record left `requesting`. */
const LIST_LIMIT = 50

/** The status callback URL of `key`: the domain's one spelling (the server validates Twilio's signature over it). */
export { statusCallbackUrl }

/** The port's answer for a terminal record (a `rejected` one has no call and is handled before). */
export const toCallEnded = (record: TwilioCallRecord): CallEnded => {
  const end = callEnd({
    status: record.status as TwilioEndStatus,
    answeredBy: record.answeredBy,
    sipResponseCode: record.sipResponseCode,
    errorCode: record.errorCode
  })
  const endTimestamp = record.endTimestamp ?? record.updatedAt
  const durationMs = record.durationS !== null
    ? record.durationS * 1000
    : record.startTimestamp !== null
    ? Math.max(0, endTimestamp - record.startTimestamp)
    : 0
  return {
    _tag: "CallEnded",
    idempotency_key: record.idempotencyKey,
    call_id: record.callId,
    outcome: end.outcome,
    start_timestamp: record.startTimestamp ?? endTimestamp - durationMs,
    end_timestamp: endTimestamp,
    duration_ms: durationMs,
    disconnection_reason: end.disconnection_reason,
    // post-call analysis comes from the agent runtime, not from the carrier
    analysis: {}
  }
}

const unavailable = (message: string) => new DialerUnavailable({ message })
const sqlUnavailable = (error: SqlError.SqlError) =>
  unavailable(`twilio call records unavailable: ${error.message}: ${String(error.cause)}`)

/**
 * What a fetched call resource says, as a status update of `record`. The record's start is the answer (decision
 * 0606: the answered callback's `Timestamp`), and Twilio's `start_time` is not: it is the dial ("Empty if the call has
 * not yet been dialed", https://www.twilio.com/docs/voice/api/call-resource). So a record that has a start keeps it;
 * one without takes `end_time` − `duration` of a completed call (its talk time), and a call never answered has none
 * (it lasted 0 ms, as its callback's `CallDuration` says). Taking `start_time` overwrote a known answer with the dial
 * when only the end's callback was lost, and gave a busy call its ring time as its length (decision 0606).
 */
const updateOf = (call: TwilioCall, record: TwilioCallRecord) => ({
  callSid: call.sid,
  status: call.status,
  answeredBy: call.answeredBy ?? undefined,
  startTimestamp: record.startTimestamp === null && call.status === "completed" && call.endTime !== null &&
      call.durationS !== null
    ? call.endTime - call.durationS * 1000
    : undefined,
  endTimestamp: call.endTime ?? undefined,
  durationS: call.durationS ?? undefined
})

/**
 * Wakes the `dial`s waiting for a key when its record changes (one LISTEN per worker, not one per call). Without a
 * PostgreSQL client nothing is listened to and waits end at `pollMs`; where the database layer says this process
 * cannot LISTEN (a transaction pooler without a direct URL, decision 0440), they end at `POLL_FALLBACK_MS` at most.
 */
const makeWakeups = Effect.gen(function*() {
  const waiters = new Map<string, Set<Deferred.Deferred<void>>>()
  const listener = yield* DatabaseNotifications.listener
  const polled = Option.isNone(listener) &&
    Option.isSome(yield* Effect.serviceOption(DatabaseNotifications.DatabaseNotifications))
  if (Option.isSome(listener)) {
    const listen = Effect.scoped(Effect.gen(function*() {
      const notifications = yield* listener.value(CHANNEL)
      for (;;) {
        const { payload } = yield* Queue.take(notifications)
        for (const waiter of waiters.get(payload) ?? []) Deferred.doneUnsafe(waiter, Effect.void)
      }
    }))
    yield* listen.pipe(
      Effect.catchCause((cause) =>
        Effect.logWarning("twilio_calls listener failed; listening again in 1 s").pipe(
          Effect.annotateLogs({ cause: String(cause) }),
          Effect.andThen(Effect.sleep(1_000))
        )
      ),
      Effect.forever,
      Effect.forkScoped
    )
  }
  /** Runs `check` until it answers, waiting between checks for a wake-up of `key` or `pollMs`. */
  const until = <A, E, R>(key: string, pollMs: number, check: Effect.Effect<Option.Option<A>, E, R>) =>
    Effect.gen(function*() {
      for (;;) {
        const waiter = yield* Deferred.make<void>()
        let set = waiters.get(key)
        if (set === undefined) waiters.set(key, set = new Set())
        set.add(waiter)
        const answer = yield* check.pipe(
          Effect.tap((answer) =>
            Option.isNone(answer)
              ? Effect.timeoutOption(
                Deferred.await(waiter),
                polled ? Math.min(pollMs, DatabaseNotifications.POLL_FALLBACK_MS) : pollMs
              )
              : Effect.void
          ),
          Effect.ensuring(Effect.sync(() => {
            set.delete(waiter)
            if (set.size === 0) waiters.delete(key)
          }))
        )
        if (Option.isSome(answer)) return answer.value
      }
    })
  return { until }
})

/**
 * The adapter, given the Twilio client, the pacer and the record.
 *
 * @category layers
 */
export const layerWith = (
  settings: Pick<TwilioSettings, "publicUrl" | "sipServer" | "machineDetection" | "ringTimeoutS">,
  options: TwilioDialerOptions = defaultOptions
): Layer.Layer<Dialer, never, TwilioClient | TwilioCallsRepo | CarrierPacer> =>
  Layer.effect(
    Dialer,
    Effect.gen(function*() {
      const client = yield* TwilioClient
      const repo = yield* TwilioCallsRepo
      const pacer = yield* CarrierPacer
      const wakeups = yield* makeWakeups
      const account = client.accountSid

      const find = (key: string) => repo.find(key).pipe(Effect.mapError(sqlUnavailable))

      /** Applies what Twilio says about the call now (a lost callback); failures are left to the next try. */
      const refresh = (record: TwilioCallRecord, sid: string) =>
        client.fetch(sid).pipe(
          Effect.flatMap((call) =>
            Effect.flatMap(
              Clock.currentTimeMillis,
              (now) => repo.applyStatus(record.idempotencyKey, updateOf(call, record), now)
            )
          ),
          Effect.catch((error) =>
            Effect.logWarning("twilio call fetch failed; waiting for a callback").pipe(
              Effect.annotateLogs({ key: record.idempotencyKey, sid, error: String(error) })
            )
          )
        )

      /**
       * Resolves a record left `requesting`: the call this key's create request made, if Twilio shows exactly one
       * candidate; `None` when it shows none and no request can still be in flight (the key is freed first).
       */
      const resolveRequesting = (record: TwilioCallRecord) =>
        Effect.gen(function*() {
          const key = record.idempotencyKey
          const now = yield* Clock.currentTimeMillis
          const calls = yield* client.list({ to: record.toNumber, from: record.fromNumber, limit: LIST_LIMIT }).pipe(
            Effect.mapError((e: TwilioRequestError) =>
              unavailable(`cannot tell whether ${key} has a call: ${e.message}`)
            )
          )
          const since = record.requestedAt - options.listSlackMs
          const oldest = calls.at(-1)?.dateCreated
          if (calls.length >= LIST_LIMIT && (oldest === null || oldest === undefined || oldest >= since)) {
            // a full page still inside the window: the key's call could be on a later page
            return yield* unavailable(
              `more than ${LIST_LIMIT} Twilio calls between the numbers of ${key} since its request`
            )
          }
          const recent = calls.filter((c) => c.dateCreated === null || c.dateCreated >= since)
          const taken = yield* repo.attachedElsewhere(key, recent.map((c) => c.sid)).pipe(
            Effect.mapError(sqlUnavailable)
          )
          const candidates = recent.filter((c) => !taken.has(c.sid))
          if (candidates.length > 1) {
            return yield* unavailable(
              `${candidates.length} Twilio calls from ${record.fromNumber} to ${record.toNumber} since ${key} was ` +
                `requested, none attached to a record: cannot tell which is its call`
            )
          }
          if (candidates.length === 1) {
            const call = candidates[0]!
            const applied = yield* repo.applyStatus(key, updateOf(call, record), now).pipe(
              Effect.mapError(sqlUnavailable)
            )
            if (applied === "unknown") return yield* unavailable(`the record of ${key} changed while it was resolved`)
            return yield* find(key)
          }
          if (now - record.requestedAt < options.createSettledMs) {
            return yield* unavailable(`${key}'s create request may still be in flight`)
          }
          const released = yield* repo.release(key).pipe(Effect.mapError(sqlUnavailable))
          // not released: a callback or the dial attached a call meanwhile; answer from the record
          return released ? Option.none<TwilioCallRecord>() : yield* find(key)
        })

      /**
       * Hang-up on cancel (decision 0605): a call not answered yet whose batch was cancelled is ended
       * through the API (`Status=canceled`), once; Twilio's `canceled` callback then ends the record as usual. An
       * answered call goes on: a cancel stops what has not started, a conversation in progress finishes (0533).
       */
      const cancelIfBatchCancelled = (record: TwilioCallRecord, sid: string, batchCallId: BatchCallId) =>
        Effect.gen(function*() {
          if (!(yield* repo.batchCancelled(batchCallId).pipe(Effect.mapError(sqlUnavailable)))) return false
          const notEnded = (error: string) =>
            Effect.logWarning("batch cancelled: ringing call could not be ended").pipe(
              Effect.annotateLogs({ key: record.idempotencyKey, sid, error })
            )
          yield* client.cancel(sid).pipe(
            Effect.flatMap((call) =>
              // Status=canceled does "not affect calls already in progress"
              // (https://www.twilio.com/docs/api/rest/change-call-state); Twilio may say so with the call unchanged
              call.status === "in-progress"
                ? notEnded("Twilio left the call in-progress: it was answered before the cancel")
                : Effect.logInfo("batch cancelled: ringing call ended").pipe(
                  Effect.annotateLogs({ key: record.idempotencyKey, sid, batchCallId })
                )
            ),
            // the call may have been answered or ended meanwhile (Twilio refuses to cancel it): nothing to undo
            Effect.catch((error) => notEnded(error.message))
          )
          return true
        })

      /** Waits until the record of `key` is terminal (rule 2). */
      const awaitEnd = (key: string, batchCallId?: BatchCallId) =>
        Effect.gen(function*() {
          let lastFetch = yield* Clock.currentTimeMillis
          let cancelSent = false
          return yield* wakeups.until(
            key,
            options.pollMs,
            Effect.gen(function*() {
              const found = yield* find(key)
              if (Option.isNone(found)) {
                return yield* unavailable(`the record of ${key} was freed while its dial waited`)
              }
              const record = found.value
              if (record.status === "rejected") {
                return yield* new DialRejected({
                  idempotency_key: key,
                  reason: record.rejection ?? "rejected",
                  message: `Twilio refused the call of ${key}: ${record.rejection ?? "rejected"}`
                })
              }
              if (isTerminal(record.status)) return Option.some(toCallEnded(record))
              if (
                !cancelSent && batchCallId !== undefined && record.callSid !== null &&
                rank(record.status) < rank("in-progress")
              ) {
                cancelSent = yield* cancelIfBatchCancelled(record, record.callSid, batchCallId)
              }
              const now = yield* Clock.currentTimeMillis
              if (record.callSid === null) {
                // joined another dial's request that never finished (its worker died): only lookup resolves it
                if (now - record.requestedAt >= options.createSettledMs) {
                  return yield* unavailable(`${key}'s create request did not finish; lookup resolves it`)
                }
              } else if (now - Math.max(record.updatedAt, lastFetch) >= options.fetchAfterMs) {
                lastFetch = now
                yield* refresh(record, record.callSid)
                return Option.none<CallEnded>()
              }
              return Option.none<CallEnded>()
            })
          )
        })

      /**
       * Sends the create request of a reserved key, and attaches the SID. Run uninterruptibly except for the waits
       * after a 429 (`restore`): a shutdown never cuts between a create and the write of its SID, and never waits
       * out a back-off (no request is in flight then; `lookup` frees the key once it has settled).
       */
      const create = (
        request: DialRequest,
        twiml: string,
        restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
      ) =>
        Effect.gen(function*() {
          const key = request.idempotency_key
          for (let rateLimited = 0;; rateLimited++) {
            const result = yield* client.create({
              to: request.to_number,
              from: request.from_number,
              twiml,
              statusCallback: statusCallbackUrl(settings.publicUrl, key),
              machineDetection: settings.machineDetection,
              ringTimeoutS: settings.ringTimeoutS
            }).pipe(Effect.result)
            const now = yield* Clock.currentTimeMillis
            if (result._tag === "Success") {
              const attached = yield* repo.attachSid(key, result.success.sid, result.success.status, now).pipe(
                Effect.mapError(sqlUnavailable)
              )
              if (attached === "unknown") {
                // the record was freed while the request was out (a lookup wrongly judged it settled): say so loudly
                yield* Effect.logError("twilio call created for a freed record").pipe(
                  Effect.annotateLogs({ key, sid: result.success.sid })
                )
                return yield* unavailable(
                  `the record of ${key} was freed while its call ${result.success.sid} was created`
                )
              }
              return
            }
            const error = result.failure
            const failure = createFailure(error.httpStatus, error.code)
            switch (failure._tag) {
              case "Refused": {
                const reason = `${failure.reason} (Twilio error ${error.code})`
                yield* repo.markRejected(key, reason, now).pipe(Effect.mapError(sqlUnavailable))
                return yield* new DialRejected({ idempotency_key: key, reason, message: error.message })
              }
              case "RateLimited": {
                if (rateLimited + 1 >= options.maxRateLimited) {
                  yield* repo.release(key).pipe(Effect.mapError(sqlUnavailable))
                  return yield* unavailable(`Twilio answered 429 ${rateLimited + 1} times: ${error.message}`)
                }
                const base = Math.min(options.backoffMs * 2 ** rateLimited, options.backoffMaxMs)
                yield* pacer.backoff(account, Math.round(base + (yield* Random.nextBetween(0, base))))
                yield* restore(pacer.acquire(account))
                continue
              }
              case "NotCreated": {
                yield* repo.release(key).pipe(Effect.mapError(sqlUnavailable))
                return yield* unavailable(error.message)
              }
              case "MayExist": {
                yield* pacer.backoff(account, Math.round(yield* Random.nextBetween(0, options.backoffMs)))
                return yield* unavailable(`${error.message}; the call may exist, lookup resolves it`)
              }
            }
          }
        })

      return Dialer.of({
        dial: Effect.fn("TwilioDialer.dial")(function*(request: DialRequest) {
          const key = request.idempotency_key
          const twiml = yield* callTwiml(request, settings.sipServer).pipe(
            Effect.mapError((e) =>
              new DialRejected({ idempotency_key: key, reason: "invalid_sip_headers", message: e.message })
            )
          )
          yield* pacer.acquire(account)
          const now = yield* Clock.currentTimeMillis
          const reserved = yield* repo.reserve({
            idempotencyKey: key,
            callId: request.call_id,
            accountSid: account,
            fromNumber: request.from_number,
            toNumber: request.to_number
          }, now).pipe(Effect.mapError(sqlUnavailable))
          if (reserved.inserted) yield* Effect.uninterruptibleMask((restore) => create(request, twiml, restore))
          return yield* awaitEnd(key, request.batch_call_id)
        }),
        lookup: Effect.fn("TwilioDialer.lookup")(function*(key: string) {
          let found = yield* find(key)
          if (Option.isSome(found) && found.value.status === "requesting") {
            found = yield* resolveRequesting(found.value)
          }
          if (Option.isNone(found) || found.value.status === "rejected") return Option.none<CallLookup>()
          const record = found.value
          if (isTerminal(record.status)) return Option.some<CallLookup>(toCallEnded(record))
          return Option.some<CallLookup>({
            _tag: "CallOngoing",
            idempotency_key: key,
            call_id: record.callId,
            start_timestamp: record.startTimestamp ?? record.requestedAt
          })
        })
      })
    })
  )

/**
 * The adapter as configured: the SDK's client on api.twilio.com, the record in PostgreSQL.
 *
 * @category layers
 */
export const layer = (
  settings: TwilioSettings,
  options: TwilioDialerOptions = defaultOptions
): Layer.Layer<Dialer, never, SqlClient.SqlClient | CarrierPacer> =>
  layerWith(settings, options).pipe(
    Layer.provide(TwilioClient.layer(settings)),
    Layer.provide(TwilioCallsRepo.layer)
  )
