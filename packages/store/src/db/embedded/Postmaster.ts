/**
 * The postmaster of an embedded cluster: whether it runs (its `postmaster.pid`, or its port when it was
 * started from another pid namespace, decision 0016), starting it on a port every client's URL names, and
 * stopping it so that no postgres process is left.
 */
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import type { Binaries, RunAs } from "./Binaries.ts"
import * as ClusterHome from "./ClusterHome.ts"
import { runAsync, runSync } from "./PgTool.ts"
import { isAlive, pidNamespace, sleepSync } from "./Processes.ts"

/**
 * The server was last started by a process of another pid namespace (a container sharing the data dir):
 * `postmaster.pid`'s pid names nothing here, or another process (decision 0016).
 */
const startedElsewhere = (dataDir: string) => {
  const recorded = ClusterHome.starterNamespace(dataDir)
  const ours = pidNamespace()
  return recorded !== undefined && ours !== undefined && recorded !== ours
}

interface Running {
  readonly pid: number
  readonly port: number
  /** Started from another pid namespace: whether it runs is told by its port, not its pid. */
  readonly elsewhere: boolean
}

/**
 * `postmaster.pid`: line 1 pid, line 4 port, line 8 status (`ready` once it accepts connections). A server
 * started from another pid namespace is reported while its file exists; callers ask its port.
 */
export const runningServer = (dataDir: string, pgdata: string): Running | undefined => {
  let lines: Array<string>
  try {
    lines = fs.readFileSync(path.join(pgdata, "postmaster.pid"), "utf8").split("\n")
  } catch {
    return undefined
  }
  const pid = Number(lines[0]?.trim())
  const port = Number(lines[3]?.trim())
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return undefined
  if (startedElsewhere(dataDir)) return { pid, port, elsewhere: true }
  return isAlive(pid) ? { pid, port, elsewhere: false } : undefined
}

const portIsFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = net.createServer()
    server.unref()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })

export const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The last lines of the server's log, joined for an error message or a log annotation. */
export const logTail = (home: ClusterHome.Home, lines = 3) => {
  try {
    return fs.readFileSync(home.log, "utf8").trim().split("\n").slice(-lines).join(" | ")
  } catch {
    return ""
  }
}

/**
 * Starts the cluster on `port` when given (a restart: every client's URL names it), else on the
 * port it last had when free, else on a free one. Returns the port.
 */
export const startCluster = async (
  bin: Binaries,
  home: ClusterHome.Home,
  as: RunAs,
  port: { readonly required: number } | { readonly preferred: number | undefined }
) => {
  if (as.uid !== undefined && as.gid !== undefined) {
    fs.closeSync(fs.openSync(home.log, "a"))
    fs.chownSync(home.log, as.uid, as.gid)
  }
  // A port picked free can be taken before the server binds it; try a few.
  for (let attempt = 1;; attempt++) {
    const chosen = "required" in port
      ? port.required
      : attempt === 1 && port.preferred !== undefined && (await portIsFree(port.preferred))
      ? port.preferred
      : await freePort()
    try {
      await runAsync("pg_ctl start", bin.pg_ctl, [
        "start",
        "-w",
        "-t",
        "60",
        "-D",
        home.pgdata,
        "-l",
        home.log,
        "-o",
        `-p ${chosen}`
      ], as)
      return chosen
    } catch (error) {
      if (attempt >= 3) {
        const tail = logTail(home)
        throw new Error(`${(error as Error).message}${tail ? ` (log: ${tail})` : ""}`, { cause: error })
      }
    }
  }
}

/** Stops the postmaster (fast shutdown) and waits until its process is gone. */
export const stopCluster = (bin: Binaries, dataDir: string, pgdata: string, as: RunAs) => {
  const running = runningServer(dataDir, pgdata)
  if (!running) return
  // Started from another pid namespace: pg_ctl would signal whatever its pid names here. The next client
  // started there finds the server running, joins it, and as its last client stops it (decision 0016).
  if (running.elsewhere) return
  try {
    runSync("pg_ctl stop", bin.pg_ctl, ["stop", "-D", pgdata, "-m", "fast", "-w", "-t", "60"], as)
  } catch {
    // Fall back to the signal pg_ctl would send: no client is left, the server must not outlive them.
    if (isAlive(running.pid)) process.kill(running.pid, "SIGINT")
  }
  // pg_ctl returns once postmaster.pid is gone, which the postmaster removes just before it exits;
  // wait for the process itself, so "stopped" means no postgres process is left.
  for (let waited = 0; waited < 30_000 && isAlive(running.pid); waited += 20) sleepSync(20)
}

/**
 * Waits for a live postmaster to accept connections (it may be recovering from a crash). One started from
 * another pid namespace is running when its port accepts; when it does not, it is treated as gone, and a start
 * is left to PostgreSQL's own interlock, which refuses a second postmaster while the first one's shared memory
 * is in use.
 */
export const awaitAccepting = async (dataDir: string, pgdata: string, deadlineMs = 60_000) => {
  const until = Date.now() + deadlineMs
  for (;;) {
    const running = runningServer(dataDir, pgdata)
    if (running === undefined) return undefined
    if (await accepts(running.port)) return running
    if (running.elsewhere) return undefined
    if (Date.now() > until) throw new Error(`PostgreSQL (pid ${running.pid}) did not accept connections in time`)
    await sleep(100)
  }
}

/** No postmaster runs: its pid is gone, or (started from another pid namespace) its port does not accept. */
export const isDown = async (dataDir: string, pgdata: string) => {
  const running = runningServer(dataDir, pgdata)
  if (running === undefined) return true
  return running.elsewhere && !(await accepts(running.port))
}
