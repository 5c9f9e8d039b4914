/**
 * Runs one scripted test case against a custom-LLM WebSocket server, speaking the protocol as the platform does
 * (reference: custom-llm-protocol.md; decision 0703), and judges it with the domain's `Verdict.judge`.
 *
 * - Connects to `{llm_websocket_url}/{call_id}`: up to `connectAttempts` (3) tries of `connectTimeoutMs` (7 s) each.
 *   A caller-supplied `refuseAddress` is applied to every address the socket would connect to (the call webhooks'
 *   address rule, decision 0523, for the scheduler; the CLI runs against local servers and passes none).
 * - Waits for the begin message (`response_id` 0), answering a `config` that asks for `call_details` and
 *   `auto_reconnect` (a `ping_pong` at once, then every 2 s); then sends one `response_required` per user turn, with
 *   the transcript so far (and `transcript_with_tool_calls` when the config asked for it), and waits for that id's
 *   reply to complete. Frames of an older id are dropped (a newer `response_id` makes earlier ones obsolete).
 * - Records `tool_call_invocation` / `tool_call_result` in the turn, and ends the conversation at `end_call` or
 *   when the server closes with 1000 (agent_hangup).
 * - Ends the run `error`, with an explanation naming the broken rule, on: connection failure, a binary frame (closes
 *   with 1007), malformed JSON, a `content_complete` that is not a boolean, a reply that does not complete within
 *   `replyTimeoutMs`, a response to an id never sent, or the server closing with another code mid-conversation.
 *
 * Time (latencies, timeouts) is Effect's `Clock`, so tests can pin it.
 */
import * as Protocol from "@svc/domain/batchTests/Protocol.ts"
import type { ScriptedDefinition } from "@svc/domain/batchTests/TestCaseDefinition.ts"
import {
  type AgentTurn,
  type Ending,
  judge,
  type RunRecord,
  transcriptSnapshot,
  type Verdict
} from "@svc/domain/batchTests/Verdict.ts"
import { Clock, Duration, Effect, Exit, Option, Queue, Schedule, Scope } from "effect"
import * as dns from "node:dns"
import * as net from "node:net"
import WebSocket from "ws"

/** How a run connects and how long it waits. @category models */
export interface RunnerOptions {
  readonly connectAttempts: number
  readonly connectTimeoutMs: number
  /** from a `response_required` (or the connection, for the begin message) to the reply's completing frame */
  readonly replyTimeoutMs: number
  /** why an address must not be connected to, or undefined when it may */
  readonly refuseAddress?: ((address: string) => string | undefined) | undefined
}

/** The protocol's connection rule (3 tries, about 7 s each) and a 10 s reply bound (decision 0703). */
export const defaults: RunnerOptions = { connectAttempts: 3, connectTimeoutMs: 7_000, replyTimeoutMs: 10_000 }

/** A run's result: the verdict and what to store as `transcript_snapshot`. @category models */
export interface RunOutcome {
  readonly verdict: Verdict
  readonly transcript: unknown
}

type Event =
  | { readonly _tag: "text"; readonly text: string }
  | { readonly _tag: "binary" }
  | { readonly _tag: "close"; readonly code: number; readonly reason: string }

class ProtocolFault implements Fault {
  readonly explanation: string
  constructor(explanation: string) {
    this.explanation = explanation
  }
}

/** The URL a call connects to: `{llm_websocket_url}/{call_id}`. @category encoding */
export const callUrl = (base: string, callId: string): string =>
  `${base.endsWith("/") ? base.slice(0, -1) : base}/${encodeURIComponent(callId)}`

const lookupWith = (refuse: (address: string) => string | undefined) =>
(
  hostname: string,
  options: dns.LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | Array<dns.LookupAddress>, family?: number) => void
) =>
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error !== null) return callback(error, [])
    const refused = addresses.map((a) => refuse(a.address)).find((why) => why !== undefined)
    if (refused !== undefined) {
      return callback(Object.assign(new Error(`refused: ${refused}`), { code: "EREFUSED_ADDRESS" }), [])
    }
    if (options.all === true) return callback(null, addresses)
    const first = addresses[0]!
    return callback(null, first.address, first.family)
  })

/** One connection attempt: the open socket, its events in a queue, closed with the scope. */
const connectOnce = (url: string, options: RunnerOptions) =>
  Effect.gen(function*() {
    const scope = yield* Scope.Scope
    const events = yield* Queue.unbounded<Event>()
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "")
    if (options.refuseAddress !== undefined && net.isIP(host) !== 0) {
      const refused = options.refuseAddress(host)
      if (refused !== undefined) return yield* Effect.fail(`refused: ${refused}`)
    }
    const socket = yield* Effect.callback<WebSocket, string>((resume) => {
      const ws = new WebSocket(url, {
        handshakeTimeout: options.connectTimeoutMs,
        ...(options.refuseAddress === undefined ? {} : { lookup: lookupWith(options.refuseAddress) })
      })
      ws.on("message", (data, isBinary) => {
        Queue.offerUnsafe(events, isBinary ? { _tag: "binary" } : { _tag: "text", text: data.toString() })
      })
      ws.on("close", (code, reason) => {
        Queue.offerUnsafe(events, { _tag: "close", code, reason: reason.toString() })
      })
      ws.once("open", () => resume(Effect.succeed(ws)))
      ws.once("unexpected-response", (_request, response) => {
        resume(Effect.fail(`the server answered the upgrade with HTTP ${response.statusCode}`))
        ws.terminate()
      })
      ws.once("error", (error) => resume(Effect.fail(error.message)))
      return Effect.sync(() => ws.terminate())
    })
    yield* Scope.addFinalizer(
      scope,
      Effect.sync(() => {
        if (socket.readyState === WebSocket.OPEN) socket.close(1000)
        else socket.terminate()
      })
    )
    return { socket, events }
  })

/**
 * Connects with the protocol's retries; fails with the explanation naming the rule.
 *
 * @category constructors
 */
export const connect = (url: string, options: RunnerOptions) =>
  Effect.gen(function*() {
    let last = ""
    for (let attempt = 1; attempt <= options.connectAttempts; attempt++) {
      const scope = yield* Scope.Scope
      const child = yield* Scope.fork(scope)
      const result = yield* connectOnce(url, options).pipe(Scope.provide(child), Effect.result)
      if (result._tag === "Success") return result.success
      last = result.failure
      yield* Scope.close(child, Exit.void)
    }
    return yield* Effect.fail(
      new ProtocolFault(
        `could not connect to ${url} after ${options.connectAttempts} attempts: ${last} (rule: ${Protocol.rules.connect})`
      )
    )
  })

interface MutableTurn {
  turn: number
  content: string
  tool_calls: Array<AgentTurn["tool_calls"][number]>
  tool_results: Array<AgentTurn["tool_results"][number]>
  end_call: boolean
  latency_ms: number | undefined
  stale_frames: number
}

const freeze = (turn: MutableTurn): AgentTurn => ({ ...turn, latency_ms: turn.latency_ms ?? 0 })

/** A failure that ends a run `error`: `explanation` names the rule broken or what failed. @category models */
export interface Fault {
  readonly explanation: string
}

/**
 * What the caller says next (`index` 0 is the first user turn), given the transcript so far: the text, or undefined
 * when the caller has nothing more to say. A scripted run reads `user_turns`; a simulation asks a model.
 *
 * @category models
 */
export type NextTurn<R> = (
  index: number,
  transcript: ReadonlyArray<Protocol.Utterance>
) => Effect.Effect<string | undefined, Fault, R>

/**
 * The conversation over an open socket: returns how it ended, or fails with the fault.
 */
const converse = <R>(
  socket: WebSocket,
  events: Queue.Queue<Event>,
  dynamicVariables: ScriptedDefinition["dynamic_variables"],
  nextTurn: NextTurn<R>,
  said: Array<string>,
  callId: string,
  options: RunnerOptions,
  turns: Array<MutableTurn>
) =>
  Effect.gen(function*() {
    let config: Protocol.ServerConfig = {
      auto_reconnect: false,
      call_details: false,
      transcript_with_tool_calls: false
    }
    const transcript: Array<Protocol.Utterance> = []
    const withTools: Array<Protocol.ToolTranscriptEntry> = []
    const send = (text: string) => Effect.sync(() => socket.send(text))

    /** Reads frames until reply `id` completes; returns whether the conversation ended (end_call or hang-up). */
    const awaitReply = (id: number, startedAt: number) =>
      Effect.gen(function*() {
        const turn: MutableTurn = {
          turn: id,
          content: "",
          tool_calls: [],
          tool_results: [],
          end_call: false,
          latency_ms: undefined,
          stale_frames: 0
        }
        turns.push(turn)
        const deadline = startedAt + options.replyTimeoutMs
        while (true) {
          const now = yield* Clock.currentTimeMillis
          const event = yield* Queue.take(events).pipe(
            Effect.timeoutOption(Duration.millis(Math.max(0, deadline - now)))
          )
          if (Option.isNone(event)) {
            return yield* Effect.fail(
              new ProtocolFault(
                id === 0
                  ? `no begin message (response_id 0 with content_complete: true) within ${options.replyTimeoutMs} ms ` +
                    `(rule: ${Protocol.rules.begin})`
                  : `turn ${id}: the reply to response_id ${id} did not complete within ${options.replyTimeoutMs} ms ` +
                    `(rule: ${Protocol.rules.timeout})`
              )
            )
          }
          const e = event.value
          if (e._tag === "binary") {
            socket.close(1007, "binary frame")
            return yield* Effect.fail(new ProtocolFault(`turn ${id}: a binary frame (rule: ${Protocol.rules.binary})`))
          }
          if (e._tag === "close") {
            if (e.code === 1000) return "agent_hangup" as const
            return yield* Effect.fail(
              new ProtocolFault(
                `turn ${id}: the server closed the connection with code ${e.code}${
                  e.reason === "" ? "" : ` (${e.reason})`
                } before the reply completed (rule: ${Protocol.rules.closed})`
              )
            )
          }
          const parsed = Protocol.parseServerFrame(e.text)
          if (!parsed.ok) {
            socket.close(1002, "protocol error")
            return yield* Effect.fail(new ProtocolFault(`turn ${id}: ${parsed.violation}`))
          }
          const frame = parsed.frame
          switch (frame.kind) {
            case "config": {
              config = frame.config
              if (config.call_details) {
                yield* send(Protocol.callDetails({
                  call_id: callId,
                  call_type: "web_call",
                  call_status: "ongoing",
                  retell_llm_dynamic_variables: dynamicVariables,
                  metadata: { svc_test: true }
                }))
              }
              if (config.auto_reconnect) yield* send(Protocol.pingPong(yield* Clock.currentTimeMillis))
              break
            }
            case "response": {
              if (frame.response_id < id) {
                // spec: a newer response_id makes every earlier one obsolete: its content is dropped
                turn.stale_frames++
                break
              }
              if (frame.response_id > id) {
                return yield* Effect.fail(
                  new ProtocolFault(
                    `turn ${id}: a response for response_id ${frame.response_id}, which was never sent ` +
                      `(rule: ${Protocol.rules.futureId})`
                  )
                )
              }
              if (turn.latency_ms === undefined) turn.latency_ms = (yield* Clock.currentTimeMillis) - startedAt
              turn.content += frame.content
              if (frame.end_call) turn.end_call = true
              if (frame.content_complete) return turn.end_call ? "end_call" as const : "continue" as const
              break
            }
            case "agent_interrupt": {
              turn.content += frame.content
              if (frame.end_call) turn.end_call = true
              break
            }
            case "tool_call_invocation": {
              const call = { tool_call_id: frame.tool_call_id, name: frame.name, arguments: frame.arguments }
              turn.tool_calls.push(call)
              withTools.push({ role: "tool_call_invocation", ...call })
              break
            }
            case "tool_call_result": {
              const result = { tool_call_id: frame.tool_call_id, content: frame.content }
              turn.tool_results.push(result)
              withTools.push({ role: "tool_call_result", ...result })
              break
            }
            default:
              // ping_pong echoes, update_agent and metadata change nothing a scripted run judges
              break
          }
        }
      })

    const afterReply = (turn: MutableTurn) => {
      if (turn.content !== "") {
        transcript.push({ role: "agent", content: turn.content })
        withTools.push({ role: "agent", content: turn.content })
      }
    }

    const opened = yield* Clock.currentTimeMillis
    const pings = Effect.gen(function*() {
      if (config.auto_reconnect) yield* send(Protocol.pingPong(yield* Clock.currentTimeMillis))
    }).pipe(Effect.repeat(Schedule.spaced(Duration.seconds(2))))
    yield* Effect.forkScoped(pings)

    const begin = yield* awaitReply(0, opened)
    afterReply(turns[0]!)
    if (begin !== "continue") return begin
    for (let index = 0;; index++) {
      const next = yield* nextTurn(index, transcript)
      if (next === undefined) return "script_done" as const
      said.push(next)
      transcript.push({ role: "user", content: next })
      withTools.push({ role: "user", content: next })
      const sentAt = yield* Clock.currentTimeMillis
      yield* send(
        Protocol.responseRequired(index + 1, transcript, config.transcript_with_tool_calls ? withTools : undefined)
      )
      const ended = yield* awaitReply(index + 1, sentAt)
      afterReply(turns[index + 1]!)
      if (ended !== "continue") return ended
    }
  })

/** A conversation as the runner saw it: the agent's turns, what the caller said, and how it ended. @category models */
export interface Conversation {
  readonly turns: ReadonlyArray<AgentTurn>
  /** the caller's turns, in order (`said[n-1]` was answered by turn n) */
  readonly said: ReadonlyArray<string>
  readonly result: { readonly _tag: "ended"; readonly ending: Ending } | {
    readonly _tag: "fault"
    readonly explanation: string
  }
}

/**
 * Holds one conversation as call `callId` with the server at `url`, the caller's turns from `nextTurn`. Never fails:
 * a connection or protocol fault, or a fault of `nextTurn`, is the result `fault` with what was recorded until then.
 *
 * @category constructors
 */
export const converseWith = <R>(
  url: string,
  callId: string,
  dynamicVariables: ScriptedDefinition["dynamic_variables"],
  nextTurn: NextTurn<R>,
  options: RunnerOptions = defaults
): Effect.Effect<Conversation, never, R> =>
  Effect.scoped(Effect.gen(function*() {
    const turns: Array<MutableTurn> = []
    const said: Array<string> = []
    const result = yield* Effect.gen(function*() {
      const { events, socket } = yield* connect(callUrl(url, callId), options)
      return yield* converse(socket, events, dynamicVariables, nextTurn, said, callId, options, turns)
    }).pipe(Effect.result)
    return {
      turns: turns.map(freeze),
      said,
      result: result._tag === "Failure"
        ? { _tag: "fault", explanation: result.failure.explanation }
        : { _tag: "ended", ending: result.success }
    }
  }))

/**
 * Runs a scripted definition as call `callId` against the server at `url`. Never fails: protocol and connection
 * faults are `error` verdicts naming the rule.
 *
 * @category constructors
 */
export const runScripted = (
  url: string,
  callId: string,
  definition: Pick<ScriptedDefinition, "user_turns" | "assertions" | "dynamic_variables">,
  options: RunnerOptions = defaults
): Effect.Effect<RunOutcome> =>
  Effect.map(
    converseWith(
      url,
      callId,
      definition.dynamic_variables,
      (index) => Effect.succeed(definition.user_turns[index]),
      options
    ),
    (conversation) => {
      if (conversation.result._tag === "fault") {
        const partial: RunRecord = { turns: conversation.turns, ending: "script_done" }
        return {
          verdict: { status: "error", explanation: conversation.result.explanation },
          transcript: { ...transcriptSnapshot(definition, partial), ending: "error" }
        }
      }
      const record: RunRecord = { turns: conversation.turns, ending: conversation.result.ending }
      return { verdict: judge(definition.assertions, record), transcript: transcriptSnapshot(definition, record) }
    }
  )
