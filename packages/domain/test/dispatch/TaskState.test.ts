import { assert, describe, it } from "@effect/vitest"
import { canMove, isFinal, releasedTo, type TaskState, taskStates, transitions } from "../../src/dispatch/TaskState.ts"

// Every move a document allows, with where it says so. Anything not listed here must be refused.
const allowed: ReadonlyArray<readonly [TaskState, TaskState, string]> = [
  ["pending", "dialling", "0401: claimed with a lease"],
  ["pending", "skipped", "0401: a do_not_call number, at the claim"],
  ["pending", "cancelled", "0533: a cancelled batch's pending tasks"],
  ["dialling", "completed", "dialer.md rule 6: answered, busy, no_answer"],
  ["dialling", "failed", "dialer.md rules 4 and 6: a failed call, a refused dial"],
  ["dialling", "unknown", "0401: lease expired; dialer.md rule 4: DialerUnavailable"],
  ["dialling", "pending", "0625: a retried outcome; 0401: released before its dial started"],
  ["unknown", "completed", "dialer.md rule 3: the lookup found the call ended"],
  ["unknown", "failed", "dialer.md rule 3: the lookup found the call ended failed"],
  ["unknown", "pending", "dialer.md rule 3: no call placed, dialled again"],
  ["unknown", "cancelled", "0533: no call placed and the batch cancelled (trigger of 0014)"]
]

describe("TaskState", () => {
  it("has the seven states get-batch-call counts (docs/api.md)", () => {
    assert.deepStrictEqual(
      [...taskStates].sort(),
      ["cancelled", "completed", "dialling", "failed", "pending", "skipped", "unknown"]
    )
    assert.deepStrictEqual(Object.keys(transitions).sort(), [...taskStates].sort())
  })

  it("allows exactly the moves the decisions describe", () => {
    for (const from of taskStates) {
      for (const to of taskStates) {
        const why = allowed.find(([f, t]) => f === from && t === to)
        assert.strictEqual(canMove(from, to), why !== undefined, `${from} -> ${to}${why ? ` (${why[2]})` : ""}`)
      }
    }
  })

  it("never redials a task in doubt without a lookup: unknown does not go to dialling (dialer.md)", () => {
    assert.isFalse(canMove("unknown", "dialling"))
    assert.isFalse(canMove("dialling", "dialling"))
  })

  it("a cancel takes only tasks not in flight (0533: calls in flight finish as usual)", () => {
    assert.isFalse(canMove("dialling", "cancelled"))
    assert.isTrue(canMove("pending", "cancelled"))
  })

  it("completed, failed, skipped and cancelled are final; the others are not", () => {
    assert.deepStrictEqual(taskStates.filter(isFinal).sort(), ["cancelled", "completed", "failed", "skipped"])
    for (const s of ["pending", "dialling", "unknown"] as const) assert.isFalse(isFinal(s), s)
  })

  it("a shutdown releases a task never dialled to pending and one being dialled to unknown (0401)", () => {
    assert.strictEqual(releasedTo(false), "pending")
    assert.strictEqual(releasedTo(true), "unknown")
    assert.isTrue(canMove("dialling", releasedTo(false)))
    assert.isTrue(canMove("dialling", releasedTo(true)))
  })
})
