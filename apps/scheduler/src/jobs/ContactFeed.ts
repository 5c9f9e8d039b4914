/**
 * Calls feed contacts (decision 0401): applies recorded calls to their contacts (`conversation_count`,
 * `last_conversation_timestamp`, a new contact for an unknown number) from the `contact_feed` outbox, in batches,
 * off the dispatch path (CallsRepo explains why). Every worker runs it; one at a time feeds (an advisory lock), the
 * others find it busy and look again after a pause.
 */
import { CallsRepo } from "@svc/store/calls/CallsRepo.ts"
import { Clock, Effect } from "effect"
import * as Retrying from "../runtime/Retrying.ts"

/** Calls applied per statement. */
export const FEED_CHUNK = 2_000

/** Pause when the outbox is empty: contacts trail their calls by about this much. */
export const FEED_IDLE_MS = 200

/**
 * Applies everything queued so far, unless another worker is feeding; returns how many calls it applied.
 *
 * @category constructors
 */
export const drain = Effect.fn("ContactFeed.drain")(function*() {
  const calls = yield* CallsRepo
  let total = 0
  for (;;) {
    const fed = yield* calls.feedContacts(FEED_CHUNK, yield* Clock.currentTimeMillis)
    if (fed === undefined) return total
    total += fed
    if (fed < FEED_CHUNK) return total
  }
})

/**
 * Drains the outbox, pauses while it is empty, until interrupted.
 *
 * @category constructors
 */
export const loop = Effect.gen(function*() {
  yield* drain()
  yield* Effect.sleep(FEED_IDLE_MS)
}).pipe(Retrying.forever("feeding calls to contacts"))
