/**
 * Knowing when the pacers' round trips to their store are over, for the TestClock scenarios: between two moves of
 * the clock every acquirer must have reached its sleep (its `take` answered) or its end (its `pausedUntil`
 * answered). A fixed 250 ms of real time stood for that and was a bet on the machine: a round trip slower than it
 * under CI's load would have let the clock move before a sleep began. Now `settle` waits for the stores to have
 * nothing in flight, however long that takes (bounded, failing with what it waited for).
 */
import { Effect } from "effect"
import type { SlotStore } from "../../src/carrier/SlotPacer.ts"
import { liveSleep, waitUntil } from "../fixtures/Waiting.ts"

// Operations in flight over every watched store of the test file (its tests run one at a time).
let inFlight = 0

const counted = <A, E, R>(operation: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    inFlight++
    return operation.pipe(Effect.ensuring(Effect.sync(() => inFlight--)))
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
 * Lets the fibers woken or forked since the last move of the TestClock start their store operations (a turn of
 * real time), waits until no operation is in flight, then lets the fibers they answered reach their sleep or end.
 */
export const settle = Effect.gen(function*() {
  yield* liveSleep(20)
  yield* waitUntil("the pacers' store operations to finish", Effect.sync(() => inFlight === 0), {
    timeoutMs: 10_000,
    everyMs: 5
  })
  yield* liveSleep(20)
})
