/**
 * Runs one simulation test case (the vendor's kind: `user_prompt`, `metrics`; decision 0706) against a
 * custom-LLM WebSocket server: a chat-completions model plays the caller from `user_prompt`, the server answers as
 * the agent over the same protocol a scripted run speaks (`Runner.converseWith`), and one judge call per metric
 * decides pass or fail with a reason (decision 0706).
 *
 * - The caller model gets `user_prompt` in its instructions and the transcript so far (the agent's turns as `user`
 *   messages, its own as `assistant`); it answers its next turn, or `endToken` when the conversation is over.
 * - The conversation ends when the caller says it is over, the agent ends the call (`end_call`, or a close with
 *   1000), or after `maxTurns` caller turns; then each metric is judged in order, one call each.
 * - Verdict: `pass` only when every metric passes ("all N metrics passed"); otherwise `fail` naming each failed
 *   metric with the judge's reason, in order. A protocol fault of the agent, a failure of the chat-completions
 *   endpoint (HTTP 4xx/5xx, a body that is not a chat completion, no answer in time) or an answer of the judge that
 *   is not `{pass, reason}` ends the run `error` naming what failed; so does a run longer than `maxDurationMs`.
 *
 * Time is Effect's `Clock`, so tests can pin it.
 */
import type { TestCaseDefinition } from "@svc/domain/batchTests/TestCaseDefinition.ts"
import { transcriptSnapshot } from "@svc/domain/batchTests/Verdict.ts"
import { Duration, Effect, Option } from "effect"
import type { HttpClient } from "effect/http"
import { type ChatMessage, type ChatSettings, complete } from "./ChatCompletions.ts"
import { converseWith, defaults as runnerDefaults, type RunnerOptions, type RunOutcome } from "./Runner.ts"

/** @category models */
export type SimulationDefinition = Extract<TestCaseDefinition, { readonly type: "simulation" }>

/** How a simulation runs (decision 0706). @category models */
export interface SimulationOptions {
  readonly runner: RunnerOptions
  readonly llm: ChatSettings
  /** caller turns at most; the conversation is then judged as it stands */
  readonly maxTurns: number
  /** the whole run (conversation and judging) at most */
  readonly maxDurationMs: number
}

/** 20 caller turns, 10 minutes a run (decision 0706). */
export const limits = { maxTurns: 20, maxDurationMs: 600_000 } as const

/** What the caller model answers when the conversation is over. */
export const endToken = "[END_CALL]"

/** The caller model's instructions: the definition's `user_prompt` inside the rules of the game. */
export const callerInstructions = (userPrompt: string): string =>
  "You play the caller in a phone call with a company's AI voice agent, to test that agent. " +
  "Stay in your role as described below. Each time, answer with only the words you say next, as plain text. " +
  `When the conversation is over for you (you have what you called for, or you hang up), answer exactly ${endToken}.` +
  `\n\nYour role:\n${userPrompt}`

/** The judge's instructions; the criterion and the conversation follow in the user message. */
export const judgeInstructions =
  "You judge a test of a company's AI voice agent. The conversation below is between the agent (\"agent\") and a " +
  "simulated caller (\"user\"). Decide whether the conversation meets the criterion. Answer with one JSON object " +
  "and nothing else: {\"pass\": true or false, \"reason\": \"one sentence saying why\"}."

/** The transcript as the caller model reads it: the agent speaks as `user`, the caller as `assistant`. */
const callerMessages = (
  userPrompt: string,
  transcript: ReadonlyArray<{ readonly role: "agent" | "user"; readonly content: string }>
): Array<ChatMessage> => {
  const messages: Array<ChatMessage> = [{ role: "system", content: callerInstructions(userPrompt) }]
  if (transcript.length === 0) {
    // the agent's begin message was empty: it waits for the caller to speak first (custom-llm-protocol.md)
    messages.push({ role: "user", content: "(The call is connected; the agent is silent and waits for you.)" })
  }
  for (const utterance of transcript) {
    messages.push({ role: utterance.role === "agent" ? "user" : "assistant", content: utterance.content })
  }
  return messages
}

const endings = {
  caller_done: "the caller said the conversation was over",
  turn_limit: "it was stopped after the turn limit",
  end_call: "the agent ended the call",
  agent_hangup: "the agent hung up"
} as const

/** The judge's user message for one metric. */
export const judgeRequest = (
  metric: string,
  conversation: ReadonlyArray<Record<string, unknown>>,
  ending: keyof typeof endings
): string => {
  const lines = conversation.map((entry) =>
    entry["role"] === "tool_call_invocation"
      ? `agent calls tool ${String(entry["name"])} with ${String(entry["arguments"])}`
      : entry["role"] === "tool_call_result"
      ? `tool result: ${String(entry["content"])}`
      : `${String(entry["role"])}: ${String(entry["content"])}`
  )
  return `Criterion: ${metric}\n\nConversation:\n${lines.join("\n")}\n\nHow it ended: ${endings[ending]}.`
}

/** A judge's answer: `{pass: boolean, reason: string}` as JSON (a Markdown code fence around it is tolerated). */
export const parseJudgement = (
  content: string
): { readonly pass: boolean; readonly reason: string } | undefined => {
  const text = content.trim().replace(/^```(?:json)?\s*/u, "").replace(/\s*```$/u, "")
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed !== "object" || parsed === null) return undefined
    const { pass, reason } = parsed as Record<string, unknown>
    return typeof pass === "boolean" && typeof reason === "string" ? { pass, reason } : undefined
  } catch {
    return undefined
  }
}

const quote = (text: string): string => JSON.stringify(text.length > 120 ? `${text.slice(0, 117)}...` : text)

/**
 * Runs a simulation definition as call `callId` against the server at `url`. Never fails: every fault is an
 * `error` verdict saying what failed.
 *
 * @category constructors
 */
export const runSimulation = (
  url: string,
  callId: string,
  definition: Pick<SimulationDefinition, "user_prompt" | "metrics" | "dynamic_variables">,
  options: SimulationOptions
): Effect.Effect<RunOutcome, never, HttpClient.HttpClient> => {
  const run = Effect.gen(function*() {
    let over: "caller_done" | "turn_limit" | undefined
    let finishing = false
    const conversation = yield* converseWith(
      url,
      callId,
      definition.dynamic_variables,
      (index, transcript) =>
        Effect.gen(function*() {
          if (finishing) {
            over = "caller_done"
            return undefined
          }
          if (index >= options.maxTurns) {
            over = "turn_limit"
            return undefined
          }
          const answer = (yield* complete(
            options.llm,
            callerMessages(definition.user_prompt, transcript),
            `the caller model at turn ${index + 1}`
          )).trim()
          if (answer === endToken || answer === "") {
            over = "caller_done"
            return undefined
          }
          if (answer.endsWith(endToken)) {
            // the last words and the end together: say them, then stop after the agent's answer
            finishing = true
            return answer.slice(0, -endToken.length).trim()
          }
          return answer
        }),
      options.runner
    )
    const record = {
      turns: conversation.turns,
      ending: conversation.result._tag === "ended" ? conversation.result.ending : "script_done" as const
    }
    const snapshot = transcriptSnapshot({ user_turns: conversation.said }, record)
    if (conversation.result._tag === "fault") {
      return {
        verdict: { status: "error" as const, explanation: conversation.result.explanation },
        transcript: { ...snapshot, ending: "error" }
      }
    }
    const ending = conversation.result.ending === "script_done" ? over ?? "caller_done" : conversation.result.ending
    const judgements: Array<{ metric: string; pass: boolean; reason: string }> = []
    for (const [index, metric] of definition.metrics.entries()) {
      const purpose = `the judge of metrics[${index}] ${quote(metric)}`
      const answer = yield* complete(
        options.llm,
        [{ role: "system", content: judgeInstructions }, {
          role: "user",
          content: judgeRequest(metric, snapshot.transcript_with_tool_calls, ending)
        }],
        purpose
      ).pipe(Effect.result)
      if (answer._tag === "Failure") {
        return {
          verdict: { status: "error" as const, explanation: answer.failure.explanation },
          transcript: { ...snapshot, ending, judgements }
        }
      }
      const judgement = parseJudgement(answer.success)
      if (judgement === undefined) {
        return {
          verdict: {
            status: "error" as const,
            explanation: `${purpose}: answered ${
              quote(answer.success)
            }, not a JSON object {"pass": boolean, "reason": string}`
          },
          transcript: { ...snapshot, ending, judgements }
        }
      }
      judgements.push({ metric, ...judgement })
    }
    const failed = judgements.flatMap((j, index) =>
      j.pass ? [] : [`metrics[${index}] ${quote(j.metric)} failed: ${j.reason}`]
    )
    return {
      verdict: failed.length === 0
        ? { status: "pass" as const, explanation: `all ${judgements.length} metrics passed` }
        : { status: "fail" as const, explanation: failed.join("; ") },
      transcript: { ...snapshot, ending, judgements }
    }
  })
  return run.pipe(
    Effect.timeoutOption(Duration.millis(options.maxDurationMs)),
    Effect.map(Option.getOrElse((): RunOutcome => ({
      verdict: {
        status: "error",
        explanation: `the simulation did not finish within ${options.maxDurationMs} ms (decision 0706)`
      },
      transcript: null
    })))
  )
}

/** Simulation options with the runner's defaults and the limits of decision 0706. @category constructors */
export const options = (llm: ChatSettings, overrides: Partial<SimulationOptions> = {}): SimulationOptions => ({
  runner: runnerDefaults,
  llm,
  ...limits,
  ...overrides
})
