/**
 * The process's budget of request-body bytes in flight (decision 0303): every request holds, while it runs, the
 * bytes its `Content-Length` declares (or, for a body sent without one, what it may still send or has streamed);
 * a request that does not fit is refused at once with a 503 instead of being read (BodyLimits.ts). The budget
 * is what keeps a few large uploads at once from exhausting the machine, whatever each endpoint's own limit.
 *
 * The count is a plain number: JavaScript runs one fiber at a time, so `tryTake`'s check and add cannot
 * interleave with another request's.
 */
import { Config, Context, Effect, Layer, Metric } from "effect"

/**
 * `SVC_MAX_INFLIGHT_BODY_BYTES`: 1 GiB by default, four batches at create-batch-call's limit (256 MiB).
 *
 * @category models
 */
export const InflightBodyBytes = Config.withDefault(Config.Int("SVC_MAX_INFLIGHT_BODY_BYTES"), 1024 * 1024 * 1024)

const inFlight = Metric.gauge("svc_http_inflight_body_bytes", {
  description: "Request-body bytes held by requests in flight (declared or streamed), against the budget"
})

/** @category services */
export class BodyBudget extends Context.Service<BodyBudget, {
  /** The budget's size in bytes (`SVC_MAX_INFLIGHT_BODY_BYTES`). */
  readonly capacity: number
  /** Takes `bytes` when they fit in what is left and answers `true`; otherwise takes nothing and answers `false`. */
  readonly tryTake: (bytes: number) => Effect.Effect<boolean>
  /** Gives back bytes taken earlier. */
  readonly release: (bytes: number) => Effect.Effect<void>
  /** Bytes taken now. */
  readonly inUse: Effect.Effect<number>
}>()("@svc/server/http/BodyBudget") {
  /**
   * A budget of `capacity` bytes.
   *
   * @category constructors
   */
  static readonly make = (capacity: number): BodyBudget["Service"] => {
    let used = 0
    const report = Effect.suspend(() => Metric.update(inFlight, used))
    return BodyBudget.of({
      capacity,
      tryTake: (bytes) =>
        Effect.suspend(() => {
          if (bytes <= 0) return Effect.succeed(true)
          if (used + bytes > capacity) return Effect.succeed(false)
          used += bytes
          return Effect.as(report, true)
        }),
      release: (bytes) =>
        Effect.suspend(() => {
          if (bytes <= 0) return Effect.void
          used = Math.max(0, used - bytes)
          return report
        }),
      inUse: Effect.sync(() => used)
    })
  }

  /**
   * The budget of `SVC_MAX_INFLIGHT_BODY_BYTES` bytes.
   *
   * @category layers
   */
  static readonly layer: Layer.Layer<BodyBudget, Config.ConfigError | Error> = Layer.effect(
    BodyBudget,
    Effect.gen(function*() {
      const capacity = yield* InflightBodyBytes
      if (!Number.isSafeInteger(capacity) || capacity < 1) {
        return yield* Effect.fail(
          new Error(`SVC_MAX_INFLIGHT_BODY_BYTES must be a number of bytes >= 1 (got ${capacity})`)
        )
      }
      return BodyBudget.make(capacity)
    })
  )

  /**
   * A budget of `capacity` bytes.
   *
   * @category layers
   */
  static readonly layerTest = (capacity: number): Layer.Layer<BodyBudget> =>
    Layer.sync(BodyBudget, () => BodyBudget.make(capacity))
}
