/**
 * Admission control in front of the connection pool (issue 17, item 2, "Overload without collapse"; decision
 * 0546). Without it, every request a client sends is accepted and waits in the pool's queue: at 16 times the
 * saturation concurrency every request waits 16 times as long, and none is answered in time. With it:
 *
 * - at most `SVC_HTTP_MAX_IN_FLIGHT` requests run at once (default 2 × `SVC_DB_MAX_CONNECTIONS`: enough to keep
 *   the pool busy while half of them are in Node encoding or decoding);
 * - up to `SVC_HTTP_MAX_QUEUED` more wait, first come first served, at most `SVC_HTTP_QUEUE_TIMEOUT_MS`;
 * - everything beyond is answered at once, 503 in the error shape with `Retry-After: 1`, before its body is read:
 *   the vendor's clients retry 5xx after the delay, and an operator sees `svc_http_admission_rejected_total`.
 *
 * Health, readiness, metrics and the docs are never held back (operators need them most under load), and
 * `SVC_HTTP_MAX_IN_FLIGHT=0` turns the gate off. The counts are plain numbers: JavaScript runs one fiber at a
 * time, so a check and its update cannot interleave with another request's.
 */
import { STATUS_CALLBACK_PATH } from "@svc/domain/carrier/TwilioStatusCallbackUrl.ts"
import { Config, Context, Duration, Effect, Layer, Metric, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"

/** @category models */
export interface AdmissionLimits {
  /** Requests running at once; 0 turns admission control off. */
  readonly maxInFlight: number
  /** Requests waiting for a slot at once; beyond them a request is refused without waiting. */
  readonly maxQueued: number
  /** How long a request waits for a slot before it is refused. */
  readonly queueTimeoutMs: number
}

/** Seconds a refused client is told to wait. */
export const RETRY_AFTER_SECONDS = 1

/**
 * Paths that are always admitted: cheap ones operators need under load, and the carrier's status callbacks (Twilio
 * does not retry a refused callback; a lost one costs the dialer a fetch of the call later, decision 0606).
 */
const ALWAYS_ADMITTED = new Set(["/healthz", "/readyz", "/metrics", "/docs", "/openapi.json", STATUS_CALLBACK_PATH])

const rejected = Metric.counter("svc_http_admission_rejected_total", {
  description: "Requests refused with 503 by admission control (all slots and the queue full, or waited too long)"
})

interface Waiter {
  granted: boolean
  readonly grant: () => void
}

/** @category services */
export class Admission extends Context.Service<Admission, {
  readonly limits: AdmissionLimits
  /** Takes a slot, waiting in the queue if there is room; `false` when the request must be refused. */
  readonly admit: Effect.Effect<boolean>
  /** Gives a slot back (to the first waiter, if any). */
  readonly release: Effect.Effect<void>
  /** Requests running and waiting now. */
  readonly snapshot: () => { readonly inFlight: number; readonly queued: number }
}>()("@svc/server/http/Admission") {
  /**
   * A gate with the given limits.
   *
   * @category constructors
   */
  static readonly make = (limits: AdmissionLimits): Admission["Service"] => {
    let inFlight = 0
    const waiters: Array<Waiter> = []

    const releaseNow = () => {
      const next = waiters.shift()
      if (next === undefined) {
        inFlight--
        return
      }
      // the slot passes straight to the first waiter: inFlight stays as it is
      next.granted = true
      next.grant()
    }

    const wait = Effect.callback<boolean>((resume) => {
      const waiter: Waiter = { granted: false, grant: () => resume(Effect.succeed(true)) }
      waiters.push(waiter)
      return Effect.sync(() => {
        // interrupted (timed out, or the client went away): leave the queue, or pass on a slot granted meanwhile
        if (waiter.granted) releaseNow()
        else waiters.splice(waiters.indexOf(waiter), 1)
      })
    })

    const timeout = Duration.millis(limits.queueTimeoutMs)

    return Admission.of({
      limits,
      admit: Effect.suspend((): Effect.Effect<boolean> => {
        if (limits.maxInFlight === 0) return Effect.succeed(true)
        if (inFlight < limits.maxInFlight && waiters.length === 0) {
          inFlight++
          return Effect.succeed(true)
        }
        if (waiters.length >= limits.maxQueued || limits.queueTimeoutMs === 0) return Effect.succeed(false)
        return wait.pipe(Effect.timeoutOption(timeout), Effect.map(Option.isSome))
      }),
      release: Effect.sync(() => {
        if (limits.maxInFlight !== 0) releaseNow()
      }),
      snapshot: () => ({ inFlight, queued: waiters.length })
    })
  }

  /**
   * The gate with the configured limits.
   *
   * @category layers
   */
  static readonly layer: Layer.Layer<Admission, Config.ConfigError | Error> = Layer.effect(
    Admission,
    Effect.gen(function*() {
      const pool = yield* Config.withDefault(Config.Int("SVC_DB_MAX_CONNECTIONS"), 10)
      const limits = yield* Config.all({
        maxInFlight: Config.withDefault(Config.Int("SVC_HTTP_MAX_IN_FLIGHT"), 2 * pool),
        maxQueued: Config.withDefault(Config.Int("SVC_HTTP_MAX_QUEUED"), 2 * pool),
        queueTimeoutMs: Config.withDefault(Config.Int("SVC_HTTP_QUEUE_TIMEOUT_MS"), 100)
      })
      for (
        const [setting, value] of [
          ["SVC_HTTP_MAX_IN_FLIGHT", limits.maxInFlight],
          ["SVC_HTTP_MAX_QUEUED", limits.maxQueued],
          ["SVC_HTTP_QUEUE_TIMEOUT_MS", limits.queueTimeoutMs]
        ] as const
      ) {
        if (value < 0) return yield* Effect.fail(new Error(`${setting} must be an integer >= 0 (got ${value})`))
      }
      return Admission.make(limits)
    })
  )
}

const refusal = (limits: AdmissionLimits) =>
  HttpServerResponse.jsonUnsafe(
    {
      status: "error",
      message: `server busy: ${limits.maxInFlight} requests running and ${limits.maxQueued} waiting ` +
        `(SVC_HTTP_MAX_IN_FLIGHT, SVC_HTTP_MAX_QUEUED); retry in ${RETRY_AFTER_SECONDS} s`
    },
    { status: 503, headers: { "retry-after": String(RETRY_AFTER_SECONDS) } }
  )

/**
 * The middleware over a gate (tests build it directly).
 *
 * @category constructors
 */
export const middleware = (gate: Admission["Service"]) =>
  HttpRouter.middleware(
    (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const path = request.url.split("?")[0] ?? request.url
        if (gate.limits.maxInFlight === 0 || ALWAYS_ADMITTED.has(path)) return yield* httpEffect
        if (!(yield* gate.admit)) {
          yield* Metric.update(rejected, 1)
          return refusal(gate.limits)
        }
        return yield* Effect.ensuring(httpEffect, gate.release)
      }),
    { global: true }
  )

/** @category layers */
export const layer = Layer.unwrap(Effect.gen(function*() {
  return middleware(yield* Admission)
})).pipe(
  Layer.provide(Admission.layer)
)
