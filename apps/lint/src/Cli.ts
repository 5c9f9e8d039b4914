/** The `svc-lint` command tree. */
import { Command } from "effect/cli"
import { rules } from "./commands/rules.ts"

export const cli = Command.make("svc-lint").pipe(
  Command.withDescription("Check agent configs and code against the dated deprecation schedule"),
  Command.withSubcommands([rules])
)
