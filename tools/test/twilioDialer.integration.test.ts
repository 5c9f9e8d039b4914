// The Twilio adapter against the Twilio double (issue 14; docs/dialer.md rules 1-4): real PostgreSQL for its
// record, the SDK talking HTTP to the double, and signed status callbacks delivered to svc-server's real
// `POST /carrier/twilio/status` (its routes on a local port over the same database: tools/test/support/TwilioSide.ts),
// which checks the signature and applies each callback to the record. Moved here from apps/scheduler (issue 28, item
// 5): apps never import each other, tools/ composes both. Time is real: the double moves its calls with timers of a
// few ms, and every wait is for a condition, bounded (Waiting.ts).
import { assert, layer } from "@effect/vitest"
import { BatchCallId, CallId, OrgId } from "@svc/domain/models/Ids.ts"
import type { DialRequest } from "@svc/domain/ports/Dialer.ts"
import { waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import type { MachineDetection } from "@svc/scheduler/carriers/twilio/TwilioConfig.ts"
import { TwilioCallsRepo } from "@svc/store/carriers/twilio/TwilioCallsRepo.ts"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { Clock, Effect, Exit, Fiber, Layer, Option } from "effect"
import { type CallbackMode, scripts, type Step } from "../../apps/scheduler/test/fixtures/TwilioDouble.ts"
import { ACCOUNT, answers, OPTIONS, recordingPacer, twilioSide } from "./support/TwilioSide.ts"

const FROM = "+14155550100"
const Layers = TwilioCallsRepo.layer.pipe(Layer.provideMerge(TestDatabase.layer))

let serial = 0
const request = (): DialRequest => {
  const n = ++serial
  return {
    idempotency_key: `task_${process.pid}_${n}`,
    call_id: CallId.make(`call_${n}`),
    org_id: OrgId.make("org_1"),
    batch_call_id: BatchCallId.make("batch_1"),
    from_number: FROM,
    to_number: `+1415555${String(n).padStart(4, "0")}`,
    override_agent_id: "agent_a",
    custom_sip_headers: { "X-Campaign": "spring & summer" }
  }
}

const scenario = (
  setup: { readonly script?: (to: string) => ReadonlyArray<Step>; readonly callbacks?: CallbackMode } = {},
  settings: { readonly machineDetection?: MachineDetection } = {}
) =>
  Effect.gen(function*() {
    const side = yield* twilioSide({ ...setup, ...settings })
    return { ...side, repo: yield* TwilioCallsRepo }
  })

/**
 * Waits until no create request of `key` can still be in flight: `createSettledMs` since its request, on the clock
 * the adapter reads (live here). A lower bound: load can only make the wait longer, never the assertion after it
 * false.
 */
const settled = (key: string) =>
  Effect.gen(function*() {
    const repo = yield* TwilioCallsRepo
    const record = Option.getOrThrow(yield* repo.find(key).pipe(Effect.orDie))
    yield* waitUntil(
      `createSettledMs (${OPTIONS.createSettledMs} ms) since ${key} was requested`,
      Effect.map(Clock.currentTimeMillis, (now) => now - record.requestedAt >= OPTIONS.createSettledMs)
    )
  })

layer(Layers, { timeout: 60_000, excludeTestServices: true })("TwilioDialer", (it) => {
  it.effect("happy path: one call, connected to the agent's SIP URI, ends answered", () =>
    Effect.gen(function*() {
      const { dialer, double } = yield* scenario()
      const r = request()
      const ended = yield* dialer.dial(r)
      assert.strictEqual(ended.outcome, "answered")
      assert.strictEqual(ended.disconnection_reason, "user_hangup")
      assert.strictEqual(ended.call_id, r.call_id)
      assert.strictEqual(ended.idempotency_key, r.idempotency_key)
      assert.isTrue(ended.end_timestamp >= ended.start_timestamp)
      assert.strictEqual(double.createsFor(r.to_number, FROM), 1)
      const call = [...double.calls.values()].find((c) => c.to === r.to_number)!
      assert.include(call.twiml!, `<Sip>sip:${r.call_id}@agents.example.com:5060?`)
      assert.include(call.twiml!, "X-Svc-Override-Agent-Id=agent_a")
      // the value is percent-encoded in the URI, and the URI's & is XML-escaped by VoiceResponse
      assert.include(call.twiml!, "X-Campaign=spring%20%26%20summer")
      assert.include(call.twiml!, "&amp;")
      assert.isUndefined(call.machineDetection)
      assert.include(call.statusCallback!, `/carrier/twilio/status?key=${encodeURIComponent(r.idempotency_key)}`)
      // initiated, ringing, answered, completed: all signed, all received (late ones change nothing): svc-server
      // answers 204 to each, 403 to none
      yield* waitUntil(
        "the four callbacks answered",
        Effect.sync(() => double.callbacks.length === 4 && answers(double.callbacks).every((a) => a !== null)),
        { state: () => answers(double.callbacks) }
      )
      assert.deepStrictEqual(answers(double.callbacks), [204, 204, 204, 204])
      const looked = yield* dialer.lookup(r.idempotency_key)
      assert.deepStrictEqual(Option.getOrThrow(looked), ended)
    }).pipe(Effect.scoped))

  it.effect("busy and no-answer end as busy/dial_busy and no_answer/dial_no_answer; a SIP 404 failure is failed/invalid_destination", () =>
    Effect.gen(function*() {
      const outcomes = new Map<string, ReadonlyArray<Step>>()
      const { dialer } = yield* scenario({ script: (to) => outcomes.get(to) ?? scripts.answered() })
      const busy = request(), noAnswer = request(), failed = request()
      outcomes.set(busy.to_number, scripts.busy())
      outcomes.set(noAnswer.to_number, scripts.noAnswer())
      outcomes.set(failed.to_number, scripts.failed(404))
      const [b, n, f] = yield* Effect.all([dialer.dial(busy), dialer.dial(noAnswer), dialer.dial(failed)], {
        concurrency: "unbounded"
      })
      assert.deepStrictEqual([b.outcome, b.disconnection_reason], ["busy", "dial_busy"])
      assert.deepStrictEqual([n.outcome, n.disconnection_reason], ["no_answer", "dial_no_answer"])
      assert.deepStrictEqual([f.outcome, f.disconnection_reason], ["failed", "invalid_destination"])
    }).pipe(Effect.scoped))

  it.effect("machine detection: a machine answer ends answered with voicemail_reached; the mode is sent", () =>
    Effect.gen(function*() {
      const { dialer, double } = yield* scenario({ script: () => scripts.answered("machine_end_beep") }, {
        machineDetection: "DetectMessageEnd"
      })
      const r = request()
      const ended = yield* dialer.dial(r)
      assert.deepStrictEqual([ended.outcome, ended.disconnection_reason], ["answered", "voicemail_reached"])
      const call = [...double.calls.values()].find((c) => c.to === r.to_number)!
      assert.strictEqual(call.machineDetection, "DetectMessageEnd")
    }).pipe(Effect.scoped))

  it.effect("a refusal (21211) is DialRejected, no call exists, a redial is refused without a request, lookup answers None", () =>
    Effect.gen(function*() {
      const { dialer, double } = yield* scenario()
      double.createAnswers.push({ _tag: "Fail", status: 400, code: 21211, message: "Invalid 'To' Phone Number" })
      const r = request()
      const error = yield* Effect.flip(dialer.dial(r))
      assert.strictEqual(error._tag, "DialRejected")
      if (error._tag === "DialRejected") assert.include(error.reason, "invalid_destination")
      assert.strictEqual(double.createsFor(r.to_number, FROM), 0)
      const again = yield* Effect.flip(dialer.dial(r))
      assert.strictEqual(again._tag, "DialRejected")
      assert.strictEqual(double.createRequests, 1)
      assert.isTrue(Option.isNone(yield* dialer.lookup(r.idempotency_key)))
    }).pipe(Effect.scoped))

  it.effect("an invalid custom SIP header name, or one claiming X-Svc-, is DialRejected before any request", () =>
    Effect.gen(function*() {
      const { dialer, double } = yield* scenario()
      const bad = yield* Effect.flip(dialer.dial({ ...request(), custom_sip_headers: { "Via": "x" } }))
      assert.strictEqual(bad._tag, "DialRejected")
      const forged = yield* Effect.flip(
        dialer.dial({ ...request(), custom_sip_headers: { "X-Svc-Override-Agent-Id": "other" } })
      )
      assert.strictEqual(forged._tag, "DialRejected")
      assert.strictEqual(double.createRequests, 0)
    }).pipe(Effect.scoped))

  it.effect("429s hold every worker off through the pacer (growing, with jitter), then the create is sent again", () =>
    Effect.gen(function*() {
      const pacer = recordingPacer()
      const { dialer, double } = yield* twilioSide({ pacer: pacer.layer })
      double.createAnswers.push(
        { _tag: "Fail", status: 429, code: 20429 },
        { _tag: "Fail", status: 429, code: 20429 }
      )
      yield* dialer.dial(request())
      const kinds = pacer.calls.map(([kind]) => kind)
      // a slot before the first request and after each hold
      assert.deepStrictEqual(kinds, ["acquire", "backoff", "acquire", "backoff", "acquire"])
      assert.isTrue(pacer.calls.every(([, account]) => account === ACCOUNT))
      const [first, second] = pacer.calls.filter(([kind]) => kind === "backoff").map(([, , ms]) => ms!)
      // base 5 ms doubled per 429, plus up to as much again of jitter
      assert.isTrue(first! >= OPTIONS.backoffMs && first! <= 2 * OPTIONS.backoffMs, String(first))
      assert.isTrue(second! >= 2 * OPTIONS.backoffMs && second! <= 4 * OPTIONS.backoffMs, String(second))
    }).pipe(Effect.scoped))

  it.effect("429s beyond the limit free the key (no call exists): DialerUnavailable, then lookup answers None", () =>
    Effect.gen(function*() {
      const { dialer, double } = yield* scenario()
      for (let i = 0; i < OPTIONS.maxRateLimited; i++) double.createAnswers.push({ _tag: "Fail", status: 429 })
      const r = request()
      assert.strictEqual((yield* Effect.flip(dialer.dial(r)))._tag, "DialerUnavailable")
      assert.strictEqual(double.createRequests, OPTIONS.maxRateLimited)
      assert.isTrue(Option.isNone(yield* dialer.lookup(r.idempotency_key)))
      assert.strictEqual(double.createsFor(r.to_number, FROM), 0)
    }).pipe(Effect.scoped))

  it.effect("another 4xx (20003 authentication) is not the task's fault: DialerUnavailable, the key freed, no call", () =>
    Effect.gen(function*() {
      const { dialer, double, repo } = yield* scenario()
      double.createAnswers.push({ _tag: "Fail", status: 401, code: 20003, message: "Authenticate" })
      const r = request()
      const error = yield* Effect.flip(dialer.dial(r))
      assert.strictEqual(error._tag, "DialerUnavailable")
      assert.include(error.message, "20003")
      assert.isTrue(Option.isNone(yield* repo.find(r.idempotency_key)))
      assert.isTrue(Option.isNone(yield* dialer.lookup(r.idempotency_key)))
    }).pipe(Effect.scoped))

  it.effect("429s are retried after a back-off: one call", () =>
    Effect.gen(function*() {
      const { dialer, double } = yield* scenario()
      double.createAnswers.push(
        { _tag: "Fail", status: 429, code: 20429, message: "Too Many Requests" },
        { _tag: "Fail", status: 429, code: 20429, message: "Too Many Requests" }
      )
      const r = request()
      const ended = yield* dialer.dial(r)
      assert.strictEqual(ended.outcome, "answered")
      assert.strictEqual(double.createRequests, 3)
      assert.strictEqual(double.createsFor(r.to_number, FROM), 1)
    }).pipe(Effect.scoped))

  it.effect("a 500 is DialerUnavailable; lookup cannot say None until no request can be in flight, then frees the key for one redial", () =>
    Effect.gen(function*() {
      const { dialer, double, repo } = yield* scenario()
      double.createAnswers.push({ _tag: "Fail", status: 500, code: 20500, message: "Internal Server Error" })
      const r = request()
      const error = yield* Effect.flip(dialer.dial(r))
      assert.strictEqual(error._tag, "DialerUnavailable")
      assert.strictEqual(Option.getOrThrow(yield* repo.find(r.idempotency_key)).status, "requesting")
      const early = yield* Effect.flip(dialer.lookup(r.idempotency_key))
      assert.strictEqual(early._tag, "DialerUnavailable")
      yield* settled(r.idempotency_key)
      assert.isTrue(Option.isNone(yield* dialer.lookup(r.idempotency_key)))
      assert.isTrue(Option.isNone(yield* repo.find(r.idempotency_key)))
      const ended = yield* dialer.dial(r)
      assert.strictEqual(ended.outcome, "answered")
      assert.strictEqual(double.createsFor(r.to_number, FROM), 1)
    }).pipe(Effect.scoped))

  it.effect("a create whose response never arrives: lookup finds the one call through the Calls list, a redial joins it", () =>
    Effect.gen(function*() {
      // no callbacks: only the Calls list (lookup) and fetches (dial) can learn about the call
      const { dialer, double, repo } = yield* scenario({ callbacks: "never", script: () => scripts.ringing() })
      double.createAnswers.push({ _tag: "CreateAndHang" })
      const r = request()
      const error = yield* Effect.flip(dialer.dial(r))
      assert.strictEqual(error._tag, "DialerUnavailable")
      assert.strictEqual(double.createsFor(r.to_number, FROM), 1)
      assert.strictEqual(Option.getOrThrow(yield* repo.find(r.idempotency_key)).callSid, null)
      yield* waitUntil(
        "the call ringing at the double",
        Effect.sync(() => double.callsTo(r.to_number)[0]?.status === "ringing")
      )
      const ongoing = Option.getOrThrow(yield* dialer.lookup(r.idempotency_key))
      assert.strictEqual(ongoing._tag, "CallOngoing")
      assert.strictEqual(ongoing.call_id, r.call_id)
      const sid = Option.getOrThrow(yield* repo.find(r.idempotency_key)).callSid!
      assert.isTrue(double.calls.has(sid))
      // the redial (after lookup) joins the call: no second create; the end is learnt by fetching it
      const fiber = yield* Effect.forkChild(dialer.dial(r))
      double.finish(sid, { status: "completed" })
      const ended = yield* Fiber.join(fiber)
      assert.strictEqual(ended.outcome, "answered")
      assert.strictEqual(double.createsFor(r.to_number, FROM), 1)
      assert.strictEqual(double.createRequests, 1)
    }).pipe(Effect.scoped))

  it.effect("lookup of a record left requesting: Twilio unreachable or two candidate calls is DialerUnavailable, never None; a call attached to another key is not taken", () =>
    Effect.gen(function*() {
      const { client, dialer, double, repo } = yield* scenario({ callbacks: "never", script: () => scripts.ringing() })
      double.createAnswers.push({ _tag: "CreateAndHang" })
      const r = request()
      assert.strictEqual((yield* Effect.flip(dialer.dial(r)))._tag, "DialerUnavailable")
      yield* settled(r.idempotency_key)
      // Twilio cannot be asked: never None, even long after the request
      double.listFailures.push(500)
      assert.strictEqual((yield* Effect.flip(dialer.lookup(r.idempotency_key)))._tag, "DialerUnavailable")
      // a second call between the same numbers (another key's, whose record has no SID yet): ambiguous
      const other = yield* client.create({
        to: r.to_number,
        from: FROM,
        twiml: "<Response/>",
        statusCallback: "http://127.0.0.1:9/none",
        machineDetection: "off",
        ringTimeoutS: 30
      })
      const ambiguous = yield* Effect.flip(dialer.lookup(r.idempotency_key))
      assert.strictEqual(ambiguous._tag, "DialerUnavailable")
      assert.include(ambiguous.message, "2 Twilio calls")
      assert.strictEqual(Option.getOrThrow(yield* repo.find(r.idempotency_key)).status, "requesting")
      // once the other call is attached to its key, this key's call is the only candidate
      const otherKey = `${r.idempotency_key}_other`
      yield* repo.reserve({
        idempotencyKey: otherKey,
        callId: CallId.make("call_other"),
        accountSid: ACCOUNT,
        fromNumber: FROM,
        toNumber: r.to_number
      }, Date.now())
      yield* repo.attachSid(otherKey, other.sid, other.status, Date.now())
      const found = Option.getOrThrow(yield* dialer.lookup(r.idempotency_key))
      assert.strictEqual(found._tag, "CallOngoing")
      const sid = Option.getOrThrow(yield* repo.find(r.idempotency_key)).callSid
      assert.isNotNull(sid)
      assert.notStrictEqual(sid, other.sid)
      assert.strictEqual(double.createsFor(r.to_number, FROM), 2)
    }).pipe(Effect.scoped))

  it.effect("asks Twilio for every progress event, POSTed, and for the ring timeout as Timeout: a call nobody answers ends no_answer when it passes", () =>
    Effect.gen(function*() {
      // Twilio sends only the events a create asks for, by the method it asks for, and ends an unanswered call after
      // Timeout seconds (the double's Twilio docs, TwilioDouble.ts [CALL]); one Twilio second is 10 ms here
      const { dialer, double } = yield* twilioSide({ script: () => scripts.ringing(), ringTimeoutS: 5 })
      double.msPerSecond = 10
      const r = request()
      const ended = yield* dialer.dial(r)
      assert.deepStrictEqual([ended.outcome, ended.disconnection_reason], ["no_answer", "dial_no_answer"])
      const [call] = double.callsTo(r.to_number)
      assert.strictEqual(call!.timeoutS, 5)
      assert.strictEqual(call!.statusCallbackMethod, "POST")
      assert.deepStrictEqual([...call!.statusCallbackEvents].sort(), ["answered", "completed", "initiated", "ringing"])
      // (Date.now() may read 1 ms less than the timer's own clock)
      assert.isAtLeast(call!.endTime! - call!.startTime!, 5 * double.msPerSecond - 1)
      yield* waitUntil(
        "the three callbacks answered",
        Effect.sync(() => double.callbacks.length === 3 && answers(double.callbacks).every((a) => a !== null)),
        { state: () => answers(double.callbacks) }
      )
      assert.deepStrictEqual(double.callbacks.map((c) => [c.callStatus, c.httpStatus]), [
        ["initiated", 204],
        ["ringing", 204],
        ["no-answer", 204]
      ])
    }).pipe(Effect.scoped))

  it.effect("a lost end callback: the end is fetched from Twilio, and the call still starts when it was answered, not when it was dialled", () =>
    Effect.gen(function*() {
      // Twilio's start_time is the dial ("Empty if the call has not yet been dialed"); the record's start is the
      // answer's callback Timestamp (decision 0606). Answered over a second after the dial, so the two differ
      const { dialer, double } = yield* scenario({
        script: () => [
          { status: "initiated", afterMs: 5 },
          { status: "ringing", afterMs: 5 },
          { status: "in-progress", afterMs: 1_100 },
          { status: "completed", afterMs: 50 }
        ]
      })
      double.loseCallback = (_, event) => event === "completed"
      const r = request()
      const ended = yield* dialer.dial(r)
      const [call] = double.callsTo(r.to_number)
      assert.isAtLeast(double.fetches.get(call!.sid) ?? 0, 1, "the end was fetched")
      const second = (ms: number) => Math.floor(ms / 1000) * 1000
      assert.strictEqual(ended.start_timestamp, second(call!.answerTime!), "the answer's callback Timestamp")
      assert.notStrictEqual(ended.start_timestamp, second(call!.startTime!))
      assert.deepStrictEqual([ended.outcome, ended.disconnection_reason], ["answered", "user_hangup"])
    }).pipe(Effect.scoped))

  it.effect("no callbacks at all: a busy call learnt by fetching lasted 0 ms, as its callbacks would have said", () =>
    Effect.gen(function*() {
      // a busy call has a start_time (it was dialled) but no end_time and no duration (TwilioDouble.ts [CALL]); its
      // completed callback says CallDuration 0
      const { dialer, double } = yield* scenario({ callbacks: "never", script: () => scripts.busy() })
      const r = request()
      const ended = yield* dialer.dial(r)
      assert.deepStrictEqual([ended.outcome, ended.disconnection_reason], ["busy", "dial_busy"])
      assert.strictEqual(double.callbacksSent, 0)
      assert.strictEqual(ended.duration_ms, 0)
      assert.strictEqual(ended.start_timestamp, ended.end_timestamp)
    }).pipe(Effect.scoped))

  for (const mode of ["reversed", "duplicated", "never"] as const) {
    it.effect(`callbacks ${mode}: dial still ends with the call's true end`, () =>
      Effect.gen(function*() {
        const { dialer, double } = yield* scenario({ callbacks: mode, script: () => scripts.busy() })
        const r = request()
        const ended = yield* dialer.dial(r)
        assert.deepStrictEqual([ended.outcome, ended.disconnection_reason], ["busy", "dial_busy"])
        assert.strictEqual(double.createsFor(r.to_number, FROM), 1)
        if (mode === "never") assert.strictEqual(double.callbacksSent, 0)
      }).pipe(Effect.scoped))
  }

  it.effect("two concurrent dials of one key: one call, both answer its end", () =>
    Effect.gen(function*() {
      const { dialer, double } = yield* scenario()
      const r = request()
      const results = yield* Effect.all([dialer.dial(r), dialer.dial(r), dialer.dial(r)], {
        concurrency: "unbounded"
      })
      assert.strictEqual(double.createsFor(r.to_number, FROM), 1)
      assert.strictEqual(double.createRequests, 1)
      assert.deepStrictEqual(results[1], results[0])
      assert.deepStrictEqual(results[2], results[0])
    }).pipe(Effect.scoped))

  it.effect("interrupting dial does not hang up: the call goes on, lookup reports it ongoing, then ended", () =>
    Effect.gen(function*() {
      const { dialer, double, repo } = yield* scenario({ script: () => scripts.ringing() })
      const r = request()
      const fiber = yield* Effect.forkChild(dialer.dial(r))
      // interrupted while it waits for the call's end: the call exists, rings, and its record has its SID
      yield* waitUntil(
        "the call ringing and its SID recorded",
        Effect.map(repo.find(r.idempotency_key), (found) =>
          double.callsTo(r.to_number)[0]?.status === "ringing" &&
          Option.isSome(found) && found.value.callSid !== null).pipe(Effect.orDie),
        { state: () => double.callsTo(r.to_number).map((c) => c.status) }
      )
      const exit = yield* Fiber.interrupt(fiber).pipe(Effect.andThen(Fiber.await(fiber)))
      assert.isTrue(Exit.isFailure(exit))
      const call = [...double.calls.values()].find((c) => c.to === r.to_number)!
      assert.strictEqual(call.status, "ringing")
      assert.strictEqual(Option.getOrThrow(yield* dialer.lookup(r.idempotency_key))._tag, "CallOngoing")
      double.finish(call.sid, { status: "no-answer" })
      yield* waitUntil(
        "the no-answer callback applied",
        Effect.map(dialer.lookup(r.idempotency_key), (l) => Option.isSome(l) && l.value._tag === "CallEnded").pipe(
          Effect.orDie
        )
      )
      const ended = Option.getOrThrow(yield* dialer.lookup(r.idempotency_key))
      assert.strictEqual(ended._tag, "CallEnded")
      if (ended._tag === "CallEnded") assert.strictEqual(ended.outcome, "no_answer")
    }).pipe(Effect.scoped))
})
