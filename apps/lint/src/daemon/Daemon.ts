/**
 * The resident linter (`svc-lint --daemon`, decision 0642): one long-lived
 * svc-lint per working folder that runs each client's command line in its warm process, so a
 * re-lint pays neither Node's start-up nor the linter's (120-180 ms measured, more than the whole
 * 0.15 s goal) and keeps its `--cache` entries in memory between runs.
 *
 * The client is the `svc-lint` bin (`bin/daemon-client.mjs`): it starts this server in the
 * background when none answers, sends one request per run and writes what comes back. The
 * protocol, newline-delimited JSON over a Unix socket in a folder only its user can enter:
 *
 * - request (one line): `{"v":1,"cwd","args","env","stdoutIsTTY","stdinIsTTY"}` to run svc-lint,
 *   `{"v":1,"status":true}` or `{"v":1,"stop":true}`;
 * - answer: `{"o":text}` (stdout) and `{"e":text}` (stderr) in the order the run wrote them, then
 *   `{"exit":code}`; `{"refused":reason}` when this server cannot run the request (another folder,
 *   another protocol version): the client then lints in its own process.
 *
 * A run here is the same program as a run in a process of its own: the command line is parsed by
 * the same command tree; what it would take from the process comes from the request instead
 * (stdout and stderr through `Console` and `CurrentOutput`, the environment through the
 * `ConfigProvider`, the terminal's capabilities from the client's stdout), so the report, the
 * files written and the exit code are those of a plain run (tested byte for byte). The one thing
 * not taken from the request is the working folder: a server serves the folder it was started in.
 * Requests run one at a time, in arrival order.
 */
import { Cause, ConfigProvider, Console, Effect, Exit, Layer, ManagedRuntime, Runtime, Stdio } from "effect"
import { TerminalCapabilities } from "effect/cli"
import * as fs from "node:fs"
import * as net from "node:net"
import * as nodePath from "node:path"
import { LintCacheMemory, make as makeMemory } from "../cache/LintCacheMemory.ts"
import { CurrentOutput } from "../commands/Output.ts"
import { type Platform, runArgs } from "../commands/Program.ts"
import * as FileWatch from "../files/FileWatch.ts"

/** The first argument that makes a svc-lint process serve instead of lint (the bin starts it so). */
export const SERVE_ARGUMENT = "--svc-lint-internal-serve"

/** The protocol version; the client sends it and a server of another version refuses. */
export const PROTOCOL = 1

interface RunRequest {
  readonly v: number
  readonly cwd: string
  readonly args: ReadonlyArray<string>
  readonly env: Record<string, string>
  readonly stdoutIsTTY: boolean
  readonly stdinIsTTY: boolean
}

const isRunRequest = (u: unknown): u is RunRequest => {
  if (typeof u !== "object" || u === null) return false
  const r = u as Record<string, unknown>
  return typeof r.cwd === "string" && Array.isArray(r.args) && r.args.every((a) => typeof a === "string") &&
    typeof r.env === "object" && r.env !== null && typeof r.stdoutIsTTY === "boolean" &&
    typeof r.stdinIsTTY === "boolean"
}

/** The exit code a process of its own would have ended with (NodeRuntime.runMain's rules). */
export const exitCodeOf = (exit: Exit.Exit<unknown, unknown>): number => {
  if (Exit.isSuccess(exit)) return 0
  if (Cause.hasInterruptsOnly(exit.cause)) return 130
  const failure = Cause.squash(exit.cause)
  if (typeof failure === "object" && failure !== null && Runtime.errorExitCode in failure) {
    const code = (failure as Record<PropertyKey, unknown>)[Runtime.errorExitCode]
    if (typeof code === "number") return code
  }
  return 1
}

export interface ServeOptions {
  /** The socket's path. */
  readonly socket: string
  /** Stop after this long without a request. */
  readonly idleMs: number
}

/**
 * Serves svc-lint runs on `options.socket` until stopped, idle for `options.idleMs`, or signalled;
 * removes its socket on the way out. Another server already answering on the socket (two clients
 * started one each) leaves this one to exit at once.
 */
export const serve = (platform: Platform, options: ServeOptions): void => {
  // Loaded here, not imported: `node:util` checks the terminal's colours as it loads, and warns when
  // NO_COLOR and FORCE_COLOR are both set; a plain run, whose bundle holds this module, must not.
  const { format } = process.getBuiltinModule("node:util")
  const runtime = ManagedRuntime.make(platform.layer)
  const cwd = fs.realpathSync(process.cwd())
  const started = Date.now()
  let requests = 0
  let queue: Promise<void> = Promise.resolve()
  let idleTimer: NodeJS.Timeout | undefined
  let ownSocket: { dev: number; ino: number } | undefined

  const shutdown = (code: number) => {
    try {
      // Only our own socket: a newer server may have replaced it.
      const now = fs.statSync(options.socket)
      if (ownSocket !== undefined && now.ino === ownSocket.ino && now.dev === ownSocket.dev) {
        fs.rmSync(options.socket, { force: true })
      }
    } catch {
      // gone already
    }
    // The log the client opened for us (same name), when nothing went into it: no clutter in $TMPDIR.
    try {
      const log = options.socket.replace(/\.sock$/, ".log")
      if (log !== options.socket && fs.statSync(log).size === 0) fs.rmSync(log)
    } catch {
      // none
    }
    process.exit(code)
  }
  const armIdle = () => {
    if (idleTimer !== undefined) clearTimeout(idleTimer)
    idleTimer = setTimeout(() => shutdown(0), options.idleMs)
  }
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => shutdown(0))

  // Folders are watched so unchanged files need no stat; the cookies go next to the socket.
  const watch = FileWatch.make(nodePath.dirname(options.socket))
  const memory = makeMemory(watch)
  // SVC_LINT_DAEMON_TRACE=1 in the environment that starts the server: one line per run in its log.
  const trace = (process.env.SVC_LINT_DAEMON_TRACE ?? "") !== ""
  const run = async (request: RunRequest, send: (message: object) => void): Promise<void> => {
    requests++
    const begun = performance.now()
    // Every change made before this request is known to the watch before the run looks.
    await watch?.sync()
    const out = (text: string) => send({ o: text })
    const err = (text: string) => send({ e: text })
    // What the commands print with Console (util.format, as the global console formats).
    const console: Console.Console = Object.assign(Object.create(globalThis.console), {
      log: (...args: ReadonlyArray<unknown>) => out(`${format(...args)}\n`),
      info: (...args: ReadonlyArray<unknown>) => out(`${format(...args)}\n`),
      debug: (...args: ReadonlyArray<unknown>) => out(`${format(...args)}\n`),
      error: (...args: ReadonlyArray<unknown>) => err(`${format(...args)}\n`),
      warn: (...args: ReadonlyArray<unknown>) => err(`${format(...args)}\n`)
    })
    const env = ConfigProvider.fromEnv({ env: request.env })
    const terminal = Layer.provide(
      TerminalCapabilities.layer,
      Stdio.layerTest({
        stdinIsTerminal: Effect.succeed(request.stdinIsTTY),
        stdoutIsTerminal: Effect.succeed(request.stdoutIsTTY)
      })
    ).pipe(Layer.provide(ConfigProvider.layer(env)))
    const exit = await runtime.runPromiseExit(
      runArgs(request.args).pipe(
        Effect.provide(terminal),
        Effect.provideService(Console.Console, console),
        Effect.provideService(CurrentOutput, { write: out, isTTY: request.stdoutIsTTY }),
        Effect.provideService(ConfigProvider.ConfigProvider, env),
        Effect.provideService(LintCacheMemory, memory)
      )
    )
    const code = exitCodeOf(exit)
    send({ exit: code })
    if (trace) {
      process.stderr.write(
        `${new Date().toISOString()} run ${(performance.now() - begun).toFixed(1)} ms, exit ${code}: ${
          request.args.join(" ")
        }\n`
      )
    }
  }

  const server = net.createServer((socket) => {
    if (idleTimer !== undefined) clearTimeout(idleTimer)
    let buffered = ""
    let answered = false
    socket.setEncoding("utf8")
    socket.on("error", () => socket.destroy())
    socket.on("data", (chunk: string) => {
      if (answered) return
      buffered += chunk
      const newline = buffered.indexOf("\n")
      if (newline < 0) return
      answered = true
      const send = (message: object) => {
        if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`)
      }
      let request: unknown
      try {
        request = JSON.parse(buffered.slice(0, newline))
      } catch {
        request = undefined
      }
      const version = typeof request === "object" && request !== null ? (request as { v?: unknown }).v : undefined
      if (version !== PROTOCOL) {
        send({ refused: `protocol ${String(version)}, this server speaks ${PROTOCOL}` })
        socket.end()
        return armIdle()
      }
      const r = request as Record<string, unknown>
      if (r.stop === true) {
        send({ stopped: process.pid })
        socket.end(() => shutdown(0))
        return
      }
      if (r.status === true) {
        send({ status: { pid: process.pid, cwd, startedAt: new Date(started).toISOString(), requests } })
        socket.end()
        return armIdle()
      }
      if (!isRunRequest(request)) {
        send({ refused: "not a run request" })
        socket.end()
        return armIdle()
      }
      if (request.cwd !== cwd) {
        send({ refused: `this server lints ${cwd}, not ${request.cwd}` })
        socket.end()
        return armIdle()
      }
      queue = queue.then(() => run(request, send)).catch((error: unknown) => {
        send({ e: `svc-lint: internal error in the resident linter\n${String(error)}\n` })
        send({ exit: 2 })
      }).finally(() => {
        socket.end()
        armIdle()
      })
    })
  })

  // The socket is created 0600 (its folder is the user's own already); the runs' files are not.
  const mask = process.umask()
  const listen = (retry: boolean) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      process.umask(mask)
      if (error.code !== "EADDRINUSE" || !retry) {
        process.stderr.write(`svc-lint daemon: cannot listen on ${options.socket}: ${error.message}\n`)
        process.exit(2)
      }
      // A socket file is there: another server answering keeps it; a dead one's file is removed.
      const probe = net.connect(options.socket)
      probe.once("connect", () => {
        probe.destroy()
        process.exit(0)
      })
      probe.once("error", () => {
        try {
          fs.rmSync(options.socket, { force: true })
        } catch (error) {
          process.stderr.write(`svc-lint daemon: cannot listen on ${options.socket}: ${String(error)}\n`)
          process.exit(2)
        }
        listen(false)
      })
    })
    process.umask(0o177)
    server.listen(options.socket, () => {
      process.umask(mask)
      const stat = fs.statSync(options.socket)
      ownSocket = { dev: stat.dev, ino: stat.ino }
      armIdle()
    })
  }
  listen(true)
}
