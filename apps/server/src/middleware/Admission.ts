/**
 * Admission control in front of the connection pool (decisions 0546
 * and 0547). Without it, every request a client sends is accepted and waits in the pool's queue: at 16 times the
 * saturation concurrency every request waits 16 times as long, and none is answered in time. With it:
 *
 * - at most `SVC_HTTP_MAX_IN_FLIGHT` requests run at once (default 2 × `SVC_DB_MAX_CONNECTIONS`: enough to keep
 *   the pool busy while half of them are in Node encoding or decoding);
 * - the others wait, first come first served. A waiting request holds a parked socket, not its body (the body is
 *   read once it runs), so the queue is not bounded by a count of requests but by time: a request is queued
 *   while the work ahead of it, sized by what each request costs, can be done within `SVC_HTTP_QUEUE_TIMEOUT_MS`
 *   (default 5 s) at the service time measured on recent requests, and refused at once otherwise; a request
 *   that has waited that long is refused then. `SVC_HTTP_MAX_QUEUED` bounds the parked sockets' memory and
 *   file descriptors (default: a sixteenth of the heap limit at ~12 KiB each, at most half the open-files limit;
 *   decision 0547: a burst of 50 small create-batch-calls got 14 refusals from a queue of 20 that
 *   waited 100 ms);
 * - a refusal is a 503 in the error shape with `Retry-After: 1`, before the body is read, saying how many
 *   requests run and wait and why this one was refused: the vendor's clients retry 5xx after the delay, and an
 *   operator sees `svc_http_admission_rejected_total`.
 *
 * A request's cost is one unit per started 64 KiB of its declared body (the small endpoints' limit, so every
 * small request costs 1): a large create-batch-call holds its slot for as long as its upload takes.
 *
 * Health, readiness, metrics and the docs are never held back (operators need them most under load), and
 * `SVC_HTTP_MAX_IN_FLIGHT=0` turns the gate off. The counts are plain numbers: JavaScript runs one fiber at a
 * time, so a check and its update cannot interleave with another request's.
 */
import * as ErrorBody from "@svc/api/ErrorBody.ts"
import { STATUS_CALLBACK_PATH } from "@svc/domain/carrier/TwilioStatusCallbackUrl.ts"
import { Clock, Config, Context, Duration, Effect, Layer, Metric, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as fs from "node:fs"
import * as v8 from "node:v8"

/** @category models */
export interface AdmissionLimits {
  /** Requests running at once; 0 turns admission control off. */
  readonly maxInFlight: number
  /** Requests waiting for a slot at once; beyond them a request is refused without waiting. */
  readonly maxQueued: number
  /** How long a request may wait for a slot: longer expected, refused at once; longer waited, refused then. */
  readonly queueTimeoutMs: number
}

/** Seconds a refused client is told to wait. */
export const RETRY_AFTER_SECONDS = 1

/** `SVC_HTTP_QUEUE_TIMEOUT_MS` by default: the longest a request waits for a slot (decision 0547). */
export const DEFAULT_QUEUE_TIMEOUT_MS = 5_000

/** Heap a parked request holds (measured ~12 KiB: tools/bench/admissionQueue.bench.ts, docs/benchmarks.md). */
export const PARKED_REQUEST_BYTES = 12 * 1024

/** The process's soft limit of open files (`/proc/self/limits`), or undefined where it cannot be read. */
export const openFilesLimit = (): number | undefined => {
  try {
    const line = fs.readFileSync("/proc/self/limits", "utf8").split("\n").find((l) => l.startsWith("Max open files"))
    const soft = Number(line?.slice("Max open files".length).trim().split(/\s+/)[0])
    return Number.isInteger(soft) && soft > 0 ? soft : undefined
  } catch {
    return undefined
  }
}

/**
 * `SVC_HTTP_MAX_QUEUED` by default, from what parked requests hold: a sixteenth of V8's heap limit at
 * {@link PARKED_REQUEST_BYTES} each, and at most half the open-files limit (each holds a socket; the pool and the
 * running requests need the rest). 10,000 on the project machine (4 GiB heap limit, 20,000 files).
 */
export const defaultMaxQueued = (heapLimit: number, files: number | undefined): number => {
  const byMemory = Math.floor(heapLimit / 16 / PARKED_REQUEST_BYTES)
  return Math.max(1, files === undefined ? byMemory : Math.min(byMemory, Math.floor(files / 2)))
}

/** Body bytes per cost unit: the small endpoints' limit (SVC_MAX_SMALL_BODY_BYTES), so each of their requests is 1. */
export const COST_UNIT_BYTES = 64 * 1024

/** A request's cost in units: one, plus one per started 64 KiB of declared body beyond the first. */
export const costOf = (declaredBytes: number): number =>
  Math.max(1, Math.ceil((Number.isFinite(declaredBytes) ? declaredBytes : 0) / COST_UNIT_BYTES))

/** Weight of the newest service-time sample in the running estimate. */
const SAMPLE_WEIGHT = 0.1
/** A sample counts at most this many times the estimate: one stalled request must not shed everybody. */
const SAMPLE_CAP = 4

/**
 * Paths that are always admitted: cheap ones operators need under load, and the carrier's status callbacks (Twilio
 * does not retry a refused callback; a lost one costs the dialer a fetch of the call later, decision 0606).
 */
const ALWAYS_ADMITTED = new Set(["/healthz", "/readyz", "/metrics", "/docs", "/openapi.json", STATUS_CALLBACK_PATH])

const rejected = Metric.counter("svc_http_admission_rejected_total", {
  description:
    "Requests refused with 503 by admission control (the queue full, too much work ahead, or waited too long)"
})
const runningGauge = Metric.gauge("svc_http_admission_running", {
  description: "Requests running under admission control"
})
const waitingGauge = Metric.gauge("svc_http_admission_waiting", {
  description: "Requests waiting for a slot under admission control"
})

/** Why a request was refused, with the numbers at that moment (the 503's message says them). */
export type Refusal =
  | { readonly reason: "queue full"; readonly running: number; readonly waiting: number }
  | {
    readonly reason: "too much work ahead"
    readonly running: number
    readonly waiting: number
    /** The wait expected for this request, from the measured service time. */
    readonly expectedMs: number
  }
  | { readonly reason: "waited too long"; readonly running: number; readonly waiting: number }

/** A running request: give its slot back with `done` (its service time then counts in the estimate). */
export interface Ticket {
  readonly done: Effect.Effect<void>
}

export type Entry = { readonly admitted: true; readonly ticket: Ticket } | {
  readonly admitted: false
  readonly refusal: Refusal
}

interface Waiter {
  readonly cost: number
  granted: boolean
  readonly grant: () => void
}

/** @category services */
export class Admission extends Context.Service<Admission, {
  readonly limits: AdmissionLimits
  /** Takes a slot for a request of `declaredBytes`, waiting in the queue when the work ahead allows. */
  readonly enter: (declaredBytes: number) => Effect.Effect<Entry>
  /** `enter` for a small request, without the service-time sample: `false` when it must be refused. */
  readonly admit: Effect.Effect<boolean>
  /** Gives a slot taken with `admit` back (to the first waiter, if any). */
  readonly release: Effect.Effect<void>
  /** Requests running and waiting now. */
  readonly snapshot: () => { readonly inFlight: number; readonly queued: number }
  /** The measured service time per cost unit (ms), once a request has finished. */
  readonly serviceMsPerUnit: () => number | undefined
}>()("@svc/server/http/Admission") {
  /**
   * A gate with the given limits.
   *
   * @category constructors
   */
  static readonly make = (
    limits: AdmissionLimits,
    /** Told the counts after every change (the layer sets the gauges from it). */
    onChange: (inFlight: number, queued: number) => void = () => {}
  ): Admission["Service"] => {
    let inFlight = 0
    const waiters: Array<Waiter> = []
    let waitingCost = 0
    let msPerUnit: number | undefined

    const leaveQueue = (waiter: Waiter) => {
      const at = waiters.indexOf(waiter)
      if (at < 0) return
      waiters.splice(at, 1)
      waitingCost -= waiter.cost
    }

    const changed = () => onChange(inFlight, waiters.length)

    const releaseNow = () => {
      const next = waiters[0]
      if (next === undefined) {
        inFlight--
        return changed()
      }
      // the slot passes straight to the first waiter: inFlight stays as it is
      leaveQueue(next)
      next.granted = true
      changed()
      next.grant()
    }

    const wait = (cost: number) =>
      Effect.callback<boolean>((resume) => {
        const waiter: Waiter = { cost, granted: false, grant: () => resume(Effect.succeed(true)) }
        waiters.push(waiter)
        waitingCost += cost
        changed()
        return Effect.sync(() => {
          // interrupted (timed out, or the client went away): leave the queue, or pass on a slot granted meanwhile
          if (waiter.granted) releaseNow()
          else {
            leaveQueue(waiter)
            changed()
          }
        })
      })

    const timeout = Duration.millis(limits.queueTimeoutMs)

    /**
     * The wait expected for a request of `cost` arriving now: the work queued ahead and its own first unit,
     * spread over the slots, at the measured time per unit. Unknown (0) until a request has finished.
     */
    const expectedWaitMs = (cost: number) =>
      msPerUnit === undefined ? 0 : ((waitingCost + Math.min(cost, 1)) * msPerUnit) / Math.max(1, limits.maxInFlight)

    const sample = (ms: number, cost: number) => {
      const perUnit = Math.max(0, ms) / cost
      msPerUnit = msPerUnit === undefined
        ? perUnit
        : msPerUnit + SAMPLE_WEIGHT * (Math.min(perUnit, SAMPLE_CAP * msPerUnit) - msPerUnit)
    }

    const ticketFor = (cost: number, started: number): Ticket => {
      let done = false
      return {
        done: Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.sync(() => {
            if (done) return
            done = true
            sample(now - started, cost)
            releaseNow()
          }))
      }
    }

    const off: Entry = { admitted: true, ticket: { done: Effect.void } }

    const enter = (declaredBytes: number): Effect.Effect<Entry> =>
      Effect.suspend((): Effect.Effect<Entry> => {
        if (limits.maxInFlight === 0) return Effect.succeed(off)
        const cost = costOf(declaredBytes)
        const refuse = (reason: Refusal["reason"], expectedMs = 0): Entry => ({
          admitted: false,
          refusal: reason === "too much work ahead"
            ? { reason, running: inFlight, waiting: waiters.length, expectedMs }
            : { reason, running: inFlight, waiting: waiters.length }
        })
        if (inFlight < limits.maxInFlight && waiters.length === 0) {
          inFlight++
          changed()
          return Effect.map(Clock.currentTimeMillis, (now) => ({ admitted: true, ticket: ticketFor(cost, now) }))
        }
        if (waiters.length >= limits.maxQueued || limits.queueTimeoutMs === 0) {
          return Effect.succeed(refuse("queue full"))
        }
        const expected = expectedWaitMs(cost)
        if (expected > limits.queueTimeoutMs) return Effect.succeed(refuse("too much work ahead", expected))
        return wait(cost).pipe(
          Effect.timeoutOption(timeout),
          Effect.flatMap((granted) =>
            Option.isSome(granted)
              ? Effect.map(Clock.currentTimeMillis, (now): Entry => ({ admitted: true, ticket: ticketFor(cost, now) }))
              : Effect.sync(() => refuse("waited too long"))
          )
        )
      })

    return Admission.of({
      limits,
      enter,
      admit: Effect.map(enter(0), (entry) => entry.admitted),
      release: Effect.sync(() => {
        if (limits.maxInFlight !== 0) releaseNow()
      }),
      snapshot: () => ({ inFlight, queued: waiters.length }),
      serviceMsPerUnit: () => msPerUnit
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
        maxQueued: Config.withDefault(
          Config.Int("SVC_HTTP_MAX_QUEUED"),
          defaultMaxQueued(v8.getHeapStatistics().heap_size_limit, openFilesLimit())
        ),
        queueTimeoutMs: Config.withDefault(Config.Int("SVC_HTTP_QUEUE_TIMEOUT_MS"), DEFAULT_QUEUE_TIMEOUT_MS)
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
      const context = yield* Effect.context<never>()
      return Admission.make(limits, (inFlight, queued) => {
        runningGauge.updateUnsafe(inFlight, context)
        waitingGauge.updateUnsafe(queued, context)
      })
    })
  )
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/** The 503's message: the real numbers at the moment of the refusal, and the setting that decided it. */
export const refusalMessage = (limits: AdmissionLimits, refusal: Refusal): string => {
  const state =
    `${plural(refusal.running, "request", "requests")} running (SVC_HTTP_MAX_IN_FLIGHT ${limits.maxInFlight})` +
    ` and ${refusal.waiting} waiting`
  const why = refusal.reason === "queue full"
    ? ` (SVC_HTTP_MAX_QUEUED ${limits.maxQueued})`
    : refusal.reason === "too much work ahead"
    ? `, about ${
      Math.round(refusal.expectedMs)
    } ms of work ahead of this request (SVC_HTTP_QUEUE_TIMEOUT_MS ${limits.queueTimeoutMs})`
    : `; this request waited ${limits.queueTimeoutMs} ms (SVC_HTTP_QUEUE_TIMEOUT_MS)`
  return `server busy: ${state}${why}; retry in ${RETRY_AFTER_SECONDS} s`
}

const refusal = (limits: AdmissionLimits, refused: Refusal) =>
  HttpServerResponse.jsonUnsafe(
    ErrorBody.make(refusalMessage(limits, refused)),
    { status: 503, headers: { "retry-after": String(RETRY_AFTER_SECONDS) } }
  )

/** The declared body size (`Content-Length`), 0 when none is declared (a chunked small body is within 64 KiB). */
const declaredBytes = (request: HttpServerRequest.HttpServerRequest) => {
  const declared = Number(request.headers["content-length"] ?? 0)
  return Number.isFinite(declared) && declared > 0 ? declared : 0
}

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
        const entry = yield* gate.enter(declaredBytes(request))
        if (!entry.admitted) {
          yield* Metric.update(rejected, 1)
          return refusal(gate.limits, entry.refusal)
        }
        return yield* Effect.ensuring(httpEffect, entry.ticket.done)
      }),
    { global: true }
  )

/** @category layers */
export const layer = Layer.unwrap(Effect.gen(function*() {
  return middleware(yield* Admission)
})).pipe(
  Layer.provide(Admission.layer)
)
