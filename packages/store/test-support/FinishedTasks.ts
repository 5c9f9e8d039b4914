/**
 * Results to record, for the store's tests and benchmarks: a claimed task and the call its dial ended with, finished
 * as the scheduler finishes it (the domain's `Outcome.finishOf`: `failed` for a failed call, `completed` with the
 * outcome otherwise). The store applies results; deciding them is the scheduler's (docs/architecture.md, "Folders").
 */
import * as Outcome from "@svc/domain/dispatch/Outcome.ts"
import type { CallEnded } from "@svc/domain/ports/Dialer.ts"
import type { FinishedTask } from "../src/calls/CallsRepo.ts"

export const finishedFromCall = (
  task: Omit<FinishedTask, "state" | "reason" | "call">,
  call: CallEnded
): FinishedTask => ({ ...task, ...Outcome.finishOf(call), call })
