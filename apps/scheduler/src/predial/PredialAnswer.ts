/**
 * The pre-dial check's wire format (decision 0553; docs/webhooks.md "Pre-dial check"): the request body svc POSTs for a
 * claimed task, and what the receiver's answer means. Fail closed: only a 2xx whose body is a JSON object with
 * `"allow": true` lets the dial go; `"allow": false` refuses it (with the receiver's `reason`); anything else (another
 * status, a body that is not such an object, no answer in time, a network error, a refused address) says nothing, and
 * the task waits for a later check.
 */
import type { ClaimedTask } from "@svc/store/dispatch/DispatchRepo.ts"
import type { SendResult } from "../webhooks/HttpSender.ts"

/** The `x-svc-event` header and body `event` of a check. @category models */
export const EVENT = "call_predial"

/** Most characters of a refusal's reason kept in the task's `state_reason` (the rest is cut, marked with `…`). */
export const REASON_MAX = 200

/** @category models */
export type Answer =
  | { readonly _tag: "Allowed" }
  | { readonly _tag: "Refused"; readonly reason: string }
  | { readonly _tag: "Unavailable"; readonly why: string }

/**
 * The body of the check of `task`'s claimed attempt, at `now`: the task's dial as svc is about to place it. Keys of
 * the vendor's task and call (snake_case); `idempotency_key` is the attempt's key (the same for every check of one
 * attempt, so a receiver may answer a repeated check from what it decided).
 *
 * @category encoding
 */
export const requestBody = (task: ClaimedTask, now: number): string => {
  const r = task.request
  // the attempt from its key: the task id for the first, `<task id>:<n>` for the n-th (decision 0625)
  const attempt = r.idempotency_key === task.taskId ? 1 : Number(r.idempotency_key.slice(task.taskId.length + 1))
  const predial: Record<string, unknown> = {
    batch_call_id: task.batchCallId,
    task_id: task.taskId,
    call_id: r.call_id,
    attempt,
    idempotency_key: r.idempotency_key,
    from_number: r.from_number,
    to_number: r.to_number
  }
  if (r.override_agent_id !== undefined) predial["override_agent_id"] = r.override_agent_id
  if (r.override_agent_version !== undefined) predial["override_agent_version"] = r.override_agent_version
  if (r.dynamic_variables !== undefined) predial["svc_llm_dynamic_variables"] = r.dynamic_variables
  if (r.metadata !== undefined) predial["metadata"] = r.metadata
  return JSON.stringify({ event: EVENT, timestamp: now, predial })
}

/** A reason as stored: control characters become spaces, trimmed, at most REASON_MAX characters. */
const cleanReason = (reason: string): string => {
  // eslint-disable-next-line no-control-regex
  const text = reason.replace(/[\u0000-\u001f\u007f]+/g, " ").trim()
  return text.length <= REASON_MAX ? text : `${text.slice(0, REASON_MAX - 1)}…`
}

/**
 * What an answer means (see the module notes). A refusal without a usable `reason` (absent, not a string, blank) is
 * still a refusal, stored as `no reason given`.
 *
 * @category constructors
 */
export const decide = (result: SendResult): Answer => {
  if (result.status === undefined) return { _tag: "Unavailable", why: result.error ?? "no answer" }
  if (result.status < 200 || result.status >= 300) {
    return { _tag: "Unavailable", why: `HTTP ${result.status}` }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(result.body ?? "")
  } catch {
    return { _tag: "Unavailable", why: `HTTP ${result.status} with a body that is not JSON` }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return { _tag: "Unavailable", why: `HTTP ${result.status} with a body that is not a JSON object` }
  }
  const allow = (parsed as Record<string, unknown>)["allow"]
  if (allow === true) return { _tag: "Allowed" }
  if (allow !== false) return { _tag: "Unavailable", why: `HTTP ${result.status} without a boolean "allow"` }
  const reason = (parsed as Record<string, unknown>)["reason"]
  const text = typeof reason === "string" ? cleanReason(reason) : ""
  return { _tag: "Refused", reason: text === "" ? "no reason given" : text }
}
