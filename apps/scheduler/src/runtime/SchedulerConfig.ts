/**
 * Settings of the scheduler worker and of the simulated dialer, from the environment (docs/operations and
 * apps/scheduler/README.md list them). Every value has a default that suits `npm start`; tests build settings
 * from `defaults` instead.
 */
import { Config, Cron, Effect, Option, Result, Schema } from "effect"
import { newWorkerId } from "./WorkerIdentity.ts"

/**
 * A setting that does not parse (a cron expression, outcome weights); the message names the variable.
 *
 * @category errors
 */
export class InvalidSchedulerConfig extends Schema.TaggedError<InvalidSchedulerConfig>()("InvalidSchedulerConfig", {
  message: Schema.String
}) {}

/** @category models */
export interface SchedulerSettings {
  /**
   * Names this worker in leases and cron tick rows: unique per process. The default (WorkerIdentity.newWorkerId)
   * lets workers on the same machine tell that this one died without waiting for its leases to run out.
   */
  readonly workerId: string
  /** How long a claim holds a task; the worker renews its leases every third of it while the call lasts. */
  readonly leaseMs: number
  /** Longest sleep between looks at the database when nothing wakes the worker sooner. */
  readonly pollMs: number
  /**
   * Most tasks claimed from one batch in one transaction. Smaller than an org's limit, so claims go on while the
   * previous claims' calls are being recorded.
   */
  readonly claimLimit: number
  /** How long an `unknown` task whose call is still ongoing waits before the dialer is asked again. */
  readonly reconcileRecheckMs: number
  /** Most `unknown` tasks reconciled per pass. */
  readonly reconcileBatch: number
  /** How long shutdown waits for calls in flight before releasing their tasks to reconciliation. */
  readonly shutdownGraceMs: number
  /** Serve Prometheus metrics on this port (standalone svc-scheduler); none when absent. */
  readonly metricsPort: Option.Option<number>
  /** When the cron contact-analysis sync runs; none when disabled. */
  readonly backfillCron: Option.Option<Cron.Cron>
  /** Calls processed per backfill chunk (one transaction, one counter update). */
  readonly backfillChunk: number
  /** How long a backfill run is held by one worker without progress before another may take it over. */
  readonly backfillLeaseMs: number
}

/** @category models */
export interface OutcomeWeights {
  readonly answered: number
  readonly busy: number
  readonly no_answer: number
  readonly failed: number
}

/** @category models */
export interface SimulatedDialerSettings {
  readonly seed: number
  /** Real time each simulated call occupies its line (and a concurrency slot). */
  readonly latencyMs: number
  readonly outcomes: OutcomeWeights
  /** Where the simulated carrier keeps its records: `sql` (shared by workers, survives restarts) or `memory`. */
  readonly store: "sql" | "memory"
}

/**
 * Settings for tests and benchmarks: short leases, no cron, no metrics port.
 *
 * @category constructors
 */
export const defaults = (overrides: Partial<SchedulerSettings> = {}): SchedulerSettings => ({
  workerId: newWorkerId(),
  leaseMs: 30_000,
  pollMs: 1_000,
  claimLimit: 500,
  reconcileRecheckMs: 5_000,
  reconcileBatch: 200,
  shutdownGraceMs: 10_000,
  metricsPort: Option.none(),
  backfillCron: Option.none(),
  backfillChunk: 500,
  backfillLeaseMs: 30_000,
  ...overrides
})

/** @category constructors */
export const defaultOutcomes: OutcomeWeights = { answered: 60, busy: 15, no_answer: 20, failed: 5 }

/**
 * `answered=60,busy=15,no_answer=20,failed=5` (any subset; missing outcomes weigh 0, the total must be > 0).
 *
 * @category encoding
 */
export const parseOutcomes = (text: string): Result.Result<OutcomeWeights, string> => {
  const weights = { answered: 0, busy: 0, no_answer: 0, failed: 0 }
  for (const part of text.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
    const [name, value] = part.split("=").map((s) => s.trim())
    const weight = Number(value)
    if (name === undefined || !(name in weights) || !Number.isFinite(weight) || weight < 0) {
      return Result.fail(`"${part}" is not <outcome>=<weight> with outcome answered, busy, no_answer or failed`)
    }
    weights[name as keyof OutcomeWeights] = weight
  }
  const total = weights.answered + weights.busy + weights.no_answer + weights.failed
  return total > 0 ? Result.succeed(weights) : Result.fail("the weights must add up to more than 0")
}

const positiveInt = (name: string, fallback: number) => Config.withDefault(Config.Int(name), fallback)

const raw = Config.all({
  workerId: Config.option(Config.String("SCHEDULER_WORKER_ID")),
  leaseMs: positiveInt("SCHEDULER_LEASE_MS", 30_000),
  pollMs: positiveInt("SCHEDULER_POLL_MS", 1_000),
  claimLimit: positiveInt("SCHEDULER_CLAIM_LIMIT", 500),
  reconcileRecheckMs: positiveInt("SCHEDULER_RECONCILE_RECHECK_MS", 5_000),
  shutdownGraceMs: positiveInt("SCHEDULER_SHUTDOWN_GRACE_MS", 10_000),
  metricsPort: Config.option(Config.Port("SCHEDULER_METRICS_PORT")),
  backfillCron: Config.withDefault(Config.String("SCHEDULER_BACKFILL_CRON"), "0 3 * * *"),
  cronTimeZone: Config.withDefault(Config.String("SCHEDULER_CRON_TZ"), "UTC"),
  backfillChunk: positiveInt("SCHEDULER_BACKFILL_CHUNK", 500),
  seed: Config.withDefault(Config.Int("SIMULATED_DIALER_SEED"), 1),
  latencyMs: Config.withDefault(Config.Int("SIMULATED_DIALER_LATENCY_MS"), 2_000),
  outcomes: Config.withDefault(Config.String("SIMULATED_DIALER_OUTCOMES"), "answered=60,busy=15,no_answer=20,failed=5"),
  store: Config.withDefault(Config.Literals(["sql", "memory"], "SIMULATED_DIALER_STORE"), "sql" as const),
  dialerKind: Config.withDefault(Config.String("SVC_DIALER"), "simulated")
})

/**
 * Which Dialer adapter the worker uses (`SVC_DIALER`): the simulated carrier (default, no account needed) or
 * Twilio (decision 0602; its settings are read only then, apps/scheduler `twilio/TwilioConfig`).
 *
 * @category models
 */
export type DialerKind = "simulated" | "twilio"

/**
 * The settings from the environment.
 *
 * @category constructors
 */
export const load: Effect.Effect<
  {
    readonly scheduler: SchedulerSettings
    readonly dialer: SimulatedDialerSettings
    readonly dialerKind: DialerKind
  },
  Config.ConfigError | InvalidSchedulerConfig
> = Effect.gen(function*() {
  const c = yield* raw
  const invalid = (message: string) => Effect.fail(new InvalidSchedulerConfig({ message }))
  for (
    const [name, value] of [
      ["SCHEDULER_LEASE_MS", c.leaseMs],
      ["SCHEDULER_POLL_MS", c.pollMs],
      ["SCHEDULER_CLAIM_LIMIT", c.claimLimit],
      ["SCHEDULER_RECONCILE_RECHECK_MS", c.reconcileRecheckMs],
      ["SCHEDULER_BACKFILL_CHUNK", c.backfillChunk]
    ] as const
  ) {
    if (value < 1) return yield* invalid(`${name} must be at least 1 (got ${value})`)
  }
  if (c.shutdownGraceMs < 0) return yield* invalid(`SCHEDULER_SHUTDOWN_GRACE_MS must be 0 or more`)
  if (c.latencyMs < 0) return yield* invalid(`SIMULATED_DIALER_LATENCY_MS must be 0 or more`)
  let backfillCron = Option.none<Cron.Cron>()
  if (c.backfillCron.trim() !== "off") {
    const parsed = Cron.parse(c.backfillCron, c.cronTimeZone)
    if (Result.isFailure(parsed)) {
      return yield* invalid(
        `SCHEDULER_BACKFILL_CRON "${c.backfillCron}" (time zone ${c.cronTimeZone}) is not a cron expression: ` +
          `${parsed.failure.message} (use "off" to disable the sync)`
      )
    }
    backfillCron = Option.some(parsed.success)
  }
  const dialerKind = c.dialerKind.trim()
  if (dialerKind !== "simulated" && dialerKind !== "twilio") {
    return yield* invalid(`SVC_DIALER must be simulated or twilio (got "${c.dialerKind}")`)
  }
  const outcomes = parseOutcomes(c.outcomes)
  if (Result.isFailure(outcomes)) return yield* invalid(`SIMULATED_DIALER_OUTCOMES: ${outcomes.failure}`)
  return {
    scheduler: defaults({
      workerId: Option.getOrElse(c.workerId, newWorkerId),
      leaseMs: c.leaseMs,
      pollMs: c.pollMs,
      claimLimit: c.claimLimit,
      reconcileRecheckMs: c.reconcileRecheckMs,
      shutdownGraceMs: c.shutdownGraceMs,
      metricsPort: c.metricsPort,
      backfillCron,
      backfillChunk: c.backfillChunk,
      backfillLeaseMs: Math.max(c.leaseMs, 10_000)
    }),
    dialer: { seed: c.seed, latencyMs: c.latencyMs, outcomes: outcomes.success, store: c.store },
    dialerKind
  }
})
