/**
 * The `svc-lint` command tree: `svc-lint [paths...]` lints; `rules`, `explain RULE` and
 * `timeline [paths...]` document the schedule. A folder named like a subcommand is linted by
 * writing it as a path (`svc-lint ./rules`).
 */
import { Command } from "effect/cli"
import { checkConfig, runCheck } from "./check.ts"
import { explain } from "./explain.ts"
import { rules } from "./rules.ts"
import { timeline } from "./timeline.ts"

export const cli = Command.make("svc-lint", checkConfig, runCheck).pipe(
  Command.withDescription(
    "Check agent configs and code against the dated deprecation schedule. Exit code 0 when clean, 1 when a " +
      "problem is at or above --fail-on, 2 on a usage, config or internal error."
  ),
  Command.withSubcommands([rules, explain, timeline])
)
