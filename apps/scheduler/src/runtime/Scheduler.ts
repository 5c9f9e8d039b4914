/**
 * The scheduler worker (decision 0401): batch-call dispatch (Dispatcher, with reconciliation), the contact feed (calls
 * to contacts), the contact-analysis backfill runner and its cron sync, webhook delivery, and metrics. It needs only a `SqlClient` (plus configuration from the
 * environment, SchedulerConfig), so it runs alone (`svc-scheduler`) or beside the server in `npm start` on the
 * same pool; any number of workers share one database and coordinate only through it.
 *
 * Shutdown (SIGTERM/SIGINT close the layer): the dispatcher stops claiming, lets its calls finish for
 * `SCHEDULER_SHUTDOWN_GRACE_MS`, records them and releases whatever it still holds; the backfill runner releases
 * its job; then the worker logs that it stopped.
 */
import type { Dialer } from "@svc/domain/ports/Dialer.ts"
import { BackfillRunnerRepo } from "@svc/store/backfill/BackfillRunnerRepo.ts"
import { SchedulerCronRepo } from "@svc/store/backfill/SchedulerCronRepo.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import { BatchProgressRepo } from "@svc/store/batches/BatchProgressRepo.ts"
import { CallsRepo } from "@svc/store/calls/CallsRepo.ts"
import { DispatchRepo } from "@svc/store/dispatch/DispatchRepo.ts"
import { HistoryPartitions } from "@svc/store/partitions/HistoryPartitions.ts"
import { PredialRepo } from "@svc/store/predial/PredialRepo.ts"
import { WebhooksRepo } from "@svc/store/webhooks/WebhooksRepo.ts"
import { type Config, Effect, Layer, Option } from "effect"
import type { SqlClient } from "effect/sql"
import * as BatchTestWorker from "../batchTests/BatchTestWorker.ts"
import type { CarrierPacer } from "../carriers/pacing/CarrierPacer.ts"
import * as CarrierPacerLive from "../carriers/pacing/CarrierPacerLive.ts"
import * as CarrierPacingConfig from "../carriers/pacing/CarrierPacingConfig.ts"
import * as CarrierPacingMetrics from "../carriers/pacing/CarrierPacingMetrics.ts"
import * as SimulatedDialer from "../carriers/simulated/SimulatedDialer.ts"
import * as TwilioConfig from "../carriers/twilio/TwilioConfig.ts"
import * as TwilioDialer from "../carriers/twilio/TwilioDialer.ts"
import { Dispatcher } from "../dispatch/Dispatcher.ts"
import * as BackfillCron from "../jobs/BackfillCron.ts"
import { BackfillRunner } from "../jobs/BackfillRunner.ts"
import * as BatchGauges from "../jobs/BatchGauges.ts"
import * as ContactFeed from "../jobs/ContactFeed.ts"
import * as IdempotencySweep from "../jobs/IdempotencySweep.ts"
import { PredialCheck } from "../predial/PredialCheck.ts"
import * as HistoryRetention from "../retention/HistoryRetention.ts"
import * as RetentionConfig from "../retention/RetentionConfig.ts"
import * as WebhookConfig from "../webhooks/WebhookConfig.ts"
import * as WebhookHousekeeping from "../webhooks/WebhookHousekeeping.ts"
import * as WebhookMetrics from "../webhooks/WebhookMetrics.ts"
import * as WebhookWorker from "../webhooks/WebhookWorker.ts"
import { DatabaseHealth } from "./DatabaseHealth.ts"
import * as SchedulerConfig from "./SchedulerConfig.ts"
import * as SchedulerMetrics from "./SchedulerMetrics.ts"

/** The repositories the worker uses, on the application's `SqlClient`. */
const Repos = Layer.mergeAll(
  BatchCallsRepo.layer,
  DispatchRepo.layer,
  CallsRepo.layer,
  BackfillRunnerRepo.layer,
  SchedulerCronRepo.layer,
  WebhooksRepo.layer,
  PredialRepo.layer,
  BatchProgressRepo.layer,
  HistoryPartitions.layer
)

/**
 * The worker for `settings`, with a given dialer: the loops run for the layer's lifetime.
 *
 * @category layers
 */
export const layerWith = (
  settings: SchedulerConfig.SchedulerSettings,
  webhooks: WebhookConfig.WebhookSettings = WebhookConfig.defaults(),
  retention: RetentionConfig.RetentionSettings = RetentionConfig.defaults()
): Layer.Layer<Dispatcher | BackfillRunner, Error, SqlClient.SqlClient | Dialer> => {
  const workers = Layer.mergeAll(Dispatcher.layer(settings), BackfillRunner.layer(settings)).pipe(
    // the pre-dial check of the dials (decision 0553), under the call webhooks' address rule
    Layer.provide(PredialCheck.layer({ allowPrivate: webhooks.allowPrivate }))
  )
  const jobs = Layer.effectDiscard(
    Effect.gen(function*() {
      yield* Effect.forkScoped(ContactFeed.loop)
      // webhook delivery (decision 0524): the outbox's events, signed, to their targets
      yield* Effect.forkScoped(WebhookWorker.loop(webhooks, settings.workerId))
      yield* Effect.forkScoped(WebhookMetrics.sampleQueue(5_000))
      // batches by status, paused ones included (decision 0549)
      yield* Effect.forkScoped(BatchGauges.loop(15_000))
      // finished events and superseded secrets pruned after the retention (decision 0524)
      yield* Effect.forkScoped(WebhookHousekeeping.loop(webhooks))
      // create-batch-call's expired idempotency records deleted (they are ignored once expired, never removed before)
      yield* Effect.forkScoped(IdempotencySweep.loop())
      // calls' month partitions created ahead and, with SVC_RETENTION_CALLS_DAYS, old months dropped (decision 0442)
      yield* Effect.forkScoped(HistoryRetention.loop(retention))
      // batch tests (decision 0702): test runs against customers' custom-LLM servers
      yield* Effect.forkScoped(BatchTestWorker.loopFromEnv(settings.workerId))
      if (Option.isNone(settings.backfillCron)) return
      const runner = yield* BackfillRunner
      yield* Effect.forkScoped(BackfillCron.loop(settings, settings.backfillCron.value, runner.wake))
    })
  )
  const metrics = Option.match(settings.metricsPort, {
    onNone: () => Layer.empty,
    onSome: SchedulerMetrics.layerServer
  })
  const lifecycle = Layer.effectDiscard(
    Effect.acquireRelease(
      Effect.andThen(
        Effect.andThen(SchedulerMetrics.registerAll, WebhookMetrics.registerAll).pipe(
          Effect.andThen(CarrierPacingMetrics.registerAll),
          Effect.andThen(BatchGauges.registerAll)
        ),
        Effect.logInfo("svc-scheduler started").pipe(Effect.annotateLogs({ worker: settings.workerId }))
      ),
      () => Effect.logInfo("svc-scheduler stopped").pipe(Effect.annotateLogs({ worker: settings.workerId }))
    )
  )
  // built in this order and closed in reverse: the loops stop (releasing what they hold) before "stopped"
  return Layer.mergeAll(jobs, metrics).pipe(
    Layer.provideMerge(workers),
    Layer.provide(lifecycle),
    Layer.provide(Repos),
    // one view of the database's health for every loop of the worker: an outage is logged once, not per loop
    Layer.provide(DatabaseHealth.layer)
  )
}

/**
 * The worker as configured by the environment, with the dialer `SVC_DIALER` names (the simulated carrier by
 * default; docs/dialer.md), pacing the carrier's call creations with `pacer` (decision 0610).
 *
 * @category layers
 */
export const layerWithPacer = <E>(pacer: Layer.Layer<CarrierPacer, E, SqlClient.SqlClient>): Layer.Layer<
  never,
  | Error
  | E
  | Config.ConfigError
  | SchedulerConfig.InvalidSchedulerConfig
  | WebhookConfig.InvalidWebhookConfig
  | TwilioConfig.InvalidTwilioConfig
  | RetentionConfig.InvalidRetentionConfig,
  SqlClient.SqlClient
> =>
  Layer.unwrap(
    Effect.gen(function*() {
      const settings = yield* SchedulerConfig.load
      const webhooks = yield* WebhookConfig.load
      const retention = yield* RetentionConfig.load
      if (settings.dialerKind === "twilio") {
        const twilio = yield* TwilioConfig.load
        const pacing = yield* CarrierPacingConfig.load
        const options = {
          ...TwilioDialer.defaultOptions,
          backoffMs: pacing.backoffBaseMs,
          backoffMaxMs: pacing.backoffMaxMs
        }
        return layerWith(settings.scheduler, webhooks, retention).pipe(
          Layer.provide(TwilioDialer.layer(twilio, options).pipe(Layer.provide(pacer)))
        )
      }
      return layerWith(settings.scheduler, webhooks, retention).pipe(
        Layer.provide(SimulatedDialer.layer(settings.dialer))
      )
    })
  )

/**
 * The worker as configured by the environment, pacing a real carrier's call creations with the shared pacer
 * (PostgreSQL, or Redis when `REDIS_URL` is set; `SVC_CARRIER_CPS`; decision 0610). The pacer is built only when
 * `SVC_DIALER=twilio`: the simulated carrier has no rate.
 *
 * @category layers
 */
export const layer = layerWithPacer(CarrierPacerLive.layerFromEnv)
