/**
 * The default `Dialer` adapter: a deterministic carrier simulation, so the whole flow runs on one machine
 * (decision 0401). It honours the port's contract (docs/dialer.md) with the simulated carrier's
 * records (`SchedulerSimulatedCarrier`) as the carrier's side:
 *
 * - What happens to a call is a pure function of the seed and the idempotency key: the outcome (answered, busy,
 *   no_answer, failed, by configurable weights), the reported duration and disconnection reason, and for
 *   answered calls post-call analysis data (`call_successful`, `user_sentiment`, `call_summary`,
 *   `interest_level`, `appointment_booked`). The same seed gives the same calls in every run and process.
 * - Each call occupies its line for `latencyMs` of real time (from the Clock, so tests move it), independent of
 *   the reported duration: a 4-minute conversation can take 2 s, or 0 s for benchmarks.
 * - Every dial is recorded by key; a second dial with a key joins the first call (never places another), and
 *   `lookup` answers from the records, ongoing until the line is free, then ended.
 */
import { fnv1a } from "@svc/domain/Fnv1a.ts"
import {
  type CallEnded,
  type CallLookup,
  Dialer,
  DialerUnavailable,
  type DialRequest
} from "@svc/domain/ports/Dialer.ts"
import { SchedulerSimulatedCarrier } from "@svc/store/carriers/simulated/SchedulerSimulatedCarrier.ts"
import { Clock, Effect, Layer, Option } from "effect"
import type { SqlClient } from "effect/sql"
import type { OutcomeWeights, SimulatedDialerSettings } from "../../runtime/SchedulerConfig.ts"

/** mulberry32: a small, well-mixed PRNG over a 32-bit state; numbers in [0, 1). */
const prng = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const pick = <A>(random: () => number, values: ReadonlyArray<A>): A => values[Math.floor(random() * values.length)]!
const between = (random: () => number, low: number, high: number) => Math.floor(low + random() * (high - low + 1))

const outcomeOf = (weights: OutcomeWeights, roll: number): CallEnded["outcome"] => {
  const total = weights.answered + weights.busy + weights.no_answer + weights.failed
  let at = roll * total
  for (const outcome of ["answered", "busy", "no_answer", "failed"] as const) {
    at -= weights[outcome]
    if (at < 0 && weights[outcome] > 0) return outcome
  }
  return weights.failed > 0 ? "failed" : weights.no_answer > 0 ? "no_answer" : weights.busy > 0 ? "busy" : "answered"
}

/**
 * The call the simulated carrier reports for `request` when placed at `placedAt`: deterministic in the seed and
 * the idempotency key (the request's other fields only say which agent handled it).
 *
 * @category constructors
 */
export const simulate = (
  settings: Pick<SimulatedDialerSettings, "seed" | "outcomes">,
  request: DialRequest,
  placedAt: number
): CallEnded => {
  const random = prng(fnv1a(`${settings.seed}:${request.idempotency_key}`))
  const outcome = outcomeOf(settings.outcomes, random())
  const duration = outcome === "answered"
    ? between(random, 20_000, 300_000)
    : outcome === "no_answer"
    ? between(random, 25_000, 45_000)
    : outcome === "busy"
    ? between(random, 2_000, 6_000)
    : between(random, 0, 2_000)
  const reason = outcome === "answered"
    ? pick(random, ["user_hangup", "agent_hangup"])
    : outcome === "busy"
    ? "dial_busy"
    : outcome === "no_answer"
    ? "dial_no_answer"
    : pick(random, ["dial_failed", "error_carrier"])
  const analysis: Record<string, string | number | boolean> = {}
  if (outcome === "answered") {
    const successful = random() < 0.55
    const sentiment = pick(random, ["Positive", "Neutral", "Negative"])
    const interest = between(random, 1, 5)
    analysis["call_successful"] = successful
    analysis["user_sentiment"] = sentiment
    analysis["interest_level"] = interest
    analysis["appointment_booked"] = successful && interest >= 4
    analysis["call_summary"] = `Spoke with the callee for ${
      Math.round(duration / 1000)
    } s; sentiment ${sentiment.toLowerCase()}, interest ${interest}/5${successful ? ", goal reached" : ""}.`
  }
  return {
    _tag: "CallEnded",
    idempotency_key: request.idempotency_key,
    call_id: request.call_id,
    outcome,
    start_timestamp: placedAt,
    end_timestamp: placedAt + duration,
    duration_ms: duration,
    disconnection_reason: reason,
    ...(request.override_agent_id === undefined ? {} : { agent_id: request.override_agent_id }),
    ...(typeof request.override_agent_version === "number" ? { agent_version: request.override_agent_version } : {}),
    analysis
  }
}

const unavailable = (cause: unknown) =>
  new DialerUnavailable({ message: `simulated carrier records unavailable: ${String(cause)}` })

/**
 * The adapter over whichever carrier records are provided.
 *
 * @category layers
 */
export const layerWith = (
  settings: SimulatedDialerSettings
): Layer.Layer<Dialer, never, SchedulerSimulatedCarrier> =>
  Layer.effect(
    Dialer,
    Effect.gen(function*() {
      const carrier = yield* SchedulerSimulatedCarrier
      return Dialer.of({
        // untraced and without a generator: thousands of dials a second, each already inside the dispatcher's spans
        dial: (request: DialRequest) =>
          Effect.clockWith((clock) => {
            const now = clock.currentTimeMillisUnsafe()
            return carrier.place(
              request,
              { call: simulate(settings, request, now), placedAt: now, endsAt: now + settings.latencyMs },
              now
            ).pipe(
              Effect.mapError(unavailable),
              Effect.flatMap((placed) => {
                const wait = placed.endsAt - now
                return wait > 0 ? Effect.as(Effect.sleep(wait), placed.call) : Effect.succeed(placed.call)
              })
            )
          }),
        lookup: Effect.fnUntraced(function*(key: string) {
          const found = yield* carrier.find(key).pipe(Effect.mapError(unavailable))
          if (Option.isNone(found)) return Option.none<CallLookup>()
          const now = yield* Clock.currentTimeMillis
          const { call, endsAt, placedAt } = found.value
          return Option.some<CallLookup>(
            now < endsAt
              ? { _tag: "CallOngoing", idempotency_key: key, call_id: call.call_id, start_timestamp: placedAt }
              : call
          )
        })
      })
    })
  )

/**
 * The adapter with its records in memory, exposing them for assertions (unit tests, benchmarks).
 *
 * @category layers
 */
export const layerMemory = (settings: SimulatedDialerSettings): Layer.Layer<Dialer | SchedulerSimulatedCarrier> =>
  layerWith(settings).pipe(Layer.provideMerge(SchedulerSimulatedCarrier.layerMemory))

/**
 * The adapter as configured: records in PostgreSQL (shared by every worker, as a carrier's are) or in memory.
 *
 * @category layers
 */
export const layer = (settings: SimulatedDialerSettings): Layer.Layer<Dialer, never, SqlClient.SqlClient> =>
  settings.store === "memory"
    ? layerMemory(settings)
    : layerWith(settings).pipe(Layer.provide(SchedulerSimulatedCarrier.layer))
