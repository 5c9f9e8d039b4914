/**
 * The states of a batch task and the moves between them (docs/decisions/0401-scheduler-row-leasing.md, 0402, 0533,
 * 0625; docs/api.md `get-batch-call` `tasks`; docs/dialer.md rules 3, 4 and 6). The store applies these moves in its
 * statements; this module names them, so the dispatcher and its tests say which move they make.
 *
 * `pending` -> `dialling` (claimed under a lease) -> `completed` | `failed`; a `dialling` task whose lease expired or
 * whose dial ended in doubt is `unknown` until the carrier is asked; a `do_not_call` number is `skipped` at the claim;
 * a cancelled batch's pending tasks are `cancelled`. A retried outcome, a lookup that found no call and a shutdown
 * before the dial started put a task back to `pending`.
 */

/**
 * Every state a task can be in, as `get-batch-call` counts them.
 *
 * @category models
 */
export const taskStates = ["pending", "dialling", "unknown", "completed", "failed", "skipped", "cancelled"] as const

/** @category models */
export type TaskState = typeof taskStates[number]

/**
 * The states a task may move to from each state.
 *
 * @category models
 */
export const transitions: { readonly [S in TaskState]: ReadonlyArray<TaskState> } = {
  // claimed (0401), a do_not_call number at the claim (0401), the batch cancelled (0533)
  pending: ["dialling", "skipped", "cancelled"],
  // recorded (dialer.md rule 6), in doubt or its lease expired (0401, rule 4), retried (0625) or released by a
  // shutdown before its dial started (0401)
  dialling: ["completed", "failed", "unknown", "pending"],
  // the lookup found an ended call (recorded, rule 3) or none (dialled again, rule 3; retried, 0625); a batch
  // cancelled meanwhile makes that `cancelled` instead (0533)
  unknown: ["completed", "failed", "pending", "cancelled"],
  completed: [],
  failed: [],
  skipped: [],
  cancelled: []
}

/**
 * Whether a task in `from` may move to `to`.
 *
 * @category guards
 */
export const canMove = (from: TaskState, to: TaskState): boolean => transitions[from].includes(to)

/**
 * Whether a task in `state` has ended: no move leaves it.
 *
 * @category guards
 */
export const isFinal = (state: TaskState): boolean => transitions[state].length === 0

/**
 * Where a task this worker holds goes when the worker lets go of it without a result (graceful shutdown,
 * decision 0401): back to `pending` if its dial never started (no call can exist), else `unknown` (its call may
 * exist, and is looked up before anything else happens to the task).
 *
 * @category combinators
 */
export const releasedTo = (dialStarted: boolean): "pending" | "unknown" => dialStarted ? "unknown" : "pending"
