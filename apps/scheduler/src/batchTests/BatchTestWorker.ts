/**
 * The batch test runner of a scheduler worker (decision 0702): `concurrency` fibers each lease the
 * next due test run, run it against the batch's custom-LLM server with `@svc/agent-test`'s runner (call id = the
 * run's id), renew the lease while it runs, and finish it with its verdict. A run whose worker died (killed, or
 * stopped mid-run) is taken again once its lease expires; after `maxAttempts` leases it ends `error` saying so. The
 * store finishes a run only under its current lease and recounts the job, so no run is ever counted twice.
 *
 * The call webhooks' address rule (decision 0523) applies to `llm_websocket_url` too: the socket refuses loopback,
 * private, link-local and metadata addresses unless `SVC_WEBHOOK_ALLOW_PRIVATE=true`.
 */
import { type ChatCompletions, Runner, Simulation } from "@svc/agent-test"
import type { ClaimedRun, RunResult } from "@svc/store/batchTests/index.ts"
import { TestRunsRepo } from "@svc/store/batchTests/index.ts"
import { CursorKeys } from "@svc/store/db/CursorKeys.ts"
import { Config, Duration, Effect, Layer, Option, Schedule } from "effect"
import { FetchHttpClient, type HttpClient } from "effect/http"
import type { SqlClient } from "effect/sql"
import { DatabaseHealth } from "../runtime/DatabaseHealth.ts"
import * as AddressPolicy from "../webhooks/AddressPolicy.ts"

/** @category models */
export interface BatchTestSettings {
  /** runs one worker has in flight at most (`SVC_BATCH_TEST_CONCURRENCY`) */
  readonly concurrency: number
  /** a run's lease; renewed every third of it while the run goes on (`SVC_BATCH_TEST_LEASE_MS`) */
  readonly leaseMs: number
  /** pause between looks for due runs while none is due (`SVC_BATCH_TEST_POLL_MS`) */
  readonly pollMs: number
  /** leases a run may take before it ends `error` (its workers were lost each time) */
  readonly maxAttempts: number
  readonly runner: Runner.RunnerOptions
  /**
   * The chat-completions model simulation definitions need (`SVC_TEST_LLM_*`; decision 0706); undefined: not
   * configured. `model` undefined: each definition's `llm_model`.
   */
  readonly llm: LlmSettings | undefined
}

/** @category models */
export interface LlmSettings extends Omit<ChatCompletions.ChatSettings, "model"> {
  readonly model: string | undefined
}

/** @category constructors */
export const defaults = (overrides: Partial<BatchTestSettings> = {}): BatchTestSettings => ({
  concurrency: 8,
  leaseMs: 60_000,
  pollMs: 500,
  maxAttempts: 3,
  runner: { ...Runner.defaults, refuseAddress: AddressPolicy.refusal },
  llm: undefined,
  ...overrides
})

/**
 * The settings from the environment (docs/operations.md, "Batch tests").
 *
 * @category constructors
 */
export const load = Effect.gen(function*() {
  const c = yield* Config.all({
    allowPrivate: Config.withDefault(Config.Boolean("SVC_WEBHOOK_ALLOW_PRIVATE"), false),
    concurrency: Config.withDefault(Config.Int("SVC_BATCH_TEST_CONCURRENCY"), 8),
    leaseMs: Config.withDefault(Config.Int("SVC_BATCH_TEST_LEASE_MS"), 60_000),
    pollMs: Config.withDefault(Config.Int("SVC_BATCH_TEST_POLL_MS"), 500),
    replyTimeoutMs: Config.withDefault(Config.Int("SVC_BATCH_TEST_REPLY_TIMEOUT_MS"), Runner.defaults.replyTimeoutMs),
    llmUrl: Config.option(Config.String("SVC_TEST_LLM_URL")),
    llmModel: Config.option(Config.String("SVC_TEST_LLM_MODEL")),
    llmApiKey: Config.option(Config.Redacted("SVC_TEST_LLM_API_KEY")),
    llmTimeoutMs: Config.withDefault(Config.Int("SVC_TEST_LLM_TIMEOUT_MS"), 60_000)
  })
  return defaults({
    concurrency: Math.max(1, c.concurrency),
    leaseMs: Math.max(300, c.leaseMs),
    pollMs: Math.max(10, c.pollMs),
    runner: {
      ...Runner.defaults,
      replyTimeoutMs: c.replyTimeoutMs,
      refuseAddress: c.allowPrivate ? undefined : AddressPolicy.refusal
    },
    llm: Option.isNone(c.llmUrl) || c.llmUrl.value === "" ? undefined : {
      url: c.llmUrl.value,
      model: Option.getOrUndefined(c.llmModel),
      apiKey: Option.getOrUndefined(c.llmApiKey),
      timeoutMs: Math.max(1, c.llmTimeoutMs)
    }
  })
})

/** What to say about a simulation definition when no model is configured (decision 0706). */
export const simulationNotConfigured =
  "simulation test cases need an OpenAI-compatible chat-completions endpoint: set SVC_TEST_LLM_URL " +
  "(with SVC_TEST_LLM_MODEL and SVC_TEST_LLM_API_KEY) on the scheduler, or use type: scripted"

/** Runs one leased run to its result. */
const execute = (
  run: ClaimedRun,
  settings: BatchTestSettings
): Effect.Effect<RunResult, never, HttpClient.HttpClient> => {
  if (run.attempt > settings.maxAttempts) {
    return Effect.succeed({
      status: "error",
      explanation: `the run was started ${
        run.attempt - 1
      } times and its worker was lost each time (lease of ${settings.leaseMs} ms expired)`,
      transcript: null
    })
  }
  const definition = run.definition
  const outcome = definition.type === "scripted"
    ? Runner.runScripted(run.url, run.runId, definition, settings.runner)
    : settings.llm === undefined
    ? undefined
    : Simulation.runSimulation(
      run.url,
      run.runId,
      definition,
      Simulation.options(
        { ...settings.llm, model: settings.llm.model ?? definition.llm_model },
        { runner: settings.runner }
      )
    )
  if (outcome === undefined) {
    return Effect.succeed({ status: "error", explanation: simulationNotConfigured, transcript: null })
  }
  return outcome.pipe(
    Effect.map((outcome) => ({
      status: outcome.verdict.status,
      explanation: outcome.verdict.explanation,
      transcript: outcome.transcript
    }))
  )
}

/**
 * One round of a fiber: lease a due run, run it, finish it. Answers whether a run was found.
 *
 * @category constructors
 */
const round = (settings: BatchTestSettings, workerId: string) =>
  Effect.gen(function*() {
    const repo = yield* TestRunsRepo
    const run = yield* repo.claim(workerId, settings.leaseMs)
    if (run === undefined) return false
    const result = yield* Effect.scoped(Effect.gen(function*() {
      // the lease is renewed while the run goes on; a worker that stops renewing (killed) loses it
      yield* Effect.forkScoped(
        repo.renew(run, workerId, settings.leaseMs).pipe(
          Effect.delay(Duration.millis(Math.floor(settings.leaseMs / 3))),
          Effect.repeat(Schedule.forever)
        )
      )
      return yield* execute(run, settings)
    }))
    const finished = yield* repo.finish(run, workerId, result)
    if (!finished) {
      yield* Effect.logWarning("batch test run lost its lease before it finished; its result was not recorded")
        .pipe(Effect.annotateLogs({ run: run.runId, attempt: run.attempt }))
    }
    return true
  })

/**
 * One fiber's loop: rounds back to back while runs are due, a pause of `pollMs` when none is or a round failed.
 * A failure is DatabaseHealth's to log, as every other loop of the worker: an outage once when it starts and once
 * when it ends (no stack, decision 0402), anything else with its cause; the loop goes on.
 *
 * @category constructors
 */
const fiberLoop = (settings: BatchTestSettings, workerId: string) =>
  Effect.gen(function*() {
    const health = yield* DatabaseHealth
    return yield* round(settings, workerId).pipe(
      health.observe("batch test run"),
      Effect.catchCause(() => Effect.succeed(false)),
      Effect.flatMap((found) => found ? Effect.void : Effect.sleep(Duration.millis(settings.pollMs))),
      Effect.forever
    )
  })

/**
 * The worker's batch test loops, on the application's `SqlClient`.
 *
 * @category constructors
 */
export const loop = (
  settings: BatchTestSettings,
  workerId: string
): Effect.Effect<never, never, SqlClient.SqlClient | DatabaseHealth> =>
  Effect.forEach(Array.from({ length: settings.concurrency }), () => fiberLoop(settings, workerId), {
    concurrency: "unbounded",
    discard: true
  }).pipe(
    Effect.andThen(Effect.never),
    Effect.provide(TestRunsRepo.layer.pipe(Layer.provide(CursorKeys.layer))),
    // the chat-completions endpoint of simulation runs (its URL is the operator's, not a tenant's: no address rule)
    Effect.provide(FetchHttpClient.layer),
    Effect.orDie
  )

/**
 * The loops with the settings of the environment (the scheduler's composition forks this).
 *
 * @category constructors
 */
export const loopFromEnv = (workerId: string): Effect.Effect<never, never, SqlClient.SqlClient | DatabaseHealth> =>
  Effect.flatMap(Effect.orDie(load), (settings) => loop(settings, workerId))
