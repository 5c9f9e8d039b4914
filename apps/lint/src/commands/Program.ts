/**
 * The svc-lint program: the command tree run with its exit codes on the Node runtime, which comes in as an argument.
 * `bin.ts` imports the runtime up front, while the start-up snapshot (`snapshot.ts`) imports it only once the
 * process runs, because its modules hold handles (child processes, readline) that a V8 snapshot cannot contain.
 * `main.ts` composes them (dependency rule 6: main.ts only composes).
 */
import type { runMain } from "@effect/platform-node/NodeRuntime"
import type { layer } from "@effect/platform-node/NodeServices"
import { Cause, Console, Effect } from "effect"
import { CliError, Command } from "effect/cli"
import { cli } from "./Cli.ts"
import { LintFailed, UsageError } from "./Exit.ts"
import { VERSION } from "./Version.ts"

/** The Node runtime: `NodeRuntime.runMain` and `NodeServices.layer`. */
export interface Platform {
  readonly runMain: typeof runMain
  readonly layer: typeof layer
}

/**
 * Exit codes: LintFailed (1) and UsageError (2) carry theirs; a bad command line is a usage error;
 * anything else is an internal error, also 2, so it never passes for "problems found".
 */
export const withExitCodes = <A, E, R>(run: Effect.Effect<A, E, R>): Effect.Effect<A, LintFailed | UsageError, R> =>
  run.pipe(
    Effect.catchCause((cause): Effect.Effect<never, LintFailed | UsageError> => {
      const failure = Cause.squash(cause)
      if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
      if (typeof failure === "object" && failure !== null && "_tag" in failure) {
        if (failure instanceof LintFailed || failure instanceof UsageError) return Effect.fail(failure)
      }
      // effect/cli has already printed the help and what was wrong with the command line.
      if (CliError.isCliError(failure)) return Effect.fail(new UsageError({ message: failure._tag }))
      return Effect.andThen(
        Console.error(`svc-lint: internal error\n${Cause.pretty(cause)}`),
        Effect.fail(new UsageError({ message: "internal error" }))
      )
    })
  )

/** svc-lint on an explicit argument list (the resident linter's requests, Daemon.ts). */
export const runArgs = (args: ReadonlyArray<string>) => withExitCodes(Command.runWith(cli, { version: VERSION })(args))

/**
 * The bin runs the start-up snapshot in a child of its own process group and names itself in
 * `SVC_SUPERVISOR_PID` (bin/svc-lint.mjs): a bin killed with SIGKILL can pass no signal on, so when it
 * is no longer our parent we stop as if sent SIGTERM (docs/decisions/0015).
 */
const watchSupervisor = () => {
  const supervisor = Number(process.env["SVC_SUPERVISOR_PID"])
  if (!Number.isInteger(supervisor) || supervisor <= 1 || process.ppid !== supervisor) return
  const timer = setInterval(() => {
    if (process.ppid === supervisor) return
    clearInterval(timer)
    process.kill(process.pid, "SIGTERM")
  }, 250)
  timer.unref()
}

/** Runs svc-lint on `process.argv` on `platform`; the process exits with its exit code. */
export const run = (platform: Platform): void => {
  watchSupervisor()
  Command.run(cli, { version: VERSION }).pipe(
    withExitCodes,
    Effect.provide(platform.layer),
    platform.runMain
  )
}
