/**
 * The pre-dial check (decision 0553): before a claimed task of an org with a pre-dial webhook is dialled, its dial is
 * POSTed to the org's receiver, signed as the call webhooks are (decision 0521), through the call webhooks' sender and
 * its address rule (decision 0523, `SVC_WEBHOOK_ALLOW_PRIVATE`). Only an answer that allows the dial lets it go
 * (PredialAnswer); a refusal ends the task `skipped`, anything else makes it wait (`predial_unavailable`) with its
 * batch until a bounded backoff has passed, and in both cases the claim's attempt is undone (PredialRepo.undo).
 *
 * - Orgs without a webhook pay a map lookup per task: the targets of every org are read in one statement and kept for
 *   SETTINGS_TTL_MS (a set or clear reaches every worker within that), refreshed by the first dial after it.
 * - Backoff per org and worker: after a check that found the receiver unavailable, the org's next checks on this
 *   worker wait 1 s, then 2, 4, ... up to BACKOFF_MAX_MS; tasks claimed meanwhile wait without a request (their batch
 *   is due when the backoff ends). Any valid answer (allow or refuse) resets it.
 * - Whatever goes wrong in the check itself (a database failure while loading targets or undoing) never dials: the
 *   task is let go and stays `dialling` until its lease ends; the reconciler then finds no call and returns it.
 */
import type { ClaimedTask } from "@svc/store/dispatch/DispatchRepo.ts"
import { DispatchRepo } from "@svc/store/dispatch/DispatchRepo.ts"
import { PredialRepo, type PredialTarget, type Verdict } from "@svc/store/predial/PredialRepo.ts"
import { Cause, Clock, Context, Effect, Layer, Semaphore } from "effect"
import * as SchedulerMetrics from "../runtime/SchedulerMetrics.ts"
import * as HttpSender from "../webhooks/HttpSender.ts"
import * as Signature from "../webhooks/Signature.ts"
import * as PredialAnswer from "./PredialAnswer.ts"

/**
 * How long a worker keeps the orgs' pre-dial targets before reading them again: the staleness of a set or clear
 * (decision 0553). Read lazily, by the first dial after it: an idle worker reads nothing.
 *
 * @category models
 */
export const SETTINGS_TTL_MS = 5_000

/** First wait after an unavailable check; doubles with each one in a row. @category models */
export const BACKOFF_BASE_MS = 1_000

/** Longest wait after unavailable checks. @category models */
export const BACKOFF_MAX_MS = 60_000

/** The wait after `failures` unavailable checks in a row (1, 2, ...). @category constructors */
export const backoffMs = (failures: number): number =>
  Math.min(BACKOFF_BASE_MS * 2 ** Math.min(Math.max(failures, 1) - 1, 30), BACKOFF_MAX_MS)

/** The signing secret and the `-next` one at `now` (WebhooksRepo.claim's choice, decision 0521). */
const secretsAt = (target: PredialTarget, now: number) => {
  let secret: string | undefined
  let next: string | undefined
  for (const s of target.secrets) {
    if (s.activeFrom <= now) secret = s.secret
    else next = s.secret
  }
  return { secret, next }
}

/** The headers of one check (the call webhooks' scheme: decision 0521). @category constructors */
export const headers = (target: PredialTarget, body: string, eventId: string, now: number) => {
  const { next, secret } = secretsAt(target, now)
  const out: Record<string, string> = {
    "user-agent": "svc-webhooks/1",
    "x-svc-event-id": eventId,
    "x-svc-event": PredialAnswer.EVENT
  }
  if (secret !== undefined) out["x-svc-signature"] = Signature.sign(body, secret, now)
  if (next !== undefined) out["x-svc-signature-next"] = Signature.sign(body, next, now)
  return out
}

/** What a worker's dials need to know of themselves to undo an attempt. @category models */
export interface Worker {
  readonly owner: string
  /** The claims' lease: a task's claim instant is its lease's end minus this. */
  readonly leaseMs: number
}

/**
 * The check of one claimed task, for a worker: undefined when its org has no pre-dial webhook (dial at once, no
 * effect run), else an effect that checks and answers whether to dial now (false: the attempt was undone, or left
 * to its lease; never dial it).
 *
 * @category models
 */
export type Gate = (task: ClaimedTask, now: number) => Effect.Effect<boolean> | undefined

/**
 * The pre-dial check of a worker's dials.
 *
 * @category services
 */
export class PredialCheck extends Context.Service<PredialCheck, {
  readonly gate: (worker: Worker) => Gate
}>()("@svc/scheduler/PredialCheck") {
  /**
   * The check, sending through its own keep-alive agents (closed with the layer). `allowPrivate` is the call
   * webhooks' `SVC_WEBHOOK_ALLOW_PRIVATE` (WebhookSettings).
   *
   * @category layers
   */
  static readonly layer = (options: { readonly allowPrivate: boolean }) =>
    Layer.effect(
      PredialCheck,
      Effect.gen(function*() {
        const send = yield* HttpSender.make({ allowPrivate: options.allowPrivate, maxSockets: 64 })
        return yield* PredialCheck.make(send)
      })
    )

  /**
   * The check over a given sender (tests pass their own).
   *
   * @category constructors
   */
  static readonly make = (send: HttpSender.Send) =>
    Effect.gen(function*() {
      const repo = yield* PredialRepo
      const dispatch = yield* DispatchRepo

      let targets = new Map<string, PredialTarget>()
      let loadedAt = Number.NEGATIVE_INFINITY
      const loading = yield* Semaphore.make(1)
      const fresh = (now: number) => now - loadedAt < SETTINGS_TTL_MS && now >= loadedAt
      const reload = loading.withPermits(1)(Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        if (fresh(now)) return
        const rows = yield* repo.targets(now)
        targets = new Map(rows.map((t) => [t.orgId, t]))
        loadedAt = now
      }))

      // per org: unavailable checks in a row, and until when the next check waits
      const backoff = new Map<string, { failures: number; until: number }>()
      let checks = 0

      /** The check's effect for a task of an org with a target; true: dial. */
      const check = (worker: Worker, task: ClaimedTask, target: PredialTarget) =>
        Effect.gen(function*() {
          const started = yield* Clock.currentTimeMillis
          const waiting = backoff.get(task.orgId)
          let answer: PredialAnswer.Answer
          if (waiting !== undefined && started < waiting.until) {
            answer = { _tag: "Unavailable", why: "backing off after an unavailable check" }
          } else {
            const body = PredialAnswer.requestBody(task, started)
            const eventId = `pdl_${task.request.idempotency_key.replace(":", "_")}_${started}_${++checks}`
            const { secret } = secretsAt(target, started)
            // unsigned checks are never sent (decision 0521's rule for the call webhooks)
            const result: HttpSender.SendResult = secret === undefined
              ? { status: undefined, error: "the org has no webhook secret", refused: false }
              : yield* send({
                url: target.url,
                headers: headers(target, body, eventId, started),
                body,
                timeoutMs: target.timeoutMs
              })
            const ended = yield* Clock.currentTimeMillis
            yield* SchedulerMetrics.observePredial((ended - started) / 1000)
            answer = PredialAnswer.decide(result)
            if (answer._tag === "Unavailable") {
              // one round of failures counts once: the checks of one claim run side by side, and a receiver that is
              // down fails them all; one that failed while this check was in flight set the round's backoff
              const current = backoff.get(task.orgId)
              const sameRound = current !== undefined && current.until > started
              const failures = sameRound ? current.failures : (current?.failures ?? 0) + 1
              if (!sameRound) backoff.set(task.orgId, { failures, until: ended + backoffMs(failures) })
              yield* Effect.logWarning("pre-dial check unavailable; the task waits").pipe(
                Effect.annotateLogs({ orgId: task.orgId, taskId: task.taskId, reason: answer.why, failures })
              )
            } else {
              backoff.delete(task.orgId)
            }
          }
          yield* SchedulerMetrics.add(SchedulerMetrics.predialChecks, 1, {
            result: answer._tag === "Allowed" ? "allowed" : answer._tag === "Refused" ? "refused" : "unavailable"
          })
          if (answer._tag === "Allowed") return true
          const now = yield* Clock.currentTimeMillis
          const verdict: Verdict = answer._tag === "Refused"
            ? answer
            : { _tag: "Unavailable", notBefore: backoff.get(task.orgId)?.until ?? now + BACKOFF_BASE_MS }
          const batch = yield* repo.undo(
            worker.owner,
            { taskId: task.taskId, orgId: task.orgId, claimedAt: task.leaseExpiresAt - worker.leaseMs },
            verdict,
            now
          )
          if (answer._tag === "Refused") {
            yield* Effect.logDebug("pre-dial check refused the dial").pipe(
              Effect.annotateLogs({ orgId: task.orgId, taskId: task.taskId, reason: answer.reason })
            )
            // the refused task may have been the batch's last
            if (batch !== undefined) yield* dispatch.completeIfDone([batch])
          }
          return false
        }).pipe(
          // never a dial without an allow: a failure here (the database) leaves the task to its lease
          Effect.catchCause((cause) =>
            Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logWarning(
              "pre-dial check failed; the task is left to its lease and reconciled"
            ).pipe(
              Effect.annotateLogs({ orgId: task.orgId, taskId: task.taskId, cause: Cause.pretty(cause) }),
              Effect.as(false)
            )
          )
        )

      const gate = (worker: Worker): Gate => (task, now) => {
        if (fresh(now)) {
          const target = targets.get(task.orgId)
          return target === undefined ? undefined : check(worker, task, target)
        }
        return reload.pipe(
          Effect.flatMap(() => {
            const target = targets.get(task.orgId)
            return target === undefined ? Effect.succeed(true) : check(worker, task, target)
          }),
          Effect.catchCause((cause) =>
            Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logWarning(
              "pre-dial targets could not be read; the task is left to its lease and reconciled"
            ).pipe(
              Effect.annotateLogs({ orgId: task.orgId, taskId: task.taskId, cause: Cause.pretty(cause) }),
              Effect.as(false)
            )
          )
        )
      }

      return PredialCheck.of({ gate })
    })
}
