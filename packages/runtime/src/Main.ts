/**
 * Process entry for the apps: runs a long-lived layer under NodeRuntime (SIGINT and SIGTERM
 * interrupt it, so every finalizer runs: HTTP closes, then the pool, then the embedded database),
 * and turns a failure into one line on stderr and exit code 1 instead of a stack trace. Operators
 * need the sentence ("PORT 8080 is already in use"), not the trace.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Exit, Layer, Runtime } from "effect"
import { jsonParseDefect } from "./JsonParseCheck.ts"

/** The most useful single sentence for a failure cause. */
export const describeCause = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  if (error instanceof Error) return error.message || error.name
  if (typeof error === "object" && error !== null && "message" in error) return String(error.message)
  return String(error)
}

/**
 * Refuses to run on a Node whose `JSON.parse` misreads keys (JsonParseCheck.ts, decision 0013):
 * every request body and import line goes through it. One line on stderr, exit code 1.
 */
const refuseDefectiveNode = (name: string) => {
  const defect = jsonParseDefect()
  if (defect === undefined) return
  process.stderr.write(`${name}: ${defect}\n`)
  process.exit(1)
}

/**
 * Launches `layer` until the process is told to stop, or until `until` fails (a part the process
 * cannot work without is gone for good: the embedded database that could not be restarted). Exit
 * codes: 0 after SIGTERM (the graceful stop an orchestrator asks for), 130 after SIGINT (Ctrl-C, the
 * shell convention), 1 when start-up, the program or `until` failed.
 *
 * @category constructors
 */
export const launch = <E, ROut = never, E2 = never>(
  name: string,
  layer: Layer.Layer<ROut, E, never>,
  until: Effect.Effect<never, E2, ROut> = Effect.never
): void => {
  refuseDefectiveNode(name)
  let stoppedBy: string | undefined
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => (stoppedBy ??= signal))
  watchParent()
  let failed = false
  NodeRuntime.runMain(
    Effect.scoped(Effect.flatMap(Layer.build(layer), (context) => Effect.provideContext(until, context))).pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.sync(() => {
          process.stderr.write(`${name}: ${describeCause(cause)}\n`)
          failed = true
        })
      )
    ),
    {
      disableErrorReporting: true,
      teardown: (exit, onExit) => {
        if (Exit.isSuccess(exit)) return onExit(failed ? 1 : 0)
        if (Cause.hasInterruptsOnly(exit.cause)) return onExit(stoppedBy === "SIGTERM" ? 0 : 130)
        return Runtime.defaultTeardown(exit, onExit)
      }
    }
  )
}

/**
 * The bootstrap (tools/bootstrap) runs the real process in a process group of its own, so a signal
 * sent to the bootstrap alone must be forwarded, and a bootstrap killed with SIGKILL can forward
 * nothing. It names itself in `SVC_SUPERVISOR_PID`; when that process is no longer our parent we
 * stop as if told to with SIGTERM, instead of running on orphaned with the port held (issue 16).
 */
const watchParent = () => {
  const supervisor = Number(process.env["SVC_SUPERVISOR_PID"])
  if (!Number.isInteger(supervisor) || supervisor <= 1 || process.ppid !== supervisor) return
  const timer = setInterval(() => {
    if (process.ppid === supervisor) return
    clearInterval(timer)
    process.kill(process.pid, "SIGTERM")
  }, 250)
  timer.unref()
}

/**
 * Runs a one-shot command (an admin subcommand, a CLI): exit 0 when it succeeds, otherwise one line
 * `<name>: <sentence>` on stderr and exit 1 (130 when interrupted by Ctrl-C).
 *
 * @category constructors
 */
export const runCommand = <E>(name: string, program: Effect.Effect<unknown, E, never>): void => {
  refuseDefectiveNode(name)
  watchParent()
  NodeRuntime.runMain(program, {
    disableErrorReporting: true,
    teardown: (exit, onExit) => {
      if (Exit.isSuccess(exit)) return onExit(0)
      if (Cause.hasInterruptsOnly(exit.cause)) return onExit(130)
      process.stderr.write(`${name}: ${describeCause(exit.cause)}\n`)
      return onExit(1)
    }
  })
}
