/**
 * Batch-call dispatch (issue 5): one worker's loop over the batches in the database.
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
 *    dial starts. Only tasks of the batch's legal groups that are legal now are claimed (issue 15, decision 0623:
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
 * tasks still held are released: those never dialled back to `pending`, those being dialled to `unknown` (their
 * call may exist), for another worker to reconcile at once.
 */
import { CallWindow } from "@svc/domain"
import { attemptCapOf, capLabel } from "@svc/domain/compliance/AttemptCaps.ts"
import { defaultPolicy, type JurisdictionRule } from "@svc/domain/compliance/CallingPolicy.ts"
import { rulesOfIds } from "@svc/domain/compliance/LegalGroups.ts"
import { explain, isLegalAt, stateReason } from "@svc/domain/compliance/LegalHours.ts"
import { Dialer, type DialerError } from "@svc/domain/ports/Dialer.ts"
import { CallsRepo, finishedFromCall, type FinishedTask } from "@svc/store/calls/CallsRepo.ts"
import {
  type BatchLegality,
  type ClaimedTask,
  DispatchRepo,
  type DueBatch,
  type GroupCap
} from "@svc/store/dispatch/DispatchRepo.ts"
import * as DispatchWakeups from "@svc/store/dispatch/DispatchWakeups.ts"
import { defaultEffective, type EffectivePolicy } from "@svc/store/policies/CallingPolicyRepo.ts"
import { Cause, Clock, Context, Effect, FiberSet, Latch, Layer, Option, Queue, Semaphore } from "effect"
import { DatabaseHealth } from "../runtime/DatabaseHealth.ts"
import type { SchedulerSettings } from "../runtime/SchedulerConfig.ts"
import * as SchedulerMetrics from "../runtime/SchedulerMetrics.ts"
import * as WorkerIdentity from "../runtime/WorkerIdentity.ts"
import * as Reconciler from "./Reconciler.ts"

/** @category models */
export interface TickReport {
  readonly reclaimed: number
  readonly reconciled: Reconciler.ReconcileReport
  /** Batches moved to their window's next opening. */
  readonly postponed: number
  readonly claimed: number
  readonly skipped: number
  /** Tasks left pending because their number reached its attempt cap (decision 0624). */
  readonly deferred: number
  readonly completed: number
  /** Whether a batch may have more to claim right now (a claim hit `claimLimit` with the org's slots not all taken). */
  readonly more: boolean
  /** Whether an org's claim lock stayed taken longer than a claim waits for it (look again shortly). */
  readonly busy: boolean
  /**
   * The earliest time after the pass looked at which a batch becomes due, as far as the pass knows: a waiting
   * batch's trigger time or window opening (from the database when the pass looked, and the openings of the batches
   * it postponed), or the recheck of a batch it found run dry with calls in flight.
   */
  readonly nextAt: number | undefined
}

/** Most results written by one record statement. */
const RECORD_CHUNK = 1_000

/** Record statements in flight at once. */
const RECORDERS = 2

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

/** A dial must start this long before its lease ends, or it is left to expire and be reconciled. */
const LEASE_SAFETY_MS = 1_000

/** A blocked legal group with no opening within the horizon (14 days) is looked at again this much later. */
const NO_OPENING_RECHECK_MS = 86_400_000

/** Batches whose legal groups are kept in memory (they never change); past it the cache starts again. */
const LEGAL_CACHE_LIMIT = 10_000

/** A legal group as the dispatcher evaluates it: zones and rules resolved once. */
interface Group {
  readonly group: number
  readonly zones: ReadonlyArray<string>
  readonly rules: ReadonlyArray<JurisdictionRule>
  /** The strictest attempt cap of its rules, enforced by the claim (decision 0624); undefined: none. */
  readonly cap: GroupCap | undefined
  /** Between these instants the group is known to be blocked: when it was found blocked, and its next opening. */
  blockedFrom: number
  blockedUntil: number
  /** The pending tasks' `state_reason` while blocked (`legal_hours: <rule> <zone> until <instant>`). */
  blockedReason: string
  /** The reason this worker last wrote on the group's pending tasks (null: cleared); undefined: not yet. */
  written: string | null | undefined
}

interface Held {
  readonly task: ClaimedTask
  started: boolean
}

/** A task whose dial ended without a result: the dialer could not tell whether the call exists. */
interface Unresolved {
  readonly _tag: "Unresolved"
  readonly taskId: string
}

type Result = FinishedTask | Unresolved

/** The task's part of its result. */
const baseOf = (task: ClaimedTask) => ({
  taskId: task.taskId,
  orgId: task.orgId,
  batchCallId: task.batchCallId,
  fromNumber: task.request.from_number,
  toNumber: task.request.to_number
})

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
  readonly held: Effect.Effect<number>
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

      const held = new Map<string, Held>()
      let results: Array<Result> = []
      const dials = yield* FiberSet.make<void, never>()
      const hasResults = yield* Latch.make(false)
      const idle = yield* Latch.make(true)
      // up to RECORDERS record statements run at once, each on its own connection, while the loop claims more
      const recording = yield* Semaphore.make(RECORDERS)
      // set by shutdown: the recorder stops taking permits, so that flush (which needs all of them) gets them. During
      // an outage the recorder took each permit back as soon as a failed record released it, and a shutdown with
      // results in memory waited for the database to return (a worker that did not stop on SIGTERM, seen in CI)
      let stopping = false
      const records = yield* FiberSet.make<void, never>()
      const wakeups = yield* Queue.sliding<void>(1)
      const wake = Queue.offer(wakeups, undefined).pipe(Effect.asVoid)

      const forget = (taskIds: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          for (const id of taskIds) held.delete(id)
          yield* SchedulerMetrics.setInFlight(held.size)
          if (held.size === 0) yield* idle.open
        })

      /** Writes one batch of results: tasks, calls, contacts; frees their slots. */
      const record = (batch: ReadonlyArray<Result>) =>
        Effect.gen(function*() {
          const finished: Array<FinishedTask> = []
          const unresolved: Array<string> = []
          for (const result of batch) {
            if ("_tag" in result) unresolved.push(result.taskId)
            else finished.push(result)
          }
          const now = yield* Clock.currentTimeMillis
          const recorded = yield* calls.recordFinished(finished, now)
          yield* repo.releaseToUnknown(owner, unresolved, now)
          // the slots are free once those commit: the loop claims again while this fiber completes batches (a
          // statement of its own, which need not delay the next claim)
          yield* forget(batch.map((r) => r.taskId))
          yield* wake
          // results are recorded by now, so a failure here must not requeue them: a batch left in progress is
          // completed by the next pass that looks at it and finds nothing to claim (at most IDLE_RECHECK_MS later).
          // The failure is DatabaseHealth's to log: the database going away right after a record is an outage
          // like any other (the outage test caught this as a stack trace in the log)
          yield* repo.completeIfDone(recorded.batchCallIds).pipe(
            health.observe("completing batches"),
            Effect.catchCause(() => Effect.void)
          )
          yield* Effect.logDebug("recorded").pipe(
            Effect.annotateLogs({ tasks: batch.length, ms: (yield* Clock.currentTimeMillis) - now })
          )
          const byOutcome = new Map<string, number>()
          for (const task of finished) {
            const outcome = task.call?.outcome ?? "rejected"
            byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1)
          }
          for (const [outcome, n] of byOutcome) yield* SchedulerMetrics.add(SchedulerMetrics.outcomes, n, { outcome })
        })

      /** Takes the next results to record, at most `RECORD_CHUNK`. */
      const takeResults = Effect.gen(function*() {
        const batch = results.length <= RECORD_CHUNK ? results : results.slice(0, RECORD_CHUNK)
        results = results.length <= RECORD_CHUNK ? [] : results.slice(RECORD_CHUNK)
        if (results.length === 0) yield* hasResults.close
        return batch
      })

      /**
       * Records a batch of results. What cannot be written goes back to the queue for the next attempt; the
       * heartbeat keeps those tasks' leases meanwhile.
       */
      const recordOrRequeue = (batch: ReadonlyArray<Result>) =>
        record(batch).pipe(
          Effect.onError(() =>
            Effect.gen(function*() {
              results = batch.concat(results)
              yield* hasResults.open
            })
          )
        )

      /** Records everything reported so far, once no recorder is busy (settle, shutdown). */
      const flush = Effect.gen(function*() {
        while (results.length > 0) yield* recordOrRequeue(yield* takeResults)
      }).pipe(recording.withPermits(RECORDERS))

      const report = (result: Result) =>
        Effect.sync(() => {
          results.push(result)
          hasResults.openUnsafe()
        })

      /** What a dial that ended without a call reports: a rejection fails the task, anything else is unresolved. */
      const reportFailure = (task: ClaimedTask, cause: Cause.Cause<DialerError>) => {
        const error = Cause.findErrorOption(cause)
        if (Option.isSome(error) && error.value._tag === "DialRejected") {
          return report({
            ...baseOf(task),
            state: "failed",
            reason: `rejected: ${error.value.reason}`,
            call: undefined
          })
        }
        if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
        // the adapter's own words for DialerUnavailable (it is the expected way for a dial to end in doubt, and
        // comes in bursts when the carrier is down); a stack only for a defect, which is a bug in the adapter
        return Effect.logWarning("dial outcome unknown; the task will be reconciled").pipe(
          Effect.annotateLogs(
            Option.isSome(error)
              ? { taskId: task.taskId, reason: error.value.message }
              : { taskId: task.taskId, cause: Cause.pretty(cause) }
          ),
          Effect.andThen(report({ _tag: "Unresolved", taskId: task.taskId }))
        )
      }

      // One fiber per call for the call's whole life (a real call lasts minutes). Written without a generator: this
      // runs thousands of times a second, and a generator, a clock effect and a latch effect per dial were a
      // measurable part of the time in which the dials of a fresh claim hold up the next record (docs/benchmarks.md).
      const dialOne = (task: ClaimedTask): Effect.Effect<void> =>
        Effect.clockWith((clock) => {
          const now = clock.currentTimeMillisUnsafe()
          const entry = held.get(task.taskId)
          if (entry === undefined) return Effect.void
          // the claim is too old to act on (the worker stalled): the lease expires and a reconciler finds no call
          if (now > task.leaseExpiresAt - LEASE_SAFETY_MS) return forget([task.taskId])
          entry.started = true
          return SchedulerMetrics.observeLag(Math.max(0, now - task.dueAt) / 1000).pipe(
            Effect.andThen(dialer.dial(task.request)),
            Effect.matchCauseEffect({
              onSuccess: (call) => report(finishedFromCall(baseOf(task), call)),
              onFailure: (cause) => reportFailure(task, cause)
            })
          )
        })

      const start = (tasks: ReadonlyArray<ClaimedTask>) =>
        Effect.gen(function*() {
          if (tasks.length === 0) return
          yield* idle.close
          for (const task of tasks) held.set(task.taskId, { task, started: false })
          yield* SchedulerMetrics.setInFlight(held.size)
          yield* SchedulerMetrics.add(SchedulerMetrics.dials, tasks.length)
          // started when this fiber next waits (on the next statement), so the dials' work overlaps the database's
          for (const task of tasks) yield* FiberSet.run(dials, dialOne(task), { startImmediately: false })
        })

      // Legal groups per batch (issue 15 item 3, decision 0623): stored at the batch's creation, read once, kept with
      // the rules of the org's policy version they were resolved under; a batch whose org's policy version changed
      // (DueBatch.policyVersion, read with every look) has its groups resolved again (decision 0628).
      const legalGroups = new Map<string, { readonly version: number; readonly groups: ReadonlyArray<Group> }>()
      const orgPolicies = new Map<string, EffectivePolicy>()

      /**
       * Which legal groups of each batch may be dialled at `now`: each group evaluated once (isLegalAt over its
       * zones and rules), never its tasks; a blocked group's next opening (legal hours and the batch's window) is
       * computed once and kept until it comes.
       */
      const legalityOf = (batches: ReadonlyArray<DueBatch>, now: number) =>
        Effect.gen(function*() {
          const stale = batches.filter((b) => legalGroups.get(b.batchCallId)?.version !== b.policyVersion)
          if (stale.length > 0) {
            if (legalGroups.size + stale.length > LEGAL_CACHE_LIMIT) legalGroups.clear()
            if (orgPolicies.size > LEGAL_CACHE_LIMIT) orgPolicies.clear()
            // the orgs whose policy this worker does not hold at the batch's version (version 0: the default)
            const orgs = new Set<string>()
            for (const b of stale) {
              if (b.policyVersion === 0) orgPolicies.set(b.orgId, defaultEffective)
              else if (orgPolicies.get(b.orgId)?.version !== b.policyVersion) orgs.add(b.orgId)
            }
            if (orgs.size > 0) {
              const fetched = yield* repo.orgPolicies([...orgs])
              // an org found without a row was cleared meanwhile: the default policy, at the version looked at
              for (const org of orgs) orgPolicies.set(org, fetched.get(org) ?? defaultEffective)
            }
            const ids = stale.map((b) => b.batchCallId)
            const stored = yield* repo.legalGroups(ids)
            const byBatch = new Map<string, Array<Group>>(ids.map((id) => [id, []]))
            const orgOf = new Map(stale.map((b) => [b.batchCallId, b.orgId]))
            for (const g of stored) {
              // the org's policy (decision 0628) decides the rules and so the cap (decision 0624)
              const policy = orgPolicies.get(orgOf.get(g.batchCallId)!)?.policy ?? defaultPolicy
              const rules = rulesOfIds(policy, g.ruleIds)
              const cap = attemptCapOf(rules)
              byBatch.get(g.batchCallId)?.push({
                group: g.group,
                zones: g.zones,
                rules,
                cap: cap === undefined ? undefined : { group: g.group, limit: cap.limit, label: capLabel(cap) },
                blockedFrom: 0,
                blockedUntil: 0,
                blockedReason: "",
                written: undefined
              })
            }
            // labelled with the version looked at: a newer one fetched meanwhile is looked at again next pass
            for (const b of stale) {
              legalGroups.set(b.batchCallId, { version: b.policyVersion, groups: byBatch.get(b.batchCallId) ?? [] })
            }
          }
          const legality = new Map<string, BatchLegality>()
          for (const batch of batches) {
            const legal: Array<number> = []
            const blocked: Array<{ group: number; opensAt: number }> = []
            const caps: Array<GroupCap> = []
            for (const g of legalGroups.get(batch.batchCallId)?.groups ?? []) {
              // a legal group's cap goes to the claim (a blocked group's tasks are not claimed at all)
              if (g.cap !== undefined) caps.push(g.cap)
              const known = now >= g.blockedFrom && now < g.blockedUntil
              if (!known && isLegalAt(now, g.zones, g.rules)) {
                legal.push(g.group)
                continue
              }
              if (!known) {
                // why, and until when (legal hours and the window together): the binding rule names the reason
                const why = explain(now, g.zones, g.rules, batch.window)
                g.blockedFrom = now
                g.blockedUntil = Option.isNone(why)
                  ? now + NO_OPENING_RECHECK_MS
                  : Option.getOrElse(why.value.until, () => now + NO_OPENING_RECHECK_MS)
                g.blockedReason = Option.isNone(why) ? "legal_hours" : stateReason(why.value)
              }
              blocked.push({ group: g.group, opensAt: g.blockedUntil })
            }
            legality.set(batch.batchCallId, { legal, blocked, caps })
          }
          return legality
        })

      /**
       * Tells the tasks of each blocked group why they wait (issue 15: "tasks waiting on legal hours show
       * state_reason saying which rule and until when"), and clears the reason of groups open again: one statement
       * per group whose state changed since this worker last wrote it. A claimed task's reason is cleared by the
       * claim itself.
       */
      const explainBlocked = (batches: ReadonlyArray<DueBatch>, legality: ReadonlyMap<string, BatchLegality>) =>
        Effect.gen(function*() {
          for (const batch of batches) {
            const state = legality.get(batch.batchCallId)
            if (state === undefined) continue
            const blocked = new Set(state.blocked.map((b) => b.group))
            for (const g of legalGroups.get(batch.batchCallId)?.groups ?? []) {
              const reason = blocked.has(g.group) ? g.blockedReason : null
              if (g.written === reason) continue
              yield* repo.setLegalReason(batch.batchCallId, g.group, reason)
              g.written = reason
            }
          }
        })

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
        const { due, next } = yield* repo.look(now, DUE_BATCH_LIMIT)
        let nextAt = next
        const later = (at: number | undefined) => {
          if (at !== undefined && (nextAt === undefined || at < nextAt)) nextAt = at
        }
        const closed: Array<{ batchCallId: string; at: number }> = []
        const open = new Map<string, Array<DueBatch>>()
        for (const batch of due) {
          if (batch.window !== undefined && !CallWindow.isOpen(batch.window, now)) {
            // a decoded window always opens again; the fallback only guards the type
            const at = Option.getOrElse(CallWindow.nextOpening(batch.window, now), () => now + 86_400_000)
            closed.push({ batchCallId: batch.batchCallId, at })
            later(at)
            continue
          }
          const list = open.get(batch.orgId)
          if (list === undefined) open.set(batch.orgId, [batch])
          else list.push(batch)
        }
        yield* repo.postpone(closed)
        let claimed = 0
        let skipped = 0
        let deferred = 0
        let completed = 0
        let more = false
        let busy = false
        const openBatches = [...open.values()].flat()
        const legal = yield* legalityOf(openBatches, now)
        for (const [orgId, batches] of open) {
          const result = yield* repo.claim(orgId, batches, {
            owner,
            now,
            leaseMs: settings.leaseMs,
            maxPerBatch: settings.claimLimit,
            legal
          })
          claimed += result.claimed.length
          skipped += result.skipped
          deferred += result.deferred
          completed += result.completed.length
          // a batch stopped at the claim limit with slots left: go round at once (not when the slots ran out: that
          // pass would find none, and calls ending wake the loop anyway)
          if (result.more) more = true
          if (result.busy) busy = true
          later(result.rechecksAt)
          yield* start(result.claimed)
        }
        yield* explainBlocked(openBatches, legal)
        yield* SchedulerMetrics.add(SchedulerMetrics.skipped, skipped, { reason: "do_not_call" })
        if (due.length === DUE_BATCH_LIMIT) more = true
        return {
          reclaimed,
          reconciled,
          postponed: closed.length,
          claimed,
          skipped,
          deferred,
          completed,
          more,
          busy,
          nextAt
        } satisfies TickReport
      }).pipe(Effect.provideContext(context), Effect.withSpan("Dispatcher.tick"))

      const settle = Effect.gen(function*() {
        yield* FiberSet.awaitEmpty(dials)
        yield* flush
        yield* idle.await
      })

      const recorder = Effect.gen(function*() {
        yield* hasResults.await
        // the first result of a claim's dials wakes this fiber while the rest of them are still queued to run: let
        // them run first, so the claim's results go in one statement (taken at once, the first made a record
        // statement of one task, and a completion check, for every claim)
        yield* Effect.yieldNow
        if (stopping) return yield* Effect.never
        yield* recording.take(1)
        const batch = yield* takeResults
        if (batch.length === 0) return yield* recording.release(1)
        // a batch that cannot be written (the database is away) goes back to the queue and this recorder pauses a
        // second, holding its permit: the results wait in memory, their leases renewed while the database answers,
        // and are written once it does (if their leases expired meanwhile, the record still finishes each task
        // once: it finishes only tasks still in flight, and reconciliation may have recorded them first)
        yield* FiberSet.run(
          records,
          recordOrRequeue(batch).pipe(
            health.observe("recording finished calls"),
            Effect.catchCause(() => Effect.sleep(1_000)),
            Effect.ensuring(recording.release(1))
          )
        )
      }).pipe(
        // only a bug gets here (the record's failures are handled above): log it, and keep the recorder alive
        Effect.catchCause((cause) =>
          Effect.logError("recorder failed; restarting it in 1 s").pipe(
            Effect.annotateLogs({ cause: Cause.pretty(cause) }),
            Effect.andThen(Effect.sleep(1_000))
          )
        ),
        Effect.forever
      )

      const heartbeat = Effect.gen(function*() {
        yield* Effect.sleep(Math.max(1, Math.floor(settings.leaseMs / 3)))
        if (held.size === 0) return
        const now = yield* Clock.currentTimeMillis
        // a statement's failure is a defect (DispatchRepo), which Effect.ignore would let through and end the
        // heartbeat: after an outage no lease would be renewed again, and every long call would be reconciled
        yield* repo.extendLeases(owner, [...held.keys()], now + settings.leaseMs).pipe(
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
        stopping = true
        const grace = settings.shutdownGraceMs > 0
          ? yield* FiberSet.awaitEmpty(dials).pipe(
            Effect.timeoutOption(settings.shutdownGraceMs),
            Effect.map(Option.isSome)
          )
          : false
        yield* FiberSet.clear(dials)
        // Statement failures are defects (DispatchRepo), which Effect.ignore and orElseSucceed let through: during
        // a database outage they ended the shutdown here, before "dispatcher stopped", and the process exited 1
        // with a stack. What cannot be written or released now stays `dialling` under its lease, which runs out
        // and is reconciled by whichever worker is left (the carrier has the calls).
        yield* flush.pipe(Effect.catchCause(() => Effect.void))
        const now = yield* Clock.currentTimeMillis
        const dialling: Array<string> = []
        const notStarted: Array<string> = []
        for (const [id, entry] of held) (entry.started ? dialling : notStarted).push(id)
        const released = yield* repo.releaseToUnknown(owner, dialling, now).pipe(
          Effect.catchCause(() => Effect.succeed(0))
        )
        const returned = yield* repo.returnToPending(owner, notStarted, now).pipe(
          Effect.catchCause(() => Effect.succeed(0))
        )
        const leftToLeases = held.size - released - returned
        yield* forget([...held.keys()])
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
        yield* Effect.forkScoped(recorder)
        yield* Effect.forkScoped(heartbeat)
        yield* Effect.addFinalizer(() => shutdown)
        yield* DispatchWakeups.onBatchCreated(
          () => wake,
          (cause, startedAt) => health.failed("listening for new batches", startedAt, cause)
        )
        return yield* loop
      }))

      return Dispatcher.of({ tick, settle, run, wake, held: Effect.sync(() => held.size) })
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
