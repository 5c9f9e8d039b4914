/**
 * Carrier pacing (decision 0610): a carrier account accepts at most so many call-creation requests
 * per second (Twilio: 1 by default, up to 30 or more with an approved profile) and answers 429 beyond it. Every
 * worker of a deployment shares the account, so the pace is shared too: each call creation first takes a slot
 * from the pacer, and a 429 or 5xx from the carrier makes every worker hold off for a while.
 *
 * This file is the port; the shared implementations (PostgreSQL, or Redis when `REDIS_URL` is set) live beside it.
 * `layerUnpaced` is for adapters whose carrier has no rate limit (the simulated carrier).
 */
import type { DialerUnavailable } from "@svc/domain/ports/Dialer.ts"
import { Context, Effect, Layer } from "effect"

/**
 * @category services
 */
export class CarrierPacer extends Context.Service<CarrierPacer, {
  /**
   * Waits for the next call-creation slot of `account` (shared by every worker on that account), then returns.
   * Fails with `DialerUnavailable` when the shared state cannot be reached: no slot is taken, no call is placed.
   */
  readonly acquire: (account: string) => Effect.Effect<void, DialerUnavailable>
  /**
   * The carrier refused a request for its rate (429) or failed (5xx): no worker creates a call on `account` for
   * the next `ms` milliseconds (the caller picks `ms`, with jitter).
   */
  readonly backoff: (account: string, ms: number) => Effect.Effect<void>
}>()("@svc/scheduler/carrier/CarrierPacer") {
  /**
   * No pacing: every `acquire` returns at once. For carriers without a request rate (the simulated one).
   *
   * @category layers
   */
  static readonly layerUnpaced: Layer.Layer<CarrierPacer> = Layer.succeed(this, {
    acquire: () => Effect.void,
    backoff: () => Effect.void
  })
}
