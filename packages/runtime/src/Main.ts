/**
 * Process entry for the apps: runs a long-lived layer under NodeRuntime (SIGINT and SIGTERM
 * interrupt it, so every finalizer runs: HTTP closes, then the pool, then the embedded database),
 * and turns a failure into one line on stderr and exit code 1 instead of a stack trace. Operators
 * need the sentence ("PORT 8080 is already in use"), not the trace.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Exit, Layer, Runtime } from "effect"
import * as fs from "node:fs"
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

/** Field `index` (0-based, after the command) of `/proc/<pid>/stat`, or undefined off Linux or when gone. */
const statField = (pid: number, index: number): string | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[index]
  } catch {
    return undefined
  }
}

const commandLine = (pid: number): string => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim()
  } catch {
    return ""
  }
}

/** npm names its process `npm <command> …` (`npm exec svc-server`, `npm run admin`). */
const isNpm = (pid: number) => commandLine(pid).startsWith("npm ")

/** A shell running one command for its parent (`sh -c svc-server`, npm's script shell). */
const isShell = (pid: number) => /^(?:\S*\/)?(?:sh|dash|bash|zsh|ash|ksh) -c /.test(commandLine(pid))

/**
 * The parent whose death must stop us, if any:
 *
 * - the bootstrap (tools/bootstrap), which runs the real process in a process group of its own and
 *   names itself in `SVC_SUPERVISOR_PID`: a bootstrap killed with SIGKILL can forward nothing;
 * - npm, when it started us (`npx svc-server`, decision 0015): npm forwards SIGINT and SIGTERM to its
 *   child, but a user's `script-shell` that forks (dash) dies of SIGTERM without passing it on, and
 *   npm killed with SIGKILL passes nothing on. Then the shell or npm is the parent that goes away.
 *
 * Processes started otherwise (a process manager running `svc-server` directly) are not affected: a
 * parent that exits on purpose must not stop them.
 */
export const watchedParent = (
  parent: number = process.ppid,
  supervisor: string | undefined = process.env["SVC_SUPERVISOR_PID"]
): number | undefined => {
  if (parent <= 1) return undefined
  if (Number(supervisor) === parent) return parent
  if (isNpm(parent)) return parent
  const grandparent = Number(statField(parent, 1))
  if (isShell(parent) && Number.isInteger(grandparent) && isNpm(grandparent)) return parent
  return undefined
}

/**
 * When the watched parent is no longer our parent we stop as if told to with SIGTERM, instead of
 * running on orphaned with the port and the database held (decisions 0010, 0015).
 */
const watchParent = () => {
  const parent = watchedParent()
  if (parent === undefined) return
  const timer = setInterval(() => {
    if (process.ppid === parent) return
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
