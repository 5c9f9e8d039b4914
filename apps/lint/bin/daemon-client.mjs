// The client side of the resident linter (`svc-lint --daemon`, docs/decisions/0642; the server is
// src/daemon/Daemon.ts). Plain JavaScript with Node's own modules only: it runs in the bin's process,
// whose start-up is all a re-lint through the daemon pays for besides the lint itself.
//
// One server per working folder and per build of the linter: the socket's name hashes the real
// path of the folder and the identity of the program the bin would run (its file, mtime and the
// Node version), so a rebuilt or edited linter is never served by an old process (the old one
// stops when idle). Sockets live in `$TMPDIR/svc-lint-<uid>/`, a folder only its user may enter;
// any other owner or mode and the daemon is not used.
//
// Whatever goes wrong on the way (no server and none can be started, a server that refuses or
// dies mid-run), the run happens in this process instead, after a warning on stderr: the daemon
// makes a run faster, never different. The answer is buffered until the server's exit code arrives,
// so a run that falls back never prints half a report twice.
//
// Only `node:fs`, `node:net` and `node:path` load on the way to an answer (`node:crypto` and
// `node:child_process` took ~15 ms of a ~80 ms round trip): the socket's name uses FNV-1a, and a
// collision only costs a refused run (the server checks the folder), never a wrong one.
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"

/** Must match src/daemon/Daemon.ts. */
const SERVE_ARGUMENT = "--svc-lint-internal-serve"
const PROTOCOL = 1
const DEFAULT_IDLE_MS = 15 * 60 * 1000
/** How long a newly started server has to answer before the run goes ahead in this process. */
const START_TIMEOUT_MS = 15_000
/** Unix socket paths are limited to 107 bytes on Linux. */
const MAX_SOCKET_PATH = 100

const warn = (message) => process.stderr.write(`svc-lint: warning: ${message}\n`)

/** Which daemon flag the command line holds before any `--`, and the arguments without `--daemon`. */
export const daemonMode = (args) => {
  const end = args.indexOf("--")
  const head = end < 0 ? args : args.slice(0, end)
  const mode = head.includes("--daemon-stop")
    ? "stop"
    : head.includes("--daemon-status")
    ? "status"
    : head.includes("--daemon")
    ? "run"
    : undefined
  const rest = end < 0 ? [] : args.slice(end)
  return { mode, args: [...head.filter((a) => a !== "--daemon"), ...rest] }
}

/** `os.tmpdir()` without loading `node:os`: TMPDIR, TMP or TEMP, else /tmp. */
const tmpdir = () => {
  const dir = process.env.TMPDIR || process.env.TMP || process.env.TEMP || "/tmp"
  return dir.length > 1 && dir.endsWith("/") ? dir.slice(0, -1) : dir
}

/** 64-bit FNV-1a of a string's UTF-16 code units, as 16 hex digits. */
export const fnv1a64 = (text) => {
  let hash = 0xcbf29ce484222325n
  for (let i = 0; i < text.length; i++) {
    hash ^= BigInt(text.charCodeAt(i))
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn
  }
  return hash.toString(16).padStart(16, "0")
}

/** `$TMPDIR/svc-lint-<uid>`, created 0700; `undefined` (after a warning) when it is not private. */
const socketFolder = () => {
  const uid = process.getuid?.() ?? 0
  const dir = path.join(tmpdir(), `svc-lint-${uid}`)
  try {
    fs.mkdirSync(dir, { mode: 0o700 })
  } catch (error) {
    if (error.code !== "EEXIST") {
      warn(`cannot create ${dir} for the resident linter (${error.code}); linting in this process`)
      return undefined
    }
  }
  const stat = fs.lstatSync(dir)
  if (!stat.isDirectory() || stat.uid !== uid || (stat.mode & 0o077) !== 0) {
    warn(`${dir} is not a folder only this user can enter; not using the resident linter`)
    return undefined
  }
  return dir
}

/** The socket and log of this folder's server for `programId`. */
export const locate = (cwd, programId) => {
  const dir = socketFolder()
  if (dir === undefined) return undefined
  const real = fs.realpathSync(cwd)
  const name = fnv1a64(JSON.stringify([real, programId]))
  const socket = path.join(dir, `${name}.sock`)
  if (socket.length > MAX_SOCKET_PATH) {
    warn(`the socket path ${socket} is too long for a Unix socket; linting in this process`)
    return undefined
  }
  return { cwd: real, socket, log: path.join(dir, `${name}.log`) }
}

/** A connection to the server, or `undefined` when none answers. */
const connect = (socket) =>
  new Promise((resolve) => {
    const connection = net.connect(socket)
    connection.once("connect", () => {
      connection.removeAllListeners("error")
      resolve(connection)
    })
    connection.once("error", () => resolve(undefined))
  })

/** Sends one request and gathers the answer's messages until the server closes the connection. */
const exchange = (connection, request) =>
  new Promise((resolve) => {
    const messages = []
    let buffered = ""
    connection.setEncoding("utf8")
    connection.on("data", (chunk) => {
      buffered += chunk
      let newline
      while ((newline = buffered.indexOf("\n")) >= 0) {
        try {
          messages.push(JSON.parse(buffered.slice(0, newline)))
        } catch {
          messages.push({ garbled: true })
        }
        buffered = buffered.slice(newline + 1)
      }
    })
    connection.on("error", () => {})
    connection.on("close", () => resolve(messages))
    connection.write(`${JSON.stringify({ v: PROTOCOL, ...request })}\n`)
  })

/**
 * Starts a server for `where` in the background (`program` is the bin's way to run svc-lint);
 * returns a promise that settles if that process ends (a server that could not listen, or one that
 * found another already serving).
 */
const start = async (where, program) => {
  const { spawn } = await import("node:child_process")
  const idle = Number(process.env.SVC_LINT_DAEMON_IDLE_MS ?? DEFAULT_IDLE_MS)
  const idleMs = Number.isFinite(idle) && idle > 0 ? Math.floor(idle) : DEFAULT_IDLE_MS
  const log = fs.openSync(where.log, "a", 0o600)
  let child
  try {
    child = spawn(process.execPath, [...program, SERVE_ARGUMENT, where.socket, String(idleMs)], {
      cwd: where.cwd,
      detached: true,
      stdio: ["ignore", log, log]
    })
  } finally {
    fs.closeSync(log)
  }
  child.unref()
  return await new Promise((resolve) => {
    child.once("exit", resolve)
    child.once("error", resolve)
  })
}

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Connects to the server, starting one when none answers; `"ended"` when the server started ended without
 * answering, `"timeout"` when none came up in time (the warning says which, so a client that waited out the start
 * timeout for a server that had already ended can be told from one that did not).
 */
const connectOrStart = async (where, program) => {
  const first = await connect(where.socket)
  if (first !== undefined) return first
  let ended = false
  void start(where, program).then(() => ended = true)
  const deadline = Date.now() + START_TIMEOUT_MS
  while (Date.now() < deadline) {
    await delay(10)
    const connection = await connect(where.socket)
    if (connection !== undefined) return connection
    // It ended without a server answering: it could not listen (its log says why).
    if (ended) return "ended"
  }
  return "timeout"
}

/**
 * Runs the bin's command line through the daemon. Returns the exit code when the daemon answered
 * (its output already written), or `undefined` when the caller must run svc-lint itself.
 *
 * @param {{ mode: "run" | "stop" | "status", args: string[], program: string[], programId: string }} options
 */
export const viaDaemon = async ({ args, mode, program, programId }) => {
  const where = locate(process.cwd(), programId)
  if (mode === "status") {
    const connection = where === undefined ? undefined : await connect(where.socket)
    const answer = connection === undefined ? [] : await exchange(connection, { status: true })
    const status = answer.find((m) => m.status !== undefined)?.status
    process.stdout.write(`${JSON.stringify({ running: status !== undefined, socket: where?.socket, ...status })}\n`)
    return 0
  }
  if (mode === "stop") {
    const connection = where === undefined ? undefined : await connect(where.socket)
    const answer = connection === undefined ? [] : await exchange(connection, { stop: true })
    const stopped = answer.find((m) => m.stopped !== undefined)?.stopped
    process.stderr.write(
      stopped === undefined
        ? "svc-lint: no resident linter runs for this folder\n"
        : `svc-lint: stopped the resident linter (pid ${stopped})\n`
    )
    return 0
  }
  if (where === undefined) return undefined
  const connection = await connectOrStart(where, program)
  if (typeof connection === "string") {
    const within = connection === "timeout" ? ` within ${START_TIMEOUT_MS / 1000} s` : ""
    warn(`the resident linter did not start${within} (see ${where.log}); linting in this process`)
    return undefined
  }
  const answer = await exchange(connection, {
    cwd: where.cwd,
    args,
    env: process.env,
    stdoutIsTTY: process.stdout.isTTY === true,
    stdinIsTTY: process.stdin.isTTY === true
  })
  const refused = answer.find((m) => m.refused !== undefined)
  const exit = answer.find((m) => typeof m.exit === "number")
  if (refused !== undefined || exit === undefined) {
    warn(
      refused === undefined
        ? "the resident linter stopped before answering; linting in this process"
        : `the resident linter refused the run (${refused.refused}); linting in this process`
    )
    return undefined
  }
  // In the order the run wrote them, consecutive writes to one stream as one.
  let stream
  let text = ""
  const flush = () => {
    if (text !== "") stream.write(text)
    text = ""
  }
  for (const message of answer) {
    const next = typeof message.o === "string"
      ? process.stdout
      : typeof message.e === "string"
      ? process.stderr
      : undefined
    if (next === undefined) continue
    if (next !== stream) flush()
    stream = next
    text += message.o ?? message.e
  }
  flush()
  return exit.exit
}
