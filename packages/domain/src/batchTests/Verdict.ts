/**
 * What a scripted run recorded and how it is judged (decision 0701). A run's record is the agent's turns
 * (turn 0 the begin message, turn n the reply to `user_turns[n-1]`), each with its text, tool calls, `end_call`
 * and latency; `judge` applies every assertion to it and returns `pass`, or `fail` with an explanation that names
 * each failed assertion by its index, in order. The judgement is a pure function of the record, so the same
 * record always gives byte-identical verdicts; only `max_latency_ms` reads timings
 * (decision 0701).
 */
import type { Assertion, ScriptedDefinition } from "./TestCaseDefinition.ts"

/** A tool call the agent made during a turn. @category models */
export interface ToolCall {
  readonly tool_call_id: string
  readonly name: string
  /** as sent: a JSON string */
  readonly arguments: string
}

/** A tool call's result the agent reported. @category models */
export interface ToolResult {
  readonly tool_call_id: string
  readonly content: string
}

/** One agent turn as the runner saw it. @category models */
export interface AgentTurn {
  readonly turn: number
  readonly content: string
  readonly tool_calls: ReadonlyArray<ToolCall>
  readonly tool_results: ReadonlyArray<ToolResult>
  readonly end_call: boolean
  /** ms from the request (connection, for turn 0) to the first frame of the reply */
  readonly latency_ms: number
  /** frames of stale response ids dropped during this turn */
  readonly stale_frames: number
}

/** How the conversation ended. @category models */
export type Ending = "script_done" | "end_call" | "agent_hangup"

/** The record of a completed run (one that did not end in a protocol error). @category models */
export interface RunRecord {
  readonly turns: ReadonlyArray<AgentTurn>
  readonly ending: Ending
}

/** A run's result. @category models */
export interface Verdict {
  readonly status: "pass" | "fail" | "error"
  readonly explanation: string
}

const quote = (text: string): string => {
  const shown = text.length > 120 ? `${text.slice(0, 117)}...` : text
  return JSON.stringify(shown)
}

/** `{a: 1}` partially matches `{a: 1, b: 2}`: every listed key is deep-equal (the vendor's `partial_match`). */
const partialMatch = (expected: unknown, actual: unknown): boolean => {
  if (typeof expected !== "object" || expected === null) return Object.is(expected, actual)
  if (typeof actual !== "object" || actual === null) return false
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length &&
      expected.every((item, i) => partialMatch(item, actual[i]))
  }
  if (Array.isArray(actual)) return false
  return Object.entries(expected).every(([key, value]) =>
    Object.hasOwn(actual, key) && partialMatch(value, (actual as Record<string, unknown>)[key])
  )
}

const parseArguments = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const describe = (assertion: Assertion): string => {
  switch (assertion.type) {
    case "contains":
    case "not_contains":
    case "regex":
      return `${assertion.type} ${quote(assertion.value)}${
        assertion.turn === undefined ? "" : ` (turn ${assertion.turn})`
      }`
    case "tool_called":
      return `tool_called ${quote(assertion.name)}${
        assertion.arguments === undefined ? "" : ` with arguments ${JSON.stringify(assertion.arguments)}`
      }`
    case "ends_call":
      return "ends_call"
    case "max_latency_ms":
      return `max_latency_ms ${assertion.value}`
  }
}

/** Why `assertion` fails on `record`, or undefined when it holds. */
const failure = (assertion: Assertion, record: RunRecord): string | undefined => {
  switch (assertion.type) {
    case "contains":
    case "not_contains":
    case "regex": {
      const test = assertion.type === "regex"
        ? ((regex: RegExp) => (text: string) => regex.test(text))(new RegExp(assertion.value, "u"))
        : (text: string) => text.includes(assertion.value)
      if (assertion.turn !== undefined) {
        const turn = record.turns.find((t) => t.turn === assertion.turn)
        if (turn === undefined) {
          return `turn ${assertion.turn} was never reached (the conversation ended after turn ${
            record.turns.length - 1
          }: ${record.ending})`
        }
        const hit = test(turn.content)
        if (assertion.type === "not_contains") return hit ? `the reply ${quote(turn.content)} contains it` : undefined
        return hit
          ? undefined
          : `the reply ${quote(turn.content)} does not ${assertion.type === "regex" ? "match" : "contain it"}`
      }
      if (assertion.type === "not_contains") {
        const turn = record.turns.find((t) => test(t.content))
        return turn === undefined ? undefined : `turn ${turn.turn}'s reply ${quote(turn.content)} contains it`
      }
      return record.turns.some((t) => test(t.content))
        ? undefined
        : `no reply ${assertion.type === "regex" ? "matches" : "contains it"} (${record.turns.length} replies)`
    }
    case "tool_called": {
      const calls = record.turns.flatMap((t) => t.tool_calls).filter((call) => call.name === assertion.name)
      if (calls.length === 0) {
        const names = [...new Set(record.turns.flatMap((t) => t.tool_calls).map((c) => c.name))]
        return names.length === 0 ? "no tool was called" : `not called (tools called: ${names.join(", ")})`
      }
      if (assertion.arguments === undefined) return undefined
      return calls.some((call) => partialMatch(assertion.arguments, parseArguments(call.arguments)))
        ? undefined
        : `called with other arguments: ${calls.map((c) => c.arguments).join("; ")}`
    }
    case "ends_call":
      return record.ending === "script_done"
        ? `the agent did not end the call (all ${record.turns.length - 1} user turns were answered)`
        : undefined
    case "max_latency_ms": {
      const slow = record.turns.find((t) => t.latency_ms > assertion.value)
      return slow === undefined ? undefined : `turn ${slow.turn} took ${slow.latency_ms} ms to its first frame`
    }
  }
}

/**
 * Judges a completed run: `pass` when every assertion holds, else `fail` naming each failed one.
 *
 * @category constructors
 */
export const judge = (assertions: ReadonlyArray<Assertion>, record: RunRecord): Verdict => {
  const failures: Array<string> = []
  assertions.forEach((assertion, index) => {
    const why = failure(assertion, record)
    if (why !== undefined) failures.push(`assertions[${index}] ${describe(assertion)} failed: ${why}`)
  })
  return failures.length === 0
    ? { status: "pass", explanation: `all ${assertions.length} assertions passed` }
    : { status: "fail", explanation: failures.join("; ") }
}

/**
 * The run's `transcript_snapshot`: the conversation as the platform's transcripts show it (utterances, and
 * with tool calls), the ending, and each turn's latency.
 *
 * @category encoding
 */
export const transcriptSnapshot = (definition: Pick<ScriptedDefinition, "user_turns">, record: RunRecord) => {
  const transcript: Array<{ role: "agent" | "user"; content: string }> = []
  const withTools: Array<Record<string, unknown>> = []
  for (const turn of record.turns) {
    if (turn.turn > 0) {
      const said = definition.user_turns[turn.turn - 1] ?? ""
      transcript.push({ role: "user", content: said })
      withTools.push({ role: "user", content: said })
    }
    for (const call of turn.tool_calls) withTools.push({ role: "tool_call_invocation", ...call })
    for (const result of turn.tool_results) withTools.push({ role: "tool_call_result", ...result })
    if (turn.content !== "") {
      transcript.push({ role: "agent", content: turn.content })
      withTools.push({ role: "agent", content: turn.content })
    }
  }
  return {
    transcript,
    transcript_with_tool_calls: withTools,
    ending: record.ending,
    turns: record.turns.map((t) => ({ turn: t.turn, latency_ms: t.latency_ms, end_call: t.end_call }))
  }
}
