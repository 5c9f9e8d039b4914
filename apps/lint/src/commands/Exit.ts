/**
 * Failures that end a run with a given exit code and print nothing more (the command has already
 * said what went wrong): 1 = problems at or above `--fail-on`, 2 = usage, config or internal error.
 */
import { Data, Runtime } from "effect"

/** The run found problems at or above the `--fail-on` level: exit code 1. */
export class LintFailed extends Data.TaggedError("LintFailed")<{ readonly failing: number }> {
  override readonly [Runtime.errorExitCode] = 1
  override readonly [Runtime.errorReported] = false
}

/** Bad arguments, a bad config file, an unmatched input or an internal error: exit code 2. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {
  override readonly [Runtime.errorExitCode] = 2
  override readonly [Runtime.errorReported] = false
}
