// svc-lint entry: parses argv and runs the command tree.
//
// V8's compile cache is switched on before anything else loads: the effect modules the CLI needs
// compile in ~0.5 s on a cold start and load from the cache in a fraction of that afterwards. The
// modules are then imported dynamically, so the cache applies to them.
import * as Module from "node:module"

Module.enableCompileCache?.()

const [
  { runMain },
  { layer },
  { Cause, Console, Effect },
  { CliError, Command },
  { cli },
  { UsageError },
  { VERSION }
] = await Promise.all([
  // Subpath imports: the package's index also loads the HTTP, socket and worker modules.
  import("@effect/platform-node/NodeRuntime"),
  import("@effect/platform-node/NodeServices"),
  import("effect"),
  import("effect/cli"),
  import("./Cli.ts"),
  import("./Exit.ts"),
  import("./Version.ts")
])

Command.run(cli, { version: VERSION }).pipe(
  // Exit codes: LintFailed (1) and UsageError (2) carry theirs; a bad command line is a usage
  // error; anything else is an internal error, also 2, so it never passes for "problems found".
  Effect.catchCause((cause) => {
    const failure = Cause.squash(cause)
    if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
    if (typeof failure === "object" && failure !== null && "_tag" in failure) {
      if (failure._tag === "LintFailed" || failure._tag === "UsageError") return Effect.fail(failure)
    }
    // effect/cli has already printed the help and what was wrong with the command line.
    if (CliError.isCliError(failure)) return Effect.fail(new UsageError({ message: failure._tag }))
    return Effect.andThen(
      Console.error(`svc-lint: internal error\n${Cause.pretty(cause)}`),
      Effect.fail(new UsageError({ message: "internal error" }))
    )
  }),
  Effect.provide(layer),
  runMain
)
