/**
 * The pacing schedule shared by both stores (decision 0610): a GCRA, or leaky bucket with room for one. Per carrier
 * account the store keeps the start of the next free slot (`next_at`) and the end of a backoff (`paused_until`);
 * taking a slot at `now` is, atomically in the store,
 *
 *     slot = max(next_at, now, paused_until);  next_at = slot + interval
 *
 * so slots are never closer than one interval, whichever worker takes them: over any 1 s window at most ceil(cps)
 * call creations start. An idle account's first slot is `now` (no burst is saved up while idle).
 *
 * The acquirer then sleeps on Effect's `Clock` until its slot (tests pin time with `TestClock`; the store never
 * reads its own clock), and, when it had to sleep, checks that no backoff began meanwhile whose pause covers the
 * slot: if one did, the slot is dropped and a new one taken after the pause, so a 429 stops every worker, including
 * those already waiting. Times in the store are epoch microseconds (migration 0021 says why).
 */
import { DialerUnavailable } from "@svc/domain/ports/Dialer.ts"
import { Clock, Effect, Metric, Option } from "effect"
import { CarrierPacer } from "./CarrierPacer.ts"
import * as CarrierPacingConfig from "./CarrierPacingConfig.ts"
import * as CarrierPacingMetrics from "./CarrierPacingMetrics.ts"

/**
 * Where the schedule lives: every operation is one atomic round trip, failing with `DialerUnavailable` when the
 * store does not answer.
 *
 * @category models
 */
export interface SlotStore {
  /** Takes `account`'s next slot at `nowUs`, `intervalUs` wide; returns the slot's start (>= nowUs), epoch us. */
  readonly take: (account: string, nowUs: number, intervalUs: number) => Effect.Effect<number, DialerUnavailable>
  /** No slot of `account` starts before `untilUs` (a later pause already set wins); `nowUs` is the caller's time. */
  readonly pause: (account: string, nowUs: number, untilUs: number) => Effect.Effect<void, DialerUnavailable>
  /** The end of `account`'s latest pause (0 when never paused), epoch us. */
  readonly pausedUntil: (account: string) => Effect.Effect<number, DialerUnavailable>
}

/**
 * The pacer with the slot start visible, for tests and the benchmark (the port hides it).
 *
 * @category models
 */
export interface SlotPacer {
  /** Waits for `account`'s next slot; returns its start, epoch us. */
  readonly acquireSlot: (account: string) => Effect.Effect<number, DialerUnavailable>
  readonly backoff: (account: string, ms: number) => Effect.Effect<void>
}

// Late slots given up in a row before an acquire fails (start tolerance only).
const MAX_LATE_RETAKES = 5

/** @category constructors */
export const make = (store: SlotStore, settings: CarrierPacingConfig.CarrierPacingSettings): SlotPacer => {
  const tolerance = settings.startToleranceMs
  const intervalUs = CarrierPacingConfig.intervalMicros(settings.cps, Option.getOrElse(tolerance, () => 0))
  const acquireSlot = (account: string) =>
    Effect.gen(function*() {
      let waitedMs = 0
      let dropped = 0
      while (true) {
        const slotUs = yield* store.take(account, (yield* Clock.currentTimeMillis) * 1_000, intervalUs)
        // measured after the round trip: the sleep ends at the slot, not one round trip after it
        const waitMs = Math.ceil(slotUs / 1_000 - (yield* Clock.currentTimeMillis))
        if (waitMs > 0) {
          yield* Effect.sleep(waitMs)
          waitedMs += waitMs
          // A backoff set while this fiber slept, whose pause covers the slot: the carrier asked every worker to
          // hold off, so this slot is given up (a gap in the schedule) and one after the pause is taken instead.
          if ((yield* store.pausedUntil(account)) > slotUs) continue
        }
        if (Option.isSome(tolerance)) {
          // With a start tolerance, a call creation starts no later than `tolerance` after its slot: a later one
          // (a slow round trip, a starved timer) would bunch with the next slots, so the slot is given up and a
          // new one taken; bounded, so a store slower than the tolerance fails instead of retaking forever.
          const lateMs = (yield* Clock.currentTimeMillis) - slotUs / 1_000
          if (lateMs > tolerance.value) {
            yield* Metric.update(CarrierPacingMetrics.late, 1)
            if (++dropped >= MAX_LATE_RETAKES) {
              return yield* new DialerUnavailable({
                message: `carrier pacing for account ${account}: ${dropped} slots in a row started more than ` +
                  `${tolerance.value} ms late (SVC_CARRIER_START_TOLERANCE_MS); the worker or the store is too slow`
              })
            }
            continue
          }
        }
        yield* CarrierPacingMetrics.slot(waitedMs)
        return slotUs
      }
    }).pipe(Effect.tapError(() => Metric.update(CarrierPacingMetrics.unavailable, 1)))
  const backoff = (account: string, ms: number) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      yield* store.pause(account, now * 1_000, Math.round((now + Math.max(0, ms)) * 1_000))
      yield* Metric.update(CarrierPacingMetrics.backoffs, 1)
    }).pipe(
      // The port's backoff cannot fail: when the store is away the next acquire fails with DialerUnavailable
      // anyway, so no call is created during the outage, paced or not.
      Effect.catch((error) => Effect.logWarning(`carrier backoff on ${account} not recorded: ${error.message}`))
    )
  return { acquireSlot, backoff }
}

/**
 * The port over a store.
 *
 * @category constructors
 */
export const toPort = (pacer: SlotPacer) =>
  CarrierPacer.of({ acquire: (account) => Effect.asVoid(pacer.acquireSlot(account)), backoff: pacer.backoff })

/** Maps a store failure to the port's error, naming the store and the account. */
export const unavailable = (store: string, account: string) => (cause: unknown) =>
  new DialerUnavailable({
    message: `carrier pacing state in ${store} unreachable for account ${account}: ${
      cause instanceof Error ? cause.message : String(cause)
    }`
  })
