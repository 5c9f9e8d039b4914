/**
 * The custom-LLM WebSocket protocol as the platform speaks it (reference: custom-llm-protocol.md, from the vendor's
 * "LLM WebSocket" page and its demo servers): the frames a customer's server sends, parsed with the rule each
 * malformed frame breaks, and the frames the platform sends. Pure: the runner (`@svc/agent-test`) owns the socket.
 *
 * Rules the parser enforces (each violation's text names it, so a failed run says which rule was broken):
 * - frames are JSON text objects (a binary frame is refused by the runner: the platform closes with 1007);
 * - a frame without `response_type` is a `response` (doc);
 * - `response_id` is an integer >= 0; `content` a string; `content_complete` a boolean (doc: the string `"true"` is
 *   silently ignored by the platform, so the reply would never complete: here it is an error naming the rule);
 * - `tool_call_invocation` carries `tool_call_id`, `name` and `arguments` as a JSON string; `tool_call_result`
 *   carries `tool_call_id` and `content`.
 */

/** What the server asked for in its `config` frame. @category models */
export interface ServerConfig {
  readonly auto_reconnect: boolean
  readonly call_details: boolean
  readonly transcript_with_tool_calls: boolean
}

/** One frame from the customer's server, decoded. @category models */
export type ServerFrame =
  | { readonly kind: "config"; readonly config: ServerConfig }
  | {
    readonly kind: "response"
    readonly response_id: number
    readonly content: string
    readonly content_complete: boolean
    readonly end_call: boolean
    readonly transfer_number: string | undefined
  }
  | {
    readonly kind: "agent_interrupt"
    readonly interrupt_id: number
    readonly content: string
    readonly content_complete: boolean
    readonly end_call: boolean
  }
  | {
    readonly kind: "tool_call_invocation"
    readonly tool_call_id: string
    readonly name: string
    readonly arguments: string
  }
  | { readonly kind: "tool_call_result"; readonly tool_call_id: string; readonly content: string }
  | { readonly kind: "ping_pong"; readonly timestamp: number }
  | { readonly kind: "update_agent" | "metadata" }

/** A parsed frame or the rule it breaks. @category models */
export type Parsed = { readonly ok: true; readonly frame: ServerFrame } | {
  readonly ok: false
  readonly violation: string
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const show = (value: unknown): string => {
  const text = JSON.stringify(value)
  return text === undefined ? String(value) : text.length > 80 ? `${text.slice(0, 77)}...` : text
}

const fail = (violation: string): Parsed => ({ ok: false, violation })

/** Rule texts, cited in run explanations and in the tests that inject each fault. @category models */
export const rules = {
  json: "frames are JSON text objects (custom-LLM protocol: Connection)",
  binary: "frames are JSON text; a binary frame closes the socket with code 1007 (custom-LLM protocol: Connection)",
  contentComplete:
    "content_complete is a boolean; the platform silently ignores a string such as \"true\", so the reply never completes (custom-LLM protocol: response)",
  responseId: "response_id is an integer >= 0 (custom-LLM protocol: response)",
  content: "content is a string (custom-LLM protocol: response)",
  toolCall:
    "tool_call_invocation carries tool_call_id, name and arguments as a JSON string (custom-LLM protocol: tool_call_invocation)",
  toolResult: "tool_call_result carries tool_call_id and content (custom-LLM protocol: tool_call_result)",
  timeout:
    "a reply is streamed as response frames with the same response_id, the last with content_complete: true (custom-LLM protocol: response)",
  connect: "up to 3 connection attempts, about 7 s each (custom-LLM protocol: Connection)",
  begin: "the server sends response_id 0, the begin message, right after connecting (custom-LLM protocol: response)",
  futureId: "a response answers a response_id the platform sent (custom-LLM protocol: response_required)",
  closed:
    "the server ends a call by closing with code 1000 (agent_hangup) or by end_call (custom-LLM protocol: Connection)"
} as const

const boolField = (frame: Record<string, unknown>, key: string, rule: string): boolean | string => {
  const value = frame[key]
  if (value === undefined) return false
  return typeof value === "boolean" ? value : `${key} must be a boolean, got ${show(value)} (rule: ${rule})`
}

/**
 * Parses one text frame of the server.
 *
 * @category encoding
 */
export const parseServerFrame = (text: string): Parsed => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return fail(`malformed JSON frame ${show(text)}: ${(error as Error).message} (rule: ${rules.json})`)
  }
  if (!isRecord(value)) return fail(`frame ${show(value)} is not a JSON object (rule: ${rules.json})`)
  const type: unknown = value["response_type"] ?? "response"
  switch (type) {
    case "config": {
      const config = isRecord(value["config"]) ? value["config"] : {}
      return {
        ok: true,
        frame: {
          kind: "config",
          config: {
            auto_reconnect: config["auto_reconnect"] === true,
            call_details: config["call_details"] === true,
            transcript_with_tool_calls: config["transcript_with_tool_calls"] === true
          }
        }
      }
    }
    case "response":
    case "agent_interrupt": {
      const idKey = type === "response" ? "response_id" : "interrupt_id"
      const id = value[idKey]
      if (typeof id !== "number" || !Number.isInteger(id) || id < 0) {
        return fail(`${idKey} must be an integer >= 0, got ${show(id)} (rule: ${rules.responseId})`)
      }
      const content = value["content"] ?? ""
      if (typeof content !== "string") {
        return fail(`content must be a string, got ${show(content)} (rule: ${rules.content})`)
      }
      if (!("content_complete" in value)) {
        return fail(`${type} ${id} has no content_complete (rule: ${rules.contentComplete})`)
      }
      const complete = boolField(value, "content_complete", rules.contentComplete)
      if (typeof complete === "string") return fail(complete)
      const endCall = boolField(value, "end_call", "end_call is a boolean (custom-LLM protocol: response)")
      if (typeof endCall === "string") return fail(endCall)
      if (type === "agent_interrupt") {
        return {
          ok: true,
          frame: { kind: "agent_interrupt", interrupt_id: id, content, content_complete: complete, end_call: endCall }
        }
      }
      const transfer = value["transfer_number"]
      return {
        ok: true,
        frame: {
          kind: "response",
          response_id: id,
          content,
          content_complete: complete,
          end_call: endCall,
          transfer_number: typeof transfer === "string" ? transfer : undefined
        }
      }
    }
    case "tool_call_invocation": {
      const { arguments: args, name, tool_call_id } = value
      if (typeof tool_call_id !== "string" || typeof name !== "string" || typeof args !== "string") {
        return fail(`tool_call_invocation ${show(value)} is malformed (rule: ${rules.toolCall})`)
      }
      try {
        JSON.parse(args)
      } catch {
        return fail(
          `tool_call_invocation ${tool_call_id}: arguments ${show(args)} is not JSON (rule: ${rules.toolCall})`
        )
      }
      return { ok: true, frame: { kind: "tool_call_invocation", tool_call_id, name, arguments: args } }
    }
    case "tool_call_result": {
      const { content, tool_call_id } = value
      if (typeof tool_call_id !== "string" || typeof content !== "string") {
        return fail(`tool_call_result ${show(value)} is malformed (rule: ${rules.toolResult})`)
      }
      return { ok: true, frame: { kind: "tool_call_result", tool_call_id, content } }
    }
    case "ping_pong":
      return {
        ok: true,
        frame: { kind: "ping_pong", timestamp: typeof value["timestamp"] === "number" ? value["timestamp"] : 0 }
      }
    case "update_agent":
      return { ok: true, frame: { kind: "update_agent" } }
    case "metadata":
      return { ok: true, frame: { kind: "metadata" } }
    default:
      return fail(
        `unknown response_type ${show(type)} (rule: response_type is one of config, response, agent_interrupt, ` +
          `tool_call_invocation, tool_call_result, update_agent, metadata, ping_pong)`
      )
  }
}

/** An utterance of the transcript the platform sends. @category models */
export interface Utterance {
  readonly role: "agent" | "user"
  readonly content: string
}

/** An entry of `transcript_with_tool_calls`. @category models */
export type ToolTranscriptEntry =
  | Utterance
  | {
    readonly role: "tool_call_invocation"
    readonly tool_call_id: string
    readonly name: string
    readonly arguments: string
  }
  | { readonly role: "tool_call_result"; readonly tool_call_id: string; readonly content: string }

/**
 * The `response_required` frame for a user turn.
 *
 * @category encoding
 */
export const responseRequired = (
  responseId: number,
  transcript: ReadonlyArray<Utterance>,
  withTools: ReadonlyArray<ToolTranscriptEntry> | undefined
): string =>
  JSON.stringify(
    withTools === undefined
      ? { interaction_type: "response_required", response_id: responseId, transcript }
      : {
        interaction_type: "response_required",
        response_id: responseId,
        transcript,
        transcript_with_tool_calls: withTools
      }
  )

/**
 * The `call_details` frame, sent when the server's config asks for it.
 *
 * @category encoding
 */
export const callDetails = (call: Record<string, unknown>): string =>
  JSON.stringify({ interaction_type: "call_details", call })

/**
 * A `ping_pong` frame.
 *
 * @category encoding
 */
export const pingPong = (timestamp: number): string => JSON.stringify({ interaction_type: "ping_pong", timestamp })
