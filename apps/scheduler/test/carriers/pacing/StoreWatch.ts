/**
 * Knowing when the pacers are at rest, for the TestClock scenarios: the clock may only move once every acquirer is
 * asleep on it (waiting for its slot) or finished, with no round trip to the store in flight. A move made while an
 * acquirer is still between two steps (its `take` unanswered, or answered and its sleep not begun) would hand it a
 * later "now" than the schedule meant, and the test would check a schedule the product never keeps.
 *
 * A fixed 250 ms of real time stood for that once, then two 20 ms "turns" around a wait for no store operation in
 * flight: both bets on the machine. Now both halves are counted: `watched` counts the store operations in flight,
 * `countedSleeps` counts the sleeps begun on the Clock, and `settle` waits (bounded, failing with what it saw) until
 * every live acquirer is one of the sleepers, however long the machine takes.
 */
import { liveSleep, waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import { Clock, Context, Effect, type Fiber } from "effect"
import type { SlotStore } from "../../../src/carriers/pacing/SlotPacer.ts"

// Counts over every watched store and counted clock of the test file (its tests run one at a time).
let inFlight = 0
let sleeping = 0
let sleepingInStore = 0

/** Set while a store operation runs: a sleep inside one (its timeout) is not an acquirer waiting for its slot. */
const InStoreOperation = Context.Reference<boolean>("svc/test/carrier/StoreWatch/InStoreOperation", {
  defaultValue: () => false
})

const counted = <A, E, R>(operation: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    inFlight++
    return operation.pipe(
      Effect.provideService(InStoreOperation, true),
      Effect.ensuring(Effect.sync(() => inFlight--))
    )
  })

/** `store`, its operations counted for `settle`. */
export const watched = (store: SlotStore): SlotStore => ({
  take: (account, nowUs, intervalUs) => counted(store.take(account, nowUs, intervalUs)),
  pause: (account, nowUs, untilUs) => counted(store.pause(account, nowUs, untilUs)),
  pausedUntil: (account) => counted(store.pausedUntil(account))
})

/** `store` answering `ms` of real time late, every operation (a loaded database or a slow network). */
export const slowed = (store: SlotStore, ms: number): SlotStore => ({
  take: (account, nowUs, intervalUs) => Effect.andThen(liveSleep(ms), store.take(account, nowUs, intervalUs)),
  pause: (account, nowUs, untilUs) => Effect.andThen(liveSleep(ms), store.pause(account, nowUs, untilUs)),
  pausedUntil: (account) => Effect.andThen(liveSleep(ms), store.pausedUntil(account))
})

/**
 * Runs `self` with the Clock it finds (the TestClock) wrapped so that every sleep is counted while it lasts: the
 * acquirers' sleeps until their slots in `sleeping`, sleeps inside a store operation (its timeout) apart. The
 * TestClock's own operations (`adjust`, `setTime`) are the wrapped clock's, unchanged.
 */
export const countedSleeps = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Clock.clockWith((clock) =>
    Effect.provideService(self, Clock.Clock, {
      ...clock,
      sleep: (duration) =>
        Effect.gen(function*() {
          const inStore = yield* InStoreOperation
          if (inStore) sleepingInStore++
          else sleeping++
          return yield* clock.sleep(duration).pipe(Effect.ensuring(Effect.sync(() => {
            if (inStore) sleepingInStore--
            else sleeping--
          })))
        })
    })
  )

const alive = (fibers: ReadonlyArray<Fiber.Fiber<unknown, unknown>>) =>
  fibers.filter((fiber) => fiber.pollUnsafe() === undefined).length

const atRest = (fibers: ReadonlyArray<Fiber.Fiber<unknown, unknown>>) => inFlight === 0 && sleeping === alive(fibers)

/**
 * Waits until every fiber of `fibers` (the acquirers the scenario forked) is asleep on the counted clock or done,
 * and no store operation is in flight. The condition is checked again after a turn of the scheduler, so that a
 * fiber counted as asleep has registered its sleep with the TestClock before the clock moves.
 */
export const settle = (fibers: ReadonlyArray<Fiber.Fiber<unknown, unknown>>) =>
  waitUntil(
    "every acquirer asleep until its slot or finished, and no store operation in flight",
    Effect.flatMap(Effect.sync(() => atRest(fibers)), (now) =>
      now ? Effect.map(Effect.yieldNow, () => atRest(fibers)) : Effect.succeed(false)),
    {
      timeoutMs: 10_000,
      everyMs: 2,
      state: () => ({ inFlight, sleeping, alive: alive(fibers) })
    }
  )

/**
 * Waits until `fiber` is done, or waits on a sleep inside a store operation (the operation's timeout is running on
 * the clock, so moving the clock past it must end the operation).
 */
export const doneOrTimingOut = (fiber: Fiber.Fiber<unknown, unknown>) =>
  waitUntil(
    "the acquire to end, or its store operation's timeout to start on the clock",
    Effect.sync(() => fiber.pollUnsafe() !== undefined || sleepingInStore > 0),
    { timeoutMs: 10_000, everyMs: 2, state: () => ({ inFlight, sleepingInStore }) }
  )
