/**
 * Webhook delivery by the scheduler's workers (decision 0524): takes due events from the outbox
 * (WebhooksRepo.claim), POSTs each signed to its target (HttpSender), and writes the results in batches.
 *
 * - Any number of workers: an event is held by one worker per attempt (the claim's lease), ordered per call (the
 *   claim never hands out an event whose call has an earlier one pending).
 * - Retries: timeouts, network errors and non-2xx answers (3xx included: redirects are not followed) are retried
 *   after `baseDelayMs * 2^(attempt-1)`, capped at `maxDelayMs`, of which a random 50-100 % is used (jitter, so a
 *   receiver that comes back is not hit by every event at once); 410 Gone stops the event; an event whose next
 *   attempt would start more than `giveUpMs` (24 h) after its first is given up (`failed`). A refused address is
 *   retried too: the name may resolve elsewhere later.
 * - Isolation: at most `perOrg` attempts of one org in flight per worker, and claims that go round the orgs, so a
 *   slow or dead endpoint holds at most its own slots, and its timeouts never hold a claim or a write of others.
 * - Pipelined: the loop claims whenever it has free slots, attempts run on their own fibers, and results are
 *   written together by the next turn of the loop: one claim and one write per turn, however many events.
 *
 * Time comes from the Clock (signature timestamps, due times, the 24 h budget); jitter from Random.
 */
import { type AttemptResult, type ClaimedEvent, WebhooksRepo } from "@svc/store/webhooks/WebhooksRepo.ts"
import { Clock, Effect, Fiber, Queue, Random } from "effect"
import type { Scope } from "effect"
import type { DatabaseHealth } from "../runtime/DatabaseHealth.ts"
import * as Retrying from "../runtime/Retrying.ts"
import * as HttpSender from "./HttpSender.ts"
import * as Signature from "./Signature.ts"
import type { WebhookSettings } from "./WebhookConfig.ts"
import * as WebhookMetrics from "./WebhookMetrics.ts"

/**
 * What an attempt's answer means for its event: delivered, stopped, retried at a later time, or given up.
 * `random` in [0, 1) picks the jitter.
 *
 * @category constructors
 */
export const decide = (
  settings: WebhookSettings,
  event: Pick<ClaimedEvent, "eventSeq" | "attempts" | "firstAttemptAt">,
  answer: HttpSender.SendResult,
  now: number,
  random: number,
  millis: number
): AttemptResult => {
  const base = { eventSeq: event.eventSeq, status: answer.status, error: answer.error, millis }
  if (answer.status !== undefined && answer.status >= 200 && answer.status < 300) {
    return { ...base, state: "delivered", dueAt: now }
  }
  if (answer.status === 410) return { ...base, state: "gone", dueAt: now }
  const exponent = Math.min(event.attempts - 1, 40)
  const delay = Math.min(settings.baseDelayMs * 2 ** exponent, settings.maxDelayMs)
  const dueAt = now + Math.ceil(delay * (0.5 + random / 2))
  return dueAt - event.firstAttemptAt > settings.giveUpMs
    ? { ...base, state: "failed", dueAt: now }
    : { ...base, state: "pending", dueAt }
}

/** The headers of one attempt (design: "webhook signature"; decision 0521 for the `-next` header). */
export const headers = (event: ClaimedEvent, now: number): Record<string, string> => {
  const out: Record<string, string> = {
    "user-agent": "svc-webhooks/1",
    "x-svc-event-id": event.eventId,
    "x-svc-event": event.event
  }
  if (event.secret !== undefined) out["x-svc-signature"] = Signature.sign(event.body, event.secret, now)
  if (event.nextSecret !== undefined) out["x-svc-signature-next"] = Signature.sign(event.body, event.nextSecret, now)
  return out
}

const NO_SECRET: HttpSender.SendResult = {
  status: undefined,
  error: "the org has no webhook secret yet (admin create-webhook-secret): not sent",
  refused: false
}

/**
 * One attempt of one claimed event, with its result (never fails).
 *
 * @category constructors
 */
export const attempt = (settings: WebhookSettings, send: HttpSender.Send) => (event: ClaimedEvent) =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    // unsigned events are never sent: a receiver could not tell them from forged ones
    const answer = event.secret === undefined && event.nextSecret === undefined ? NO_SECRET : yield* send({
      url: event.url,
      headers: headers(event, started),
      body: event.body,
      timeoutMs: event.timeoutMs
    })
    const now = yield* Clock.currentTimeMillis
    const result = decide(settings, event, answer, now, yield* Random.next, now - started)
    yield* WebhookMetrics.count(result.state, event.attempts)
    return result
  })

/**
 * The delivery loop of one worker, until interrupted (then attempts in flight are interrupted; their events are due
 * again when their leases end).
 *
 * @category constructors
 */
export const loop = (
  settings: WebhookSettings,
  owner: string
): Effect.Effect<never, never, WebhooksRepo | DatabaseHealth | Scope.Scope> =>
  Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const send = yield* HttpSender.make({ allowPrivate: settings.allowPrivate })
    const run = attempt(settings, send)
    const perOrg = new Map<string, number>()
    let inFlight = 0
    let after = ""
    let results: Array<AttemptResult> = []
    // a finished attempt wakes the loop (one pending wake is enough)
    const wake = yield* Queue.sliding<void>(1)
    const scope = yield* Effect.scope

    const turn = Effect.gen(function*() {
      // the previous turn's results are written while this turn claims (two statements at once on the pool)
      let writing: Effect.Effect<void> = Effect.void
      if (results.length > 0) {
        const batch = results
        results = []
        const fiber = yield* Effect.forkChild(repo.complete(owner, yield* Clock.currentTimeMillis, batch))
        writing = Effect.asVoid(Fiber.join(fiber))
      }
      let claimed = 0
      const free = settings.concurrency - inFlight
      if (free > 0) {
        const events = yield* repo.claim({
          owner,
          now: yield* Clock.currentTimeMillis,
          limit: free,
          perOrg: settings.perOrg,
          inFlight: perOrg,
          after,
          leaseMarginMs: settings.leaseMarginMs
        })
        claimed = events.length
        if (claimed > 0) after = events[0]!.orgId
        for (const event of events) {
          inFlight++
          perOrg.set(event.orgId, (perOrg.get(event.orgId) ?? 0) + 1)
          yield* Effect.forkIn(
            run(event).pipe(
              Effect.flatMap((result) =>
                Effect.sync(() => {
                  results.push(result)
                  inFlight--
                  const left = (perOrg.get(event.orgId) ?? 1) - 1
                  if (left === 0) perOrg.delete(event.orgId)
                  else perOrg.set(event.orgId, left)
                })
              ),
              Effect.andThen(Queue.offer(wake, undefined))
            ),
            scope
          )
        }
      }
      yield* writing
      // nothing new was due and nothing finished meanwhile: wait for an attempt to finish, or the idle pause
      if (results.length === 0 && (claimed === 0 || inFlight >= settings.concurrency)) {
        yield* Effect.timeoutOption(Queue.take(wake), settings.idleMs)
      }
    })
    return yield* turn.pipe(Retrying.forever("delivering webhooks"))
  })

/**
 * Delivers everything due now, one claim at a time, each claim's attempts side by side; returns how many attempts
 * it made. The loop's steps without its pipelining: for tests on the TestClock and for operators' one-off runs.
 *
 * @category constructors
 */
export const once = (settings: WebhookSettings, owner: string, send: HttpSender.Send) =>
  Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const run = attempt(settings, send)
    let total = 0
    for (;;) {
      const events = yield* repo.claim({
        owner,
        now: yield* Clock.currentTimeMillis,
        limit: settings.concurrency,
        perOrg: settings.perOrg,
        inFlight: new Map(),
        after: "",
        leaseMarginMs: settings.leaseMarginMs
      })
      if (events.length === 0) return total
      const results = yield* Effect.forEach(events, run, { concurrency: "unbounded" })
      yield* repo.complete(owner, yield* Clock.currentTimeMillis, results)
      total += events.length
    }
  })
