/**
 * Batch-call dispatch (decision 0401): one worker's loop over the batches in the database.
 *
 * Each pass (`tick`), in this order:
 * 1. expired leases turn their `dialling` tasks `unknown` (a worker died or stalled), and so do, without waiting for
 *    their leases, the tasks of workers known to be dead (same machine, process gone: WorkerIdentity);
 * 2. due `unknown` tasks are reconciled with the dialer (Reconciler) before anything could dial them again;
 * 3. batches whose `next_dispatch_at` has come are read; one whose call window is closed is moved to the window's
 *    next opening (CallWindow.nextOpening: local time, allowed days, DST per docs/decisions/0101) and costs nothing
 *    until then;
 * 4. per org, one transaction claims tasks of its open batches within the concurrency limit, shared fairly
 *    (DispatchRepo.claim), skipping `do_not_call` numbers; the claim commits (task `dialling`, lease) before any
 *    dial starts. Only tasks of the batch's legal groups that are legal now are claimed (decision 0623:
 *    each group's zones and rules evaluated once per pass, `legalityOf`); a batch left with only blocked groups
 *    pending sleeps until the earliest of their openings, as a closed window does;
 *    tasks of a group whose rules cap attempts per number (FL 3 per 24 h...) are claimed only under their cap,
 *    counted across the org's batches by the claim under the org's lock; one over it waits, with its reason, until
 *    its oldest counted attempt is 24 h old (decision 0624);
 * 5. each claimed task is dialled in its own fiber with its attempt's idempotency key (the task id for its first
 *    call, `<task id>:<n>` for a retry: decision 0625) and its overrides in the request; finished dials are
 *    recorded in bulk (CallsRepo.recordFinished), which frees their slots, wakes the loop, and puts a task whose
 *    outcome its batch retries back to pending in the same statement.
 *
 * Between passes the loop sleeps until the earliest of: the next batch's `next_dispatch_at` (a trigger time or a
 * window opening), the poll interval (which bounds how late an expired lease is reclaimed); and wakes early when its
 * own calls finish or a batch is created (NOTIFY). While its calls last, a heartbeat renews their leases every third of the lease time.
 *
 * Shutdown: the loop stops claiming, calls in flight get `shutdownGraceMs` to finish and be recorded, then the
 * tasks still in flight are released: those never dialled back to `pending`, those being dialled to `unknown` (their
 * call may exist), for another worker to reconcile at once.
 *
 * This file is the tick and the loop. Steps 3-4 are Claimer's (legal groups: LegalityCache), step 5 Dials' and
 * Recorder's, the tasks in flight InFlight's; the decisions they take (task states, outcome -> finish, legality and
 * window postponement, lease timing) are `@svc/domain/dispatch/`'s.
 */
import * as Lease from "@svc/domain/dispatch/Lease.ts"
import * as TaskState from "@svc/domain/dispatch/TaskState.ts"
import { Dialer } from "@svc/domain/ports/Dialer.ts"
import { CallsRepo } from "@svc/store/calls/CallsRepo.ts"
import { DispatchRepo } from "@svc/store/dispatch/DispatchRepo.ts"
import * as DispatchWakeups from "@svc/store/dispatch/DispatchWakeups.ts"
import { Clock, Context, Effect, FiberSet, Layer, Option, Queue } from "effect"
import { PredialCheck } from "../predial/PredialCheck.ts"
import { DatabaseHealth } from "../runtime/DatabaseHealth.ts"
import type { SchedulerSettings } from "../runtime/SchedulerConfig.ts"
import * as SchedulerMetrics from "../runtime/SchedulerMetrics.ts"
import * as WorkerIdentity from "../runtime/WorkerIdentity.ts"
import * as Claimer from "./Claimer.ts"
import * as Dials from "./Dials.ts"
import * as InFlight from "./InFlight.ts"
import * as LegalityCache from "./LegalityCache.ts"
import * as Reconciler from "./Reconciler.ts"
import * as Recorder from "./Recorder.ts"

/**
 * What a pass did: the claim part's report (its members are documented there), with the maintenance before it.
 *
 * @category models
 */
export interface TickReport extends Claimer.ClaimReport {
  readonly reclaimed: number
  readonly reconciled: Reconciler.ReconcileReport
  /** As the claim's, and true too when the pass read as many due batches as a pass reads (more may be due). */
  readonly more: boolean
  /**
   * The earliest time after the pass looked at which a batch becomes due, as far as the pass knows: a waiting
   * batch's trigger time or window opening (from the database when the pass looked, and the openings of the batches
   * it postponed), or the recheck of a batch it found run dry with calls in flight.
   */
  readonly nextAt: number | undefined
}

/**
 * Lease expiry and reconciliation run at most this often (every pass would repeat them for nothing). Once a second:
 * an expired lease (30 s) is taken up at most a second late, and the expiry's scan of the index of calls in flight,
 * which holds a dead entry for every task dialled since the table was last vacuumed (300-400 ms at 1.5 million
 * tasks, docs/benchmarks.md), costs a fifth of what it did every 200 ms.
 */
const MAINTENANCE_EVERY_MS = 1_000

/**
 * How often a worker asks which workers hold leases, to release at once the calls of those it knows are dead
 * (WorkerIdentity.isGone: same machine and pid namespace, process gone): at its first pass, then at most this often.
 * A worker restarted after a crash finds its predecessor's calls at its first pass instead of after the lease
 * (30 s by default); the question reads the index of calls in flight as the expiry does, so not every second.
 */
const DEAD_OWNERS_EVERY_MS = 5_000

/**
 * How often a worker deletes the attempt records no cap counts any more (DispatchRepo.sweepAttempts): at its first
 * pass, then at most this often. One statement over a table that holds about a day of capped claims.
 */
export const ATTEMPTS_SWEEP_EVERY_MS = 3_600_000

/**
 * When a claim gave up waiting for an org's lock (another worker held it for longer than ORG_LOCK_WAIT_MS, which
 * a claim never needs: something stalled), look again this soon.
 */
const BUSY_RETRY_MS = 10

/** Due batches read per pass. */
const DUE_BATCH_LIMIT = 500

/**
 * One worker's dispatcher.
 *
 * @category services
 */
export class Dispatcher extends Context.Service<Dispatcher, {
  /** One pass (see the module notes); the dials it starts run on after it returns. */
  readonly tick: Effect.Effect<TickReport>
  /** Waits until every dial this worker started has ended and been recorded. */
  readonly settle: Effect.Effect<void>
  /** The loop: passes, then sleeps until something is due; until interrupted (graceful shutdown). */
  readonly run: Effect.Effect<never>
  /** Asks the loop to look at the database now. */
  readonly wake: Effect.Effect<void>
  /** Tasks this worker holds (claimed and not yet recorded). */
  readonly inFlightCount: Effect.Effect<number>
}>()("@svc/scheduler/Dispatcher") {
  /**
   * A dispatcher for `settings`; its dials live in the current scope.
   *
   * @category constructors
   */
  static readonly make = (settings: SchedulerSettings) =>
    Effect.gen(function*() {
      const repo = yield* DispatchRepo
      const calls = yield* CallsRepo
      const dialer = yield* Dialer
      const health = yield* DatabaseHealth
      // only these services: the fibers keep their own Clock (a test's TestClock)
      const context = Context.make(DispatchRepo, repo).pipe(Context.add(CallsRepo, calls), Context.add(Dialer, dialer))
      const owner = settings.workerId

      const wakeups = yield* Queue.sliding<void>(1)
      const wake = Queue.offer(wakeups, undefined).pipe(Effect.asVoid)
      const inFlight = yield* InFlight.make
      const inFlightTasks = inFlight.byTaskId
      const recorder = yield* Recorder.make(owner, inFlight, wake)
      // the pre-dial check (decision 0553) where the worker provides it (Scheduler.layerWith does)
      const predial = yield* Effect.serviceOption(PredialCheck)
      const dials = yield* Dials.make(
        inFlight,
        recorder,
        Option.isSome(predial)
          ? { gate: predial.value.gate({ owner, leaseMs: settings.leaseMs }), wake }
          : undefined
      )
      const legality = yield* LegalityCache.make
      const claimer = yield* Claimer.make(settings, legality, dials)

      let maintainedAt = Number.NEGATIVE_INFINITY
      let ownersCheckedAt = Number.NEGATIVE_INFINITY
      let attemptsSweptAt = Number.NEGATIVE_INFINITY
      const noReconcile: Reconciler.ReconcileReport = { ended: 0, ongoing: 0, notPlaced: 0, unanswered: 0 }

      const tick = Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        let reclaimed = 0
        let reconciled = noReconcile
        if (now - maintainedAt >= MAINTENANCE_EVERY_MS || now < maintainedAt) {
          maintainedAt = now
          if (now - ownersCheckedAt >= DEAD_OWNERS_EVERY_MS || now < ownersCheckedAt) {
            ownersCheckedAt = now
            const owners = yield* repo.leaseOwners
            const gone = yield* Effect.sync(() => owners.filter((o) => WorkerIdentity.isGone(o, owner)))
            if (gone.length > 0) {
              // their calls become unknown with their lease ending now: reconciled below, in this pass
              reclaimed = yield* repo.releaseOwners(gone, now)
              yield* Effect.logInfo("released the calls of workers that are gone").pipe(
                Effect.annotateLogs({ workers: gone.join(" "), tasks: reclaimed })
              )
            }
          }
          if (now - attemptsSweptAt >= ATTEMPTS_SWEEP_EVERY_MS || now < attemptsSweptAt) {
            attemptsSweptAt = now
            yield* repo.sweepAttempts(now)
          }
          reclaimed += yield* repo.expireLeases(now)
          yield* SchedulerMetrics.add(SchedulerMetrics.leasesReclaimed, reclaimed)
          reconciled = yield* Reconciler.reconcileOnce(settings, now)
        }
        const { due, next } = yield* repo.findDue(now, DUE_BATCH_LIMIT)
        const claim = yield* claimer.claimDue(due, now)
        const nextAt = claim.nextAt === undefined || (next !== undefined && next <= claim.nextAt) ? next : claim.nextAt
        return {
          reclaimed,
          reconciled,
          ...claim,
          more: claim.more || due.length === DUE_BATCH_LIMIT,
          nextAt
        } satisfies TickReport
      }).pipe(Effect.provideContext(context), Effect.withSpan("Dispatcher.tick"))

      const settle = Effect.gen(function*() {
        yield* FiberSet.awaitEmpty(dials.dials)
        yield* recorder.flush
        yield* inFlight.idle.await
      })

      const heartbeat = Effect.gen(function*() {
        yield* Effect.sleep(Lease.heartbeatMs(settings.leaseMs))
        if (inFlightTasks.size === 0) return
        const now = yield* Clock.currentTimeMillis
        // a statement's failure is a defect (DispatchRepo), which Effect.ignore would let through and end the
        // heartbeat: after an outage no lease would be renewed again, and every long call would be reconciled
        yield* repo.extendLeases(owner, [...inFlightTasks.keys()], now + settings.leaseMs).pipe(
          health.observe("renewing leases"),
          Effect.catchCause(() => Effect.void)
        )
      }).pipe(Effect.forever)

      const loop = Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        // a failed pass is DatabaseHealth's to log (an outage once when it starts and once when it ends, anything
        // else with its cause); the loop tries again a second later, so an outage costs a statement a second
        const report = yield* tick.pipe(
          health.observe("dispatch pass"),
          Effect.catchCause(() => Effect.succeed(undefined))
        )
        const now = yield* Clock.currentTimeMillis
        if (report !== undefined && report.claimed > 0) {
          yield* Effect.logDebug("claimed").pipe(Effect.annotateLogs({ tasks: report.claimed, ms: now - started }))
        }
        if (report?.more === true) return
        // The pass's wake time is relative to when it looked, not to now: a batch that became due while the pass ran
        // (a window that opened a millisecond after the pass read the clock) makes the wait zero or less, and the
        // loop goes round at once. Batches that were due when the pass looked and stay due (an org at its limit)
        // are not wake times: their slots free up when calls end, which wakes the loop (its own) or the poll (other
        // workers'). So does a batch another worker woke during the pass (returning its tasks to pending).
        // An expired lease (a worker died) or an `unknown` task due for another look is taken up by the maintenance
        // of the first pass after it: at most one poll interval late, which a 30 s lease does not notice.
        let until = now + (report === undefined ? 1_000 : settings.pollMs)
        if (report?.nextAt !== undefined) until = Math.min(until, report.nextAt)
        // an org's lock was held too long for this pass to wait (DispatchRepo.claim): look again shortly
        if (report?.busy === true) {
          until = Math.min(until, now + BUSY_RETRY_MS)
        }
        const wait = until - now
        yield* Effect.logDebug("dispatcher sleeping").pipe(Effect.annotateLogs({ ms: wait, until }))
        if (wait > 0) yield* Effect.raceFirst(Effect.sleep(wait), Queue.take(wakeups))
      }).pipe(Effect.forever)

      const shutdown = Effect.gen(function*() {
        yield* recorder.stop
        const grace = settings.shutdownGraceMs > 0
          ? yield* FiberSet.awaitEmpty(dials.dials).pipe(
            Effect.timeoutOption(settings.shutdownGraceMs),
            Effect.map(Option.isSome)
          )
          : false
        yield* FiberSet.clear(dials.dials)
        // Statement failures are defects (DispatchRepo), which Effect.ignore and orElseSucceed let through: during
        // a database outage they ended the shutdown here, before "dispatcher stopped", and the process exited 1
        // with a stack. What cannot be written or released now stays `dialling` under its lease, which runs out
        // and is reconciled by whichever worker is left (the carrier has the calls).
        yield* recorder.flush.pipe(Effect.catchCause(() => Effect.void))
        const now = yield* Clock.currentTimeMillis
        const dialling: Array<string> = []
        const notStarted: Array<string> = []
        for (const [id, entry] of inFlightTasks) {
          ;(TaskState.releasedTo(entry.started) === "unknown" ? dialling : notStarted).push(id)
        }
        const released = yield* repo.releaseToUnknown(owner, dialling, now).pipe(
          Effect.catchCause(() => Effect.succeed(0))
        )
        const returned = yield* repo.returnToPending(owner, notStarted, now).pipe(
          Effect.catchCause(() => Effect.succeed(0))
        )
        const leftToLeases = inFlightTasks.size - released - returned
        yield* inFlight.untrack([...inFlightTasks.keys()])
        yield* Effect.logInfo("dispatcher stopped").pipe(
          Effect.annotateLogs({
            callsFinished: grace,
            releasedToUnknown: released,
            returnedToPending: returned,
            ...(leftToLeases > 0 ? { leftToLeases } : {})
          })
        )
      })

      const run = Effect.scoped(Effect.gen(function*() {
        // finalizers run in reverse: shutdown first (the recorder and heartbeat still work), then they stop
        yield* Effect.forkScoped(recorder.run)
        yield* Effect.forkScoped(heartbeat)
        yield* Effect.addFinalizer(() => shutdown)
        yield* DispatchWakeups.onBatchCreated(
          () => wake,
          (cause, startedAt) => health.failed("listening for new batches", startedAt, cause)
        )
        return yield* loop
      }))

      return Dispatcher.of({ tick, settle, run, wake, inFlightCount: Effect.sync(() => inFlightTasks.size) })
    })

  /**
   * The dispatcher, without its loop (tests drive `tick` and `settle`).
   *
   * @category layers
   */
  static readonly layerNoDeps = (settings: SchedulerSettings) => Layer.effect(Dispatcher, Dispatcher.make(settings))

  /**
   * The dispatcher with its loop running for the layer's lifetime.
   *
   * @category layers
   */
  static readonly layer = (settings: SchedulerSettings) =>
    Layer.effectContext(
      Effect.gen(function*() {
        const dispatcher = yield* Dispatcher.make(settings)
        yield* Effect.forkScoped(dispatcher.run)
        return Context.make(Dispatcher, dispatcher)
      })
    )
}
