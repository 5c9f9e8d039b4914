/**
 * How a dial's end decides its task's state (docs/dialer.md rules 4 and 6): a call that ended finishes the task, a
 * dial the carrier refused fails it, a dial that ended in doubt leaves it for the reconciler.
 *
 * - `answered`, `busy`, `no_answer` -> `completed`, with the outcome as `state_reason`;
 * - `failed` (placed, then failed on the way) -> `failed`, with `failed: <disconnection reason>`;
 * - `DialRejected { reason }` (no call placed) -> `failed`, with `rejected: <reason>`;
 * - `DialerUnavailable`, or a defect of the adapter -> `unknown` (decision 0402: looked up before anything else).
 *
 * What the call row becomes (decision 0510) is the recording statement's to apply.
 */
import type { DialOutcome } from "../ports/Dialer.ts"

/**
 * The state and `state_reason` a task ends in.
 *
 * @category models
 */
export interface Finish {
  readonly state: "completed" | "failed"
  readonly reason: string
}

/**
 * The finish of a task whose call ended with `outcome`.
 *
 * @category combinators
 */
export const finishOf = (call: { readonly outcome: DialOutcome; readonly disconnection_reason: string }): Finish =>
  call.outcome === "failed"
    ? { state: "failed", reason: `failed: ${call.disconnection_reason}` }
    : { state: "completed", reason: call.outcome }

/**
 * What a dial that ended without a call decides: the finish of a refused dial, or `undefined` when the dial ended in
 * doubt (the task becomes `unknown`). `error` is the dial's typed failure, `undefined` for a defect.
 *
 * @category combinators
 */
export const failureOf = (
  error: { readonly _tag: "DialRejected"; readonly reason: string } | { readonly _tag: "DialerUnavailable" } | undefined
): Finish | undefined =>
  error?._tag === "DialRejected" ? { state: "failed", reason: `rejected: ${error.reason}` } : undefined
