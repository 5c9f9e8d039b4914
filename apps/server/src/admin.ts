// `npm run admin -- <subcommand>`: operator commands that print JSON on stdout and a clear error
// on stderr with a non-zero exit. They open the same database as the server (DATABASE_URL, or the
// embedded server under SVC_DATA_DIR, joined if `npm start` is running, started otherwise), and
// only when a subcommand needs it (`--help` starts nothing).
import { NodeServices } from "@effect/platform-node"
import { Main } from "@svc/runtime"
import { Effect, Logger } from "effect"
import { Command } from "effect/cli"
import { commands } from "./admin/commands.ts"

const cli = Command.make("admin").pipe(
  Command.withDescription("svc operator commands (JSON on stdout)"),
  Command.withSubcommands(commands)
)

// stdout carries only the JSON result; logs go to stderr.
const logs = Logger.layer([Logger.withConsoleError(Logger.formatLogFmt)])

Main.runCommand(
  "admin",
  Command.run(cli, { version: "0.0.0" }).pipe(Effect.provide(NodeServices.layer), Effect.provide(logs))
)
