/**
 * Reconciliation of `unknown` tasks (decision 0401, "Exactly once"): a task whose lease expired while `dialling` (its
 * worker died, stalled, or gave it up on shutdown) may or may not have a call. Before anything dials it again,
 * the dialer is asked whether a call with the task's idempotency key exists:
 *
 * - ended: the call is recorded as if its worker had reported it (outcome, analysis data, contact);
 * - ongoing: the task stays `unknown`, counted as a call in flight, and is looked at again after the recheck time;
 * - never placed: the task returns to `pending` and its batch is woken, so it is dialled once, normally;
 * - the dialer cannot tell (it fails, or does not answer within LOOKUP_TIMEOUT_MS): nothing changes, the task is
 *   looked at again after the recheck time.
 */
import * as Outcome from "@svc/domain/dispatch/Outcome.ts"
import { attemptKey } from "@svc/domain/models/RetryPolicy.ts"
import { type CallLookup, Dialer, type DialerUnavailable } from "@svc/domain/ports/Dialer.ts"
import { CallsRepo, type FinishedTask } from "@svc/store/calls/CallsRepo.ts"
import { DispatchRepo } from "@svc/store/dispatch/DispatchRepo.ts"
import { Effect, Exit, Option } from "effect"
import type { SchedulerSettings } from "../runtime/SchedulerConfig.ts"
import * as SchedulerMetrics from "../runtime/SchedulerMetrics.ts"

/** @category models */
export interface ReconcileReport {
  readonly ended: number
  readonly ongoing: number
  readonly notPlaced: number
  readonly unanswered: number
}

/**
 * How long a pass waits for the dialer's answers to its lookups. Lookups still unanswered by then count as
 * `unanswered` (never as "no call": only `None` allows a redial, docs/dialer.md rule 3) and are asked again at their
 * next recheck. Without the bound, one lookup that never returned (a carrier API that accepts the connection and
 * says nothing) held the worker's pass, and so the dispatch of every org, forever (Reconciler.integration.test.ts).
 *
 * @category models
 */
export const LOOKUP_TIMEOUT_MS = 5_000

/** Lookups in flight at once. */
const LOOKUP_CONCURRENCY = 16

/**
 * One pass over the `unknown` tasks that are due for a lookup (at most `reconcileBatch`).
 *
 * @category constructors
 */
export const reconcileOnce = Effect.fn("Reconciler.reconcileOnce")(
  function*(settings: SchedulerSettings, now: number) {
    const repo = yield* DispatchRepo
    const calls = yield* CallsRepo
    const dialer = yield* Dialer
    const tasks = yield* repo.claimUnknown(settings.workerId, now, settings.reconcileRecheckMs, settings.reconcileBatch)
    if (tasks.length === 0) return { ended: 0, ongoing: 0, notPlaced: 0, unanswered: 0 }
    const ended: Array<FinishedTask> = []
    const notPlaced: Array<string> = []
    let ongoing = 0
    let unanswered = 0
    // answers are kept as they come, so the ones that arrived before the deadline count even if others did not
    const answers: Array<Exit.Exit<Option.Option<CallLookup>, DialerUnavailable> | undefined> = tasks.map(() =>
      undefined
    )
    yield* Effect.forEach(
      tasks,
      (task, i) =>
        Effect.map(
          Effect.exit(dialer.lookup(attemptKey(task.taskId, task.attempt))),
          (exit) => void (answers[i] = exit)
        ),
      { concurrency: LOOKUP_CONCURRENCY, discard: true }
    ).pipe(Effect.timeoutOption(LOOKUP_TIMEOUT_MS))
    for (let i = 0; i < tasks.length; i++) {
      const task = tasks[i]!
      const answer = answers[i]
      if (answer === undefined || Exit.isFailure(answer)) {
        unanswered++
        continue
      }
      if (Option.isNone(answer.value)) {
        notPlaced.push(task.taskId)
      } else if (answer.value.value._tag === "CallOngoing") {
        ongoing++
      } else {
        ended.push({ ...task, ...Outcome.finishOf(answer.value.value), call: answer.value.value })
      }
    }
    if (ended.length > 0) {
      const recorded = yield* calls.recordFinished(ended, now)
      yield* repo.completeIfDone(recorded.batchCallIds)
      for (const task of ended) {
        yield* SchedulerMetrics.add(SchedulerMetrics.outcomes, 1, { outcome: task.call!.outcome })
      }
    }
    const returned = yield* repo.returnToPending(settings.workerId, notPlaced, now)
    yield* SchedulerMetrics.add(SchedulerMetrics.reconciled, ended.length, { result: "ended" })
    yield* SchedulerMetrics.add(SchedulerMetrics.reconciled, ongoing, { result: "ongoing" })
    yield* SchedulerMetrics.add(SchedulerMetrics.reconciled, returned, { result: "not_placed" })
    if (unanswered > 0) {
      yield* Effect.logWarning("dialer could not answer lookups; tasks stay unknown").pipe(
        Effect.annotateLogs({ tasks: unanswered })
      )
    }
    return { ended: ended.length, ongoing, notPlaced: returned, unanswered }
  }
)
